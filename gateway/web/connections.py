"""Connections to the web entrypoint that no slow or idle client can use to lock others out.

uvicorn's own guard (`limit_concurrency`) counts sockets: a thousand clients that open a
connection and send nothing, or half a request, would have every other request answered 503,
for as long as they cared to stay. Here instead:

- a request's head (request line and headers) must be whole within `header_timeout` of its
  first byte, or of the connection's opening for its first request; else the connection is
  closed (with a 408 when part of a request had come);
- a request's body must be whole within `body_timeout` of its head;
- between requests a connection is kept `keep_alive` seconds (uvicorn's own timer);
- one client address (the peer IP) holds at most `per_address` connections, and the process
  at most `connections`: a connection beyond either is closed at once, never answered;
- what answers 503 is work, not sockets: at most `in_flight` requests are being served at once
  (streams included), and one more is answered 503 SERVER_BUSY with Retry-After.

A stream (WatchGame, StreamEvents) has sent its whole request before it starts, so none of the
timers runs while it is open.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections import Counter as Tally
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from google.protobuf import json_format
from google.rpc import error_details_pb2
from prometheus_client import Counter, Gauge
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from infra.grpc_errors import DOMAIN

DEFAULT_HEADER_TIMEOUT_SECONDS = 10.0
DEFAULT_BODY_TIMEOUT_SECONDS = 30.0
DEFAULT_KEEP_ALIVE_SECONDS = 30
DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256
DEFAULT_MAX_CONNECTIONS = 20_000
DEFAULT_MAX_REQUESTS_IN_FLIGHT = 2_000
#: How long a client is asked to wait when every slot for work is taken.
BUSY_RETRY_SECONDS = 1

#: Why a connection was closed by these limits (the label of CONNECTIONS_CLOSED).
HEADER_TIMEOUT = "HEADER_TIMEOUT"
BODY_TIMEOUT = "BODY_TIMEOUT"
TOO_MANY_FROM_ADDRESS = "TOO_MANY_FROM_ADDRESS"
TOO_MANY_CONNECTIONS = "TOO_MANY_CONNECTIONS"
SERVER_BUSY = "SERVER_BUSY"

CONNECTIONS_CLOSED = Counter(
    "shikoku_web_connections_closed",
    "Web connections closed by the entrypoint's connection limits, by reason: HEADER_TIMEOUT, "
    "BODY_TIMEOUT, TOO_MANY_FROM_ADDRESS, TOO_MANY_CONNECTIONS",
    ["reason"],
)
CONNECTIONS_OPEN = Gauge("shikoku_web_connections_open", "Web connections open now")
REQUESTS_IN_FLIGHT = Gauge(
    "shikoku_web_requests_in_flight", "Web requests being served now, streams included"
)
BUSY_REFUSALS = Counter(
    "shikoku_web_busy_refusals",
    "Web requests answered 503 SERVER_BUSY: SHIKOKU_WEB_MAX_REQUESTS_IN_FLIGHT were under way",
)

_TOO_SLOW = b"the request's headers did not come in time\n"
_CLOSE_HALF_SENT = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\n"
    b"content-length: %d\r\n"
    b"\r\n%s"
) % (len(_TOO_SLOW), _TOO_SLOW)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """Timeouts in seconds; a cap of 0 is no cap."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT_SECONDS
    body_timeout: float = DEFAULT_BODY_TIMEOUT_SECONDS
    keep_alive: int = DEFAULT_KEEP_ALIVE_SECONDS  # whole seconds, as uvicorn takes them
    per_address: int = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS
    connections: int = DEFAULT_MAX_CONNECTIONS
    in_flight: int = DEFAULT_MAX_REQUESTS_IN_FLIGHT


