"""Connections to the web entrypoint that no slow or idle client can use to lock others out,
on HTTP/1.1 and HTTP/2 alike (hypercorn serves both on one port: gateway.web.server).

A cap on sockets alone (uvicorn's `limit_concurrency`, say) would let a thousand clients that
open a connection and send nothing, or half a request, have every other request answered 503,
for as long as they cared to stay. Here instead:

- a request's head (request line and headers) must be whole within `header_timeout` of its
  first byte, or of the connection's opening for its first request (HTTP/2's preface and
  settings included); else the connection is closed (with a 408 when part of an HTTP/1.1
  request had come);
- a request's body must be whole within `body_timeout` of its head (on HTTP/2, each stream's);
  else the connection is closed;
- between requests a connection is kept `keep_alive` seconds (hypercorn's own timer, which
  on HTTP/2 runs while no stream is open);
- one HTTP/2 connection carries at most `streams` requests at once (its MAX_CONCURRENT_STREAMS);
- one client address (the peer IP) holds at most `per_address` connections, and the process
  at most `connections`: a connection beyond either is closed at once, never answered;
- one client address has at most `per_address` requests in flight (on HTTP/1.1 its connections
  already bound that; on HTTP/2, where one connection carries many streams, this does), and one
  more is answered 429 ADDRESS_BUSY with Retry-After, so that no one address takes the slots of
  `in_flight`;
- what answers 503 is work, not sockets: at most `in_flight` requests are being served at once
  (streams included, HTTP/2 streams each count), and one more is answered 503 SERVER_BUSY with
  Retry-After.

A stream (WatchGame, StreamEvents) has sent its whole request before it starts, so none of the
timers runs while it is open.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections import Counter as Tally
from dataclasses import dataclass

import h11
from google.protobuf import json_format
from google.rpc import error_details_pb2
from h2.stream import H2Stream, StreamState
from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.asyncio.worker_context import WorkerContext
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.protocol.h2 import H2Protocol
from hypercorn.protocol.h11 import H11Protocol
from hypercorn.typing import AppWrapper
from prometheus_client import Counter, Gauge
from starlette.types import ASGIApp, Receive, Scope, Send

from infra.grpc_errors import DOMAIN

DEFAULT_HEADER_TIMEOUT_SECONDS = 10.0
DEFAULT_BODY_TIMEOUT_SECONDS = 30.0
DEFAULT_KEEP_ALIVE_SECONDS = 30
DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256
DEFAULT_MAX_CONNECTIONS = 20_000
#: HTTP/2's recommended least for MAX_CONCURRENT_STREAMS (RFC 9113, 6.5.2).
DEFAULT_MAX_STREAMS_PER_CONNECTION = 100
DEFAULT_MAX_REQUESTS_IN_FLIGHT = 2_000
#: How long a client is asked to wait when every slot for work is taken.
BUSY_RETRY_SECONDS = 1

#: Why a connection was closed by these limits (the label of CONNECTIONS_CLOSED).
HEADER_TIMEOUT = "HEADER_TIMEOUT"
BODY_TIMEOUT = "BODY_TIMEOUT"
TOO_MANY_FROM_ADDRESS = "TOO_MANY_FROM_ADDRESS"
TOO_MANY_CONNECTIONS = "TOO_MANY_CONNECTIONS"
SERVER_BUSY = "SERVER_BUSY"
ADDRESS_BUSY = "ADDRESS_BUSY"

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
ADDRESS_BUSY_REFUSALS = Counter(
    "shikoku_web_address_busy_refusals",
    "Web requests answered 429 ADDRESS_BUSY: their client address had "
    "SHIKOKU_WEB_MAX_CONNECTIONS_PER_ADDRESS requests under way",
)

#: What one read of a connection takes at most.
_READ_BYTES = 2**16

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
    keep_alive: int = DEFAULT_KEEP_ALIVE_SECONDS  # whole seconds
    per_address: int = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS
    connections: int = DEFAULT_MAX_CONNECTIONS
    in_flight: int = DEFAULT_MAX_REQUESTS_IN_FLIGHT
    streams: int = DEFAULT_MAX_STREAMS_PER_CONNECTION


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


class ConnectionGuard:
    """The caps and timers of one server, shared by its connections."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.addresses = AddressCounts()
        CONNECTIONS_OPEN.set_function(lambda: self.addresses.total)

    def refusal(self, address: str) -> str | None:
        """Why a new connection from `address` is refused, or None if it is taken."""
        limits = self.limits
        if limits.connections and self.addresses.total >= limits.connections:
            return TOO_MANY_CONNECTIONS
        if limits.per_address and self.addresses.of(address) >= limits.per_address:
            return TOO_MANY_FROM_ADDRESS
        return None

    def hypercorn_config(self) -> Config:
        """What hypercorn itself enforces: the keep-alive timer (between requests, either
        protocol) and the streams of one HTTP/2 connection."""
        config = Config()
        config.keep_alive_timeout = self.limits.keep_alive
        config.h2_max_concurrent_streams = self.limits.streams
        return config


