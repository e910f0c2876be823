"""One HTTP connection: read the request, answer it (a page, a unary call, or a stream of
messages), close. The gRPC calls go to the public gateway, which applies its own
authentication, limits and errors to them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from http import HTTPStatus

import grpc
from google.rpc import status_pb2

from gateway.web.cors import Cors
from gateway.web.errors import (
    bridge_status,
    code_of,
    http_status,
    retry_after_seconds,
    status_document,
    status_of,
)
from gateway.web.messages import dumps, parse, to_json
from gateway.web.methods import Method
from gateway.web.pages import Page
from gateway.web.protocol import (
    HttpError,
    Request,
    Response,
    chunk,
    head,
    read_body,
    read_head,
    write_response,
)

log = logging.getLogger(__name__)

UNARY_DEADLINE_SECONDS = 10.0
# How long a stream may take to produce its first message before the 200 is sent: errors at
# the start (unknown game, refused credential, rate limit) come sooner and get an HTTP status.
FIRST_MESSAGE_SECONDS = 0.5
# After the response, what the client still sends is read and dropped for a moment, so that
# closing does not reset the connection before the client has read the response.
LINGER_SECONDS = 2.0
LINGER_BYTES = 2 * 1024 * 1024
FORWARDED_HEADERS = ("authorization", "x-api-key")
API_METHODS = "POST, OPTIONS"
PAGE_METHODS = "GET, OPTIONS"

_BRIDGE_CODES = {
    HTTPStatus.NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    HTTPStatus.METHOD_NOT_ALLOWED: grpc.StatusCode.UNIMPLEMENTED,
    HTTPStatus.REQUEST_TIMEOUT: grpc.StatusCode.DEADLINE_EXCEEDED,
    HTTPStatus.REQUEST_ENTITY_TOO_LARGE: grpc.StatusCode.RESOURCE_EXHAUSTED,
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: grpc.StatusCode.RESOURCE_EXHAUSTED,
    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: grpc.StatusCode.UNIMPLEMENTED,
    HTTPStatus.SERVICE_UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
}
# Open connections (each a task; a watching browser holds one for as long as it watches).
DEFAULT_MAX_CONNECTIONS = 1000
_JSON = ("Content-Type", "application/json")
_NDJSON = ("Content-Type", "application/x-ndjson")
_NO_STORE = ("Cache-Control", "no-store")


class Bridge:
    def __init__(
        self,
        channel: grpc.aio.Channel,
        methods: Mapping[str, Method],
        cors: Cors,
        pages: Mapping[str, Page],
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        self._channel = channel
        self._methods = methods
        self._cors = cors
        self._pages = pages
        self._max_connections = max_connections
        self._connections: set[asyncio.Task[None]] = set()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """The asyncio.start_server callback."""
        task = asyncio.current_task()
        assert task is not None
        if len(self._connections) >= self._max_connections:
            await self._refuse(writer, _too_many(), None)
            await _close(reader, writer, linger=False)
            return
        self._connections.add(task)
        request: Request | None = None
        linger = True
        try:
            request = await read_head(reader, _peer_host(writer))
            if request is not None:
                await self._answer(request, reader, writer)
        except HttpError as refusal:
            origin = request.header("origin") if request else None
            await self._refuse(writer, refusal, origin)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # The bridge is stopping. Not re-raised: asyncio (3.11) logs a connection task that
            # ends cancelled as an error.
            linger = False
        except Exception:
            log.exception("answering %s failed", request.target if request else "a request")
        finally:
            self._connections.discard(task)
            await _close(reader, writer, linger)

    async def close_connections(self, grace_seconds: float) -> None:
        """Lets answers under way finish for `grace_seconds`, then cuts the rest (streams)."""
        if self._connections:
            await asyncio.wait(set(self._connections), timeout=grace_seconds)
        for task in set(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.wait(set(self._connections), timeout=grace_seconds)

    async def _answer(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        origin = request.header("origin")
        path = request.path
        if path == "/healthz":
            await self._static(request, writer, Page(b"ok\n", (("Content-Type", "text/plain"),)))
        elif (page := self._pages.get(path)) is not None:
            await self._static(request, writer, page)
        elif (method := self._methods.get(path)) is None:
            raise HttpError(HTTPStatus.NOT_FOUND, f"no method or page at {path}", "NO_SUCH_PATH")
        elif request.method == "OPTIONS":
            preflight = self._cors.preflight(origin, API_METHODS)
            await write_response(writer, Response(HTTPStatus.NO_CONTENT, headers=preflight))
        elif request.method != "POST":
            raise _not_allowed(request, API_METHODS)
        elif await read_body(reader, request):
            if method.streaming:
                await self._stream(method, request, reader, writer)
            else:
                await self._unary(method, request, writer)

    async def _static(self, request: Request, writer: asyncio.StreamWriter, page: Page) -> None:
        if request.method == "OPTIONS":
            headers = self._cors.preflight(request.header("origin"), PAGE_METHODS)
            await write_response(writer, Response(HTTPStatus.NO_CONTENT, headers=headers))
        elif request.method == "GET":
            await write_response(writer, Response(HTTPStatus.OK, page.body, list(page.headers)))
        else:
            raise _not_allowed(request, PAGE_METHODS)

    async def _unary(self, method: Method, request: Request, writer: asyncio.StreamWriter) -> None:
        origin = request.header("origin")
        message = parse(request.body, method.request)
        try:
            response = await method.unary(self._channel)(
                message, metadata=_metadata(request), timeout=UNARY_DEADLINE_SECONDS
            )
        except grpc.aio.AioRpcError as error:
            await self._failed(writer, status_of(error), origin)
            return
        headers = [_JSON, _NO_STORE, *self._cors.headers(origin)]
        await write_response(writer, Response(HTTPStatus.OK, to_json(response), headers))

    async def _stream(
        self,
        method: Method,
        request: Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        origin = request.header("origin")
        message = parse(request.body, method.request)
        call = method.stream(self._channel)(message, metadata=_metadata(request))
        gone = asyncio.ensure_future(_hung_up(reader))
        reading = asyncio.ensure_future(call.read())
        try:
            await asyncio.wait(
                (reading, gone), timeout=FIRST_MESSAGE_SECONDS, return_when=asyncio.FIRST_COMPLETED
            )
            if gone.done():
                return
            if reading.done() and isinstance(error := reading.exception(), grpc.aio.AioRpcError):
                await self._failed(writer, status_of(error), origin)
                return
            headers = [_NDJSON, _NO_STORE, ("Transfer-Encoding", "chunked")]
            writer.write(head(HTTPStatus.OK, [*headers, *self._cors.headers(origin)]))
            await writer.drain()
            while True:
                await asyncio.wait((reading, gone), return_when=asyncio.FIRST_COMPLETED)
                if gone.done():
                    return
                try:
                    item = reading.result()
                except grpc.aio.AioRpcError as error:
                    line = dumps({"error": status_document(status_of(error))})
                    writer.write(chunk(line + b"\n"))
                    break
                if item is grpc.aio.EOF:  # type: ignore[attr-defined]  # grpc-stubs lags grpc.aio
                    break
                writer.write(chunk(to_json(item) + b"\n"))
                await writer.drain()
                reading = asyncio.ensure_future(call.read())
            writer.write(chunk(b""))
            await writer.drain()
        finally:
            # The browser left, the stream ended or the bridge is stopping: the upstream call
            # must not outlive the connection.
            call.cancel()
            for task in (reading, gone):
                task.cancel()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await task

    async def _failed(
        self, writer: asyncio.StreamWriter, status: status_pb2.Status, origin: str | None
    ) -> None:
        headers = [_JSON, _NO_STORE, *self._cors.headers(origin)]
        if (retry_after := retry_after_seconds(status)) is not None:
            headers.append(("Retry-After", str(retry_after)))
        body = dumps(status_document(status))
        await write_response(writer, Response(http_status(code_of(status)), body, headers))

    async def _refuse(
        self, writer: asyncio.StreamWriter, refusal: HttpError, origin: str | None
    ) -> None:
        code = _BRIDGE_CODES.get(refusal.status, grpc.StatusCode.INVALID_ARGUMENT)
        status = bridge_status(code, refusal.message, refusal.reason)
        headers = [_JSON, _NO_STORE, *refusal.headers, *self._cors.headers(origin)]
        body = dumps(status_document(status))
        with contextlib.suppress(ConnectionError):
            await write_response(writer, Response(refusal.status, body, headers))


def _too_many() -> HttpError:
    refusal = HttpError(
        HTTPStatus.SERVICE_UNAVAILABLE,
        "the bridge has as many connections open as it serves; retry shortly",
        "TOO_MANY_CONNECTIONS",
    )
    refusal.headers.append(("Retry-After", "1"))
    return refusal


def _not_allowed(request: Request, allowed: str) -> HttpError:
    refusal = HttpError(
        HTTPStatus.METHOD_NOT_ALLOWED,
        f"{request.method} is not allowed here; use {allowed}",
        "METHOD_NOT_ALLOWED",
    )
    refusal.headers.append(("Allow", allowed))
    return refusal


def _metadata(request: Request) -> tuple[tuple[str, str], ...]:
    """What the gateway sees of the browser: its credentials, and its address (replacing any
    X-Forwarded-For it sent, which it could have made up)."""
    forwarded = [
        (name, request.headers[name]) for name in FORWARDED_HEADERS if name in request.headers
    ]
    if any(not value.isascii() for _, value in forwarded):
        raise HttpError(HTTPStatus.BAD_REQUEST, "credentials are ASCII", "BAD_HEADER")
    return (*forwarded, ("x-forwarded-for", request.peer))


def _peer_host(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else ""


async def _hung_up(reader: asyncio.StreamReader) -> None:
    """Returns when the client closes its side; anything it sends meanwhile is dropped."""
    with contextlib.suppress(ConnectionError):
        while await reader.read(64 * 1024):
            pass


async def _close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, linger: bool) -> None:
    try:
        if writer.can_write_eof():
            writer.write_eof()
        async with asyncio.timeout(LINGER_SECONDS if linger else 0):
            dropped = 0
            while dropped < LINGER_BYTES and (data := await reader.read(64 * 1024)):
                dropped += len(data)
    except (TimeoutError, ConnectionError, OSError):
        pass
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()
