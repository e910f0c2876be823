"""The Connect and gRPC-Web protocols as a browser puts them on the wire, written out with
http.client for the tests: so that what the web entrypoint sends is checked against the
protocols themselves, not only against the Connect library's own client."""

from __future__ import annotations

import base64
import http.client
import json
import struct
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

END_STREAM = 0x02
GRPC_WEB_TRAILERS = 0x80


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def connection(address: str, timeout: float = 15.0) -> http.client.HTTPConnection:
    host, _, port = address.rpartition(":")
    return http.client.HTTPConnection(host, int(port), timeout=timeout)


def post(
    conn: http.client.HTTPConnection,
    path: str,
    body: bytes,
    headers: dict[str, str],
) -> Answer:
    conn.request("POST", path, body=body, headers=headers)
    response = conn.getresponse()
    return Answer(response.status, _headers(response), response.read())


def _headers(response: http.client.HTTPResponse) -> dict[str, str]:
    return {name.lower(): value for name, value in response.getheaders()}


def api_headers(api_key: str = "", token: str = "", **extra: str) -> dict[str, str]:
    headers = {"connect-protocol-version": "1", **extra}
    if api_key:
        headers["x-api-key"] = api_key
    if token:
        headers["authorization"] = f"Bearer {token}"
    return headers


def connect_json(
    conn: http.client.HTTPConnection, method: str, document: Any, headers: dict[str, str]
) -> Answer:
    """A unary Connect call with a JSON body, as plain `fetch` makes it."""
    body = json.dumps(document).encode()
    return post(
        conn, f"/shikoku.v1.{method}", body, {**headers, "content-type": "application/json"}
    )


def envelope(payload: bytes, flags: int = 0) -> bytes:
    return struct.pack(">BI", flags, len(payload)) + payload


def frames(body: bytes) -> list[tuple[int, bytes]]:
    """The enveloped messages of a streaming body: (flags, payload)."""
    found: list[tuple[int, bytes]] = []
    at = 0
    while at < len(body):
        flags, length = struct.unpack(">BI", body[at : at + 5])
        found.append((flags, body[at + 5 : at + 5 + length]))
        at += 5 + length
    assert at == len(body), "a frame was cut short"
    return found


def read_frame(response: http.client.HTTPResponse) -> tuple[int, bytes]:
    """The next enveloped message of a response still streaming (blocks until it is there)."""
    head = response.read(5)
    assert len(head) == 5, "the stream ended without its end message"
    flags, length = struct.unpack(">BI", head)
    return flags, response.read(length)


@dataclass
class GrpcWebAnswer:
    status: int
    headers: dict[str, str]
    messages: list[bytes]
    trailers: dict[str, str] = field(default_factory=dict)

    @property
    def grpc_status(self) -> int:
        return int(self.trailers.get("grpc-status", self.headers.get("grpc-status", "-1")))

    def rich_status(self) -> status_pb2.Status:
        value = self.trailers.get("grpc-status-details-bin") or self.headers.get(
            "grpc-status-details-bin", ""
        )
        return status_pb2.Status.FromString(base64.b64decode(value + "=" * (-len(value) % 4)))


def grpc_web(
    conn: http.client.HTTPConnection,
    method: str,
    request: Message,
    headers: dict[str, str],
) -> GrpcWebAnswer:
    """A gRPC-Web call (binary), as a browser's grpc-web client makes it."""
    sent = {
        **{k: v for k, v in headers.items() if k != "connect-protocol-version"},
        "content-type": "application/grpc-web+proto",
        "x-grpc-web": "1",
    }
    answer = post(conn, f"/shikoku.v1.{method}", envelope(request.SerializeToString()), sent)
    messages: list[bytes] = []
    trailers: dict[str, str] = {}
    for flags, payload in frames(answer.body):
        if flags & GRPC_WEB_TRAILERS:
            for line in payload.decode().split("\r\n"):
                if line:
                    name, _, value = line.partition(":")
                    trailers[name.strip().lower()] = value.strip()
        else:
            messages.append(payload)
    return GrpcWebAnswer(answer.status, answer.headers, messages, trailers)


def error_info(error: dict[str, Any]) -> dict[str, Any]:
    """The ErrorInfo of a Connect error in JSON, decoded from its `value` (what a Connect
    client reads), and checked against the `debug` form the server also sends."""
    detail = next(d for d in error["details"] if d["type"] == "google.rpc.ErrorInfo")
    value = detail["value"]
    info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(value + "=" * (-len(value) % 4)))
    decoded = {"reason": info.reason, "domain": info.domain, "metadata": dict(info.metadata)}
    shown = {"metadata": {}, **detail["debug"]}
    assert shown == decoded, "the debug form differs from the detail itself"
    return decoded


def detail_types(error: dict[str, Any]) -> list[str]:
    return [detail["type"] for detail in error.get("details", [])]