def _receiving(stream: H2Stream | None) -> bool:
    """Whether the client has yet to end this HTTP/2 stream's request (its body)."""
    return stream is not None and stream.state_machine.state in _REMOTE_OPEN


_REMOTE_OPEN = frozenset({StreamState.OPEN, StreamState.HALF_CLOSED_LOCAL})


class GuardedConnection(TCPServer):
    """One connection served by hypercorn (HTTP/1.1, or HTTP/2 by prior knowledge or upgrade),
    under the caps and timers above. hypercorn tells its connection when a request begins and
    when the last one under way ends (`Updated`); the state of the request being read is its
    protocol's (h11's for HTTP/1.1, h2's streams for HTTP/2), looked at after each read.

    The header timer runs from the connection's opening until its first request, and on
    HTTP/1.1 from the first byte of each later one; on HTTP/2, where a request's headers come
    whole in one frame, hypercorn's keep-alive timer alone runs between requests."""

    def __init__(
        self,
        guard: ConnectionGuard,
        app: AppWrapper,
        loop: asyncio.AbstractEventLoop,
        config: Config,
        context: WorkerContext,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        super().__init__(app, loop, config, context, {}, reader, writer)
        self._guard = guard
        self._limits = guard.limits
        self._head_timer: asyncio.TimerHandle | None = None
        self._heard = False  # bytes of the request whose head is awaited have come
        self._idle = True  # no request under way
        self._body_timers: dict[int, asyncio.TimerHandle] = {}  # by stream (1 on HTTP/1.1)
        self._opened = loop.time()

    async def run(self) -> None:
        peer = self.writer.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        refusal = self._guard.refusal(address)
        if refusal is not None:
            CONNECTIONS_CLOSED.labels(refusal).inc()
            self.writer.transport.abort()  # never read, never answered
            return
        self._guard.addresses.add(address)
        try:
            await super().run()
        finally:
            self._stop_head_timer()
            self._time_bodies(set())
            self._guard.addresses.remove(address)

    async def _read_data(self) -> None:
        # Until the first request, the header timer stands for hypercorn's keep-alive one.
        await self.idle_task.stop()
        self._expect_head(heard=False)
        while not self.reader.at_eof():
            try:
                data = await self.reader.read(_READ_BYTES)
            except (ConnectionError, OSError):
                break
            if data and self._next_head_begins():
                await self.idle_task.stop()
                self._expect_head(heard=True)
            self._heard = self._heard or bool(data)
            await self.protocol.handle(RawData(data))
            self._follow()
        # The client has gone: hypercorn's keep-alive timer would hold the connection (and its
        # place in the counts) until it ran out.
        await self.idle_task.stop()
        self._stop_head_timer()
        self._time_bodies(set())
        await self.protocol.handle(Closed())

    async def protocol_send(self, event: Event) -> None:
        if isinstance(event, Updated):
            self._idle = event.idle
            if not event.idle:
                self._stop_head_timer()
        await super().protocol_send(event)
        if isinstance(event, Updated):
            if event.idle and self._pipelined():
                await self.idle_task.stop()  # part of the next request is read already
                self._expect_head(heard=True)
            self._follow()

    # What is being read.

    def _h11(self) -> h11.Connection | None:
        protocol = self.protocol.protocol
        if isinstance(protocol, H11Protocol) and isinstance(protocol.connection, h11.Connection):
            return protocol.connection
        return None

    def _next_head_begins(self) -> bool:
        """Whether bytes now coming begin an HTTP/1.1 request."""
        connection = self._h11()
        return (
            self._idle
            and self._head_timer is None
            and connection is not None
            and connection.their_state is h11.IDLE
        )

    def _pipelined(self) -> bool:
        connection = self._h11()
        return connection is not None and bool(connection.trailing_data[0])

    def _bodies_coming(self) -> set[int]:
        """The requests (streams) whose bodies are still to come."""
        protocol = self.protocol.protocol
        if isinstance(protocol, H2Protocol):
            streams = protocol.connection.streams
            return {number for number in protocol.streams if _receiving(streams.get(number))}
        connection = self._h11()
        return {1} if connection is not None and connection.their_state is h11.SEND_BODY else set()

    def _follow(self) -> None:
        protocol = self.protocol.protocol
        if isinstance(protocol, H2Protocol) and not protocol.keep_alive_requests:
            # HTTP/2 by prior knowledge: its preface reads as a request to hypercorn, which
            # stops its idle timer; the first real request is still to come.
            self._idle = True
            if self._head_timer is None:
                left = self._opened + self._limits.header_timeout - self.loop.time()
                self._head_timer = self.loop.call_later(max(left, 0), self._head_too_slow)
        self._time_bodies(self._bodies_coming())

    # The timers.

    def _expect_head(self, heard: bool) -> None:
        self._stop_head_timer()
        self._heard = heard
        self._head_timer = self.loop.call_later(self._limits.header_timeout, self._head_too_slow)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _time_bodies(self, coming: set[int]) -> None:
        for number in [number for number in self._body_timers if number not in coming]:
            self._body_timers.pop(number).cancel()
        for number in coming - self._body_timers.keys():
            self._body_timers[number] = self.loop.call_later(
                self._limits.body_timeout, self._body_too_slow, number
            )

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if not self._idle or self.writer.is_closing():
            return  # the request came meanwhile
        CONNECTIONS_CLOSED.labels(HEADER_TIMEOUT).inc()
        if self._heard and self._h11() is not None:  # no answer is under way: none began
            self.writer.write(_CLOSE_HALF_SENT)
        self.writer.close()

    def _body_too_slow(self, number: int) -> None:
        self._body_timers.pop(number, None)
        if number not in self._bodies_coming() or self.writer.is_closing():
            return
        # The application may be answering: it sees the request's end as a disconnect. On
        # HTTP/2 the connection's other streams end with it, as they would on HTTP/1.1's
        # one-request-at-a-time connection.
        CONNECTIONS_CLOSED.labels(BODY_TIMEOUT).inc()
        self.writer.close()


def _busy_body(limit: int, reason: str = SERVER_BUSY, code: str = "unavailable") -> bytes:
    """A Connect error (`code`, with our ErrorInfo), which gRPC-Web clients also read from the
    HTTP status itself (503: UNAVAILABLE, 429: RESOURCE_EXHAUSTED)."""
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata={"limit": str(limit)})
    detail = {
        "type": info.DESCRIPTOR.full_name,
        "value": base64.b64encode(info.SerializeToString()).decode().rstrip("="),
        "debug": json_format.MessageToDict(info),
    }
    if reason == SERVER_BUSY:
        message = f"the server is serving {limit} requests already; retry in a moment"
    else:
        message = f"this address has {limit} requests in flight already; retry in a moment"
    return json.dumps({"code": code, "message": message, "details": [detail]}).encode()


