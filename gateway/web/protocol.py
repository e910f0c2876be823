"""Just enough HTTP/1.1 for the bridge: reading one request within limits, writing responses.

One request per connection: every response says `Connection: close`. Anything the parser does
not accept raises `HttpError`, answered with its status before the connection is closed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus

LINE_LIMIT = 8 * 1024  # request line, and each header line
HEADER_BYTES_LIMIT = 32 * 1024
HEADER_COUNT_LIMIT = 100
BODY_LIMIT = 1024 * 1024
HEADER_SECONDS = 10.0  # for the request line and headers, all together
BODY_SECONDS = 30.0

_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_REQUEST_LINE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (/[!-~]*) (HTTP/\d\.\d)\r?\n")
_FIELD_VALUE = re.compile(rb"[\t\x20-\x7e\x80-\xff]*")


class HttpError(Exception):
    """A request the bridge refuses before calling anyone: `status`, and why, for people."""

    def __init__(self, status: HTTPStatus, message: str, reason: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason
        self.headers: list[tuple[str, str]] = []


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]  # names lower-cased; repeated fields joined with ", "
    body: bytes = b""
    peer: str = ""

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    def header(self, name: str) -> str | None:
        return self.headers.get(name)


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)


async def read_head(reader: asyncio.StreamReader, peer: str) -> Request | None:
    """The request line and headers of the next request (its body is read by `read_body`), or
    None when the client closed the connection before sending one."""
    try:
        async with asyncio.timeout(HEADER_SECONDS):
            method, target, headers = await _read_head(reader)
    except TimeoutError:
        raise HttpError(
            HTTPStatus.REQUEST_TIMEOUT, "request head too slow", "SLOW_REQUEST"
        ) from None
    except _ClientGone:
        return None
    return Request(method, target, headers, peer=peer)


async def read_body(reader: asyncio.StreamReader, request: Request) -> bool:
    """Reads the body the headers announce into `request`; False if the client hung up."""
    length = _content_length(request.headers)
    if not length:
        return True
    try:
        async with asyncio.timeout(BODY_SECONDS):
            request.body = await reader.readexactly(length)
    except TimeoutError:
        raise HttpError(
            HTTPStatus.REQUEST_TIMEOUT, "request body too slow", "SLOW_REQUEST"
        ) from None
    except asyncio.IncompleteReadError:
        return False
    return True


class _ClientGone(Exception):
    pass


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str]]:
    line = await _read_line(reader)
    if line is None:
        raise _ClientGone
    match = _REQUEST_LINE.fullmatch(line)
    if match is None:
        raise HttpError(HTTPStatus.BAD_REQUEST, "malformed request line", "BAD_REQUEST_LINE")
    method, target, version = (part.decode("ascii") for part in match.groups())
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise HttpError(
            HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, f"{version} is not spoken here", "BAD_VERSION"
        )
    headers: dict[str, str] = {}
    total = count = 0
    while True:
        line = await _read_line(reader)
        if line is None:
            raise _ClientGone
        if line in (b"\r\n", b"\n"):
            return method, target, headers
        total += len(line)
        count += 1
        if total > HEADER_BYTES_LIMIT or count > HEADER_COUNT_LIMIT:
            raise HttpError(
                HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                "too many header bytes",
                "HEADERS_TOO_BIG",
            )
        name, value = _header_field(line)
        headers[name] = f"{headers[name]}, {value}" if name in headers else value


async def _read_line(reader: asyncio.StreamReader) -> bytes | None:
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as partial:
        if partial.partial:
            raise HttpError(HTTPStatus.BAD_REQUEST, "incomplete request", "BAD_REQUEST") from None
        return None
    except asyncio.LimitOverrunError:
        raise HttpError(
            HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
            f"a line of the request head is over {LINE_LIMIT} bytes",
            "LINE_TOO_LONG",
        ) from None


def _header_field(line: bytes) -> tuple[str, str]:
    name, colon, value = line.rstrip(b"\r\n").partition(b":")
    # No whitespace before the colon, no obsolete line folding (RFC 9112 5.1, 5.2).
    if not colon or _TOKEN.fullmatch(name) is None:
        raise HttpError(HTTPStatus.BAD_REQUEST, "malformed header field", "BAD_HEADER")
    value = value.strip(b" \t")
    if _FIELD_VALUE.fullmatch(value) is None:
        raise HttpError(HTTPStatus.BAD_REQUEST, "control character in a header", "BAD_HEADER")
    return name.decode("ascii").lower(), value.decode("latin-1")


def _content_length(headers: Mapping[str, str]) -> int:
    if "transfer-encoding" in headers:
        raise HttpError(
            HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length", "LENGTH_REQUIRED"
        )
    raw = headers.get("content-length")
    if raw is None:
        return 0
    # A repeated Content-Length arrives joined ("5, 5"): all copies must agree.
    values = {part.strip() for part in raw.split(",")}
    if len(values) != 1 or not (value := values.pop()).isdigit() or len(value) > 12:
        raise HttpError(HTTPStatus.BAD_REQUEST, "malformed Content-Length", "BAD_CONTENT_LENGTH")
    length = int(value)
    if length > BODY_LIMIT:
        raise HttpError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"request bodies are at most {BODY_LIMIT} bytes",
            "REQUEST_TOO_LARGE",
        )
    return length


def phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:  # 499, which nginx named
        return "Client Closed Request" if status == 499 else "Error"


def head(status: int, headers: Iterable[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} {phrase(status)}", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join([*lines, "Connection: close", "", ""])).encode("latin-1")


async def write_response(writer: asyncio.StreamWriter, response: Response) -> None:
    headers = list(response.headers)
    if response.status != HTTPStatus.NO_CONTENT:
        headers.append(("Content-Length", str(len(response.body))))
    writer.write(head(response.status, headers) + response.body)
    await writer.drain()


def chunk(data: bytes) -> bytes:
    """One chunk of a `Transfer-Encoding: chunked` body (an empty `data` ends the body)."""
    return b"%x\r\n%s\r\n" % (len(data), data)