class AddressCounts:
    """Connections open now, per client address."""

    def __init__(self) -> None:
        self._open: Tally[str] = Tally()
        self.total = 0

    def of(self, address: str) -> int:
        return self._open[address]

    def add(self, address: str) -> None:
        self._open[address] += 1
        self.total += 1

    def remove(self, address: str) -> None:
        self._open[address] -= 1
        self.total -= 1
        if self._open[address] <= 0:
            del self._open[address]


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the timers and caps above. `limits` and `addresses`
    are set on the subclass `protocol_for` makes, one per server."""

    limits: ClassVar[ConnectionLimits]
    addresses: ClassVar[AddressCounts]

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._address: str | None = None  # counted in `addresses` while open
        self._read_timer: asyncio.TimerHandle | None = None
        self._reading = ""  # what the read timer waits for: "head", "body", or nothing
        self._heard = False  # bytes of the request being read have come

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        limits = self.limits
        refusal = None
        if limits.connections and len(self.connections) >= limits.connections:
            refusal = TOO_MANY_CONNECTIONS
        elif limits.per_address and self.addresses.of(address) >= limits.per_address:
            refusal = TOO_MANY_FROM_ADDRESS
        if refusal is not None:
            CONNECTIONS_CLOSED.labels(refusal).inc()
            transport.abort()  # never read, never answered: connection_lost follows
            return
        super().connection_made(transport)
        self._address = address
        self.addresses.add(address)
        self._expect("head")

    def connection_lost(self, exc: Exception | None) -> None:
        if self._address is None:
            return  # refused at once: nothing of it was set up
        self._expect("")
        self.addresses.remove(self._address)
        self._address = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._reading and self.conn.their_state is h11.IDLE:
            self._expect("head")  # a new request begins
        self._heard = True
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing():
            return
        self._follow()
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            self._expect("head")  # part of a pipelined request waits in the buffer

    def _follow(self) -> None:
        """Moves the read timer on with what has been read of the request."""
        state = self.conn.their_state
        if state is h11.IDLE:
            return  # its head is still to come: the timer set at its first byte runs
        if state is h11.SEND_BODY:
            if self._reading != "body":
                self._expect("body")
            return
        self._expect("")  # the whole request has been read (or the connection is over)

    def _expect(self, part: str) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None
        self._reading = part
        if part == "head":
            self._heard = False
            self._read_timer = self.loop.call_later(self.limits.header_timeout, self._too_slow)
        elif part == "body":
            self._read_timer = self.loop.call_later(self.limits.body_timeout, self._too_slow)

    def _too_slow(self) -> None:
        self._read_timer = None
        if self.transport.is_closing():
            return
        if self._reading == "head":
            CONNECTIONS_CLOSED.labels(HEADER_TIMEOUT).inc()
            if self._heard:  # no answer is under way: the request never began
                self.transport.write(_CLOSE_HALF_SENT)
        else:
            # The application may be answering: it sees the request's end as a disconnect.
            CONNECTIONS_CLOSED.labels(BODY_TIMEOUT).inc()
        self._reading = ""
        self.transport.close()


def protocol_for(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """A protocol class for one server (uvicorn.Config(http=...)): its own address counts."""
    addresses = AddressCounts()
    CONNECTIONS_OPEN.set_function(lambda: addresses.total)
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {"limits": limits, "addresses": addresses},
    )


def _busy_body(limit: int) -> bytes:
    """A Connect error (unavailable, with our ErrorInfo), which gRPC-Web clients also read as
    UNAVAILABLE from the 503 itself."""
    info = error_details_pb2.ErrorInfo(
        reason=SERVER_BUSY, domain=DOMAIN, metadata={"limit": str(limit)}
    )
    detail = {
        "type": info.DESCRIPTOR.full_name,
        "value": base64.b64encode(info.SerializeToString()).decode().rstrip("="),
        "debug": json_format.MessageToDict(info),
    }
    message = f"the server is serving {limit} requests already; retry in a moment"
    return json.dumps({"code": "unavailable", "message": message, "details": [detail]}).encode()


class InFlightLimit:
    """ASGI middleware: at most `limit` requests are being served at once (0: no cap); one
    more is answered 503 SERVER_BUSY, with Retry-After."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self._app = app
        self._limit = limit
        self.in_flight = 0
        self._busy = _busy_body(limit)
        REQUESTS_IN_FLIGHT.set_function(lambda: self.in_flight)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        if self._limit and self.in_flight >= self._limit:
            BUSY_REFUSALS.inc()
            await send(
                {
                    "type": "http.response.start",
                    "status": 503,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"retry-after", str(BUSY_RETRY_SECONDS).encode()),
                        (b"cache-control", b"no-store"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": self._busy})
            return
        self.in_flight += 1
        try:
            await self._app(scope, receive, send)
        finally:
            self.in_flight -= 1