class InFlightLimit:
    """ASGI middleware: at most `limit` requests are being served at once (0: no cap), one
    more answered 503 SERVER_BUSY; and at most `per_address` of them from one client address
    (0: no cap), one more answered 429 ADDRESS_BUSY; both with Retry-After."""

    def __init__(self, app: ASGIApp, limit: int, per_address: int = 0) -> None:
        self._app = app
        self._limit = limit
        self._per_address = per_address
        self.in_flight = 0
        self._by_address: Tally[str] = Tally()
        self._busy = _busy_body(limit)
        self._address_busy = _busy_body(per_address, ADDRESS_BUSY, "resource_exhausted")
        REQUESTS_IN_FLIGHT.set_function(lambda: self.in_flight)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        if self._limit and self.in_flight >= self._limit:
            BUSY_REFUSALS.inc()
            await _refuse(send, 503, self._busy)
            return
        address = (scope.get("client") or ("", 0))[0]
        if self._per_address and self._by_address[address] >= self._per_address:
            ADDRESS_BUSY_REFUSALS.inc()
            await _refuse(send, 429, self._address_busy)
            return
        self.in_flight += 1
        self._by_address[address] += 1
        try:
            await self._app(scope, receive, send)
        finally:
            self.in_flight -= 1
            self._by_address[address] -= 1
            if not self._by_address[address]:
                del self._by_address[address]


async def _refuse(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"retry-after", str(BUSY_RETRY_SECONDS).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
