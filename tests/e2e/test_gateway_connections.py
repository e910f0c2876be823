"""What the gRPC gateway lets a connection hold (docs/operations.md, "Slow and idle clients"):
an idle connection is sent away after its idle time, one that never speaks HTTP/2 after the
handshake timeout, a connection carries so many calls at once and pings only so often; and
with thousands of slow connections held against both the gateway and the web entrypoint while
bot games play, fresh calls are answered within a second (`make soak`: SHIKOKU_SLOW_CLIENTS=
10000). Raw sockets speak HTTP/2 frames by hand here, to do what no gRPC client would."""

from __future__ import annotations

import contextlib
import io
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shikoku.v1 import lobby_pb2, lobby_pb2_grpc
from shikoku_dev.redis_server import free_port
from shikoku_dev.supervisor import ServiceProcess
from shikoku_sdk.channel import keyed_channel
from tests.e2e.api import System
from tests.e2e.launch import start_system, stop_system
from tests.e2e.observing import metrics_urls, scrape, total
from tests.e2e.slow_clients import KINDS, SlowClients, slow_clients_count
from tests.web.wire import api_headers, connect_json, connection

pytestmark = pytest.mark.e2e

IDLE_SECONDS = 3.0
HANDSHAKE_SECONDS = 1.0
STREAMS = 4
MIN_PING_SECONDS = 0.3
#: Slack for a loaded machine on top of each timeout (gRPC also draws the idle time up to 10%
#: short); the old gateway closed neither kind of connection, ever.
SLACK_SECONDS = 2.0
FRESH_ANSWER_SECONDS = 1.0

SETTINGS, PING, GOAWAY = 0x4, 0x6, 0x7
ACK = 0x1
ENHANCE_YOUR_CALM = 0xB


@pytest.fixture(scope="module")
def gateway(redis_url: str) -> Iterator[str]:
    """The gateway alone, with short connection limits: its own health service is
    all these tests call, so the services behind it need not run."""
    address = f"127.0.0.1:{free_port()}"
    env = dict(
        os.environ,
        REDIS_URL=redis_url,
        SHIKOKU_GATEWAY_ADDR=address,
        SHIKOKU_LOBBY_ADDR="127.0.0.1:1",
        SHIKOKU_RULES_ADDR="127.0.0.1:1",
        SHIKOKU_ROUTES_ADDR="127.0.0.1:1",
        SHIKOKU_GATEWAY_MAX_CONNECTION_IDLE_SECONDS=str(IDLE_SECONDS),
        SHIKOKU_GATEWAY_HANDSHAKE_TIMEOUT_SECONDS=str(HANDSHAKE_SECONDS),
        SHIKOKU_GATEWAY_MAX_CONCURRENT_STREAMS=str(STREAMS),
        SHIKOKU_GATEWAY_KEEPALIVE_MIN_PING_SECONDS=str(MIN_PING_SECONDS),
    )
    gateway = ServiceProcess("gateway", "gateway.server", env, log=io.StringIO())
    try:
        gateway.wait_listening()
        yield address
    finally:
        gateway.stop()


def frame(kind: int, flags: int = 0, payload: bytes = b"") -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + b"\0\0\0\0" + payload


class RawHttp2:
    """A TCP connection to the gateway, speaking HTTP/2 frames by hand."""

    def __init__(self, address: str, preface: bool = True) -> None:
        host, _, port = address.rpartition(":")
        self.opened = time.monotonic()
        self.sock = socket.create_connection((host, int(port)), timeout=15)
        self._buffer = b""
        self._speaks = preface
        if preface:
            self.sock.sendall(KINDS["preface"])

    def next_frame(self) -> tuple[int, int, bytes] | None:
        """The next frame from the server (its SETTINGS acknowledged, if this connection speaks
        HTTP/2), None once it closed."""
        while True:
            if len(self._buffer) >= 9:
                length = int.from_bytes(self._buffer[:3], "big")
                if len(self._buffer) >= 9 + length:
                    kind, flags = self._buffer[3], self._buffer[4]
                    payload = self._buffer[9 : 9 + length]
                    self._buffer = self._buffer[9 + length :]
                    if kind == SETTINGS and not flags & ACK and self._speaks:
                        self._send(frame(SETTINGS, ACK))
                    return kind, flags, payload
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                return None
            self._buffer += chunk

    def _send(self, data: bytes) -> None:
        """Sends, unless the server has already closed: what it sent before stays readable."""
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.sock.sendall(data)

    def settled(self) -> None:
        """Reads up to the server's SETTINGS and acknowledges it, so that nothing is left to
        send once the server starts sending the connection away."""
        while (received := self.next_frame()) is not None:
            kind, flags, _ = received
            if kind == SETTINGS and not flags & ACK:
                return
        raise AssertionError("closed before its SETTINGS")

    def goaway(self) -> tuple[float, int, bytes]:
        """Waits for the server's GOAWAY: (seconds since connecting, error code, debug text)."""
        while (received := self.next_frame()) is not None:
            kind, _, payload = received
            if kind == GOAWAY:
                code = int.from_bytes(payload[4:8], "big")
                return time.monotonic() - self.opened, code, payload[8:]
        raise AssertionError("closed without a GOAWAY")

    def closed(self) -> float:
        """Reads to the end: seconds since connecting until the server closed."""
        while self.next_frame() is not None:
            pass
        return time.monotonic() - self.opened

    def ping(self, data: bytes = b"12345678") -> None:
        self._send(frame(PING, 0, data))

    def close(self) -> None:
        self.sock.close()


def test_an_idle_connection_is_sent_away_after_its_idle_time(gateway: str) -> None:
    connection = RawHttp2(gateway)
    try:
        after, _, _ = connection.goaway()  # which a gRPC client reconnects after
        closed = connection.closed()
    finally:
        connection.close()
    assert IDLE_SECONDS * 0.85 <= after <= IDLE_SECONDS + SLACK_SECONDS
    assert closed <= IDLE_SECONDS + SLACK_SECONDS


def test_a_connection_that_never_speaks_http2_is_closed_after_the_handshake_timeout(
    gateway: str,
) -> None:
    silent = RawHttp2(gateway, preface=False)
    try:
        closed = silent.closed()
    finally:
        silent.close()
    # Well before the idle time: it is the handshake timeout that closed it.
    assert HANDSHAKE_SECONDS * 0.85 <= closed <= HANDSHAKE_SECONDS + SLACK_SECONDS
    assert closed < IDLE_SECONDS * 0.85


def test_pings_are_welcome_at_the_allowed_pace_and_a_flood_is_sent_away(gateway: str) -> None:
    polite = RawHttp2(gateway)
    try:
        for _ in range(4):  # without any call, every 0.6 s: no strike
            polite.ping()
            time.sleep(2 * MIN_PING_SECONDS)
        polite.sock.settimeout(0.3)
        goodbyes = []  # the idle time may come on a slow machine: only a ping strike counts
        try:
            while (received := polite.next_frame()) is not None:
                kind, _, payload = received
                if kind == GOAWAY:
                    goodbyes.append((int.from_bytes(payload[4:8], "big"), payload[8:]))
        except TimeoutError:
            pass
        assert not [code for code, _ in goodbyes if code == ENHANCE_YOUR_CALM], goodbyes
    finally:
        polite.close()

    flood = RawHttp2(gateway)
    try:
        flood.settled()
        for n in range(20):
            flood.ping(n.to_bytes(8, "big"))
        after, code, debug = flood.goaway()
    finally:
        flood.close()
    assert code == ENHANCE_YOUR_CALM and b"too_many_pings" in debug, (code, debug)
    assert after < IDLE_SECONDS * 0.85


def test_a_connection_carries_at_most_its_cap_of_calls_at_once(gateway: str) -> None:
    """Calls beyond the cap wait in the client for one of the connection's calls to end; on
    another connection, calls go on."""
    own_connection = [("grpc.use_local_subchannel_pool", 1)]  # channels share none
    crowded = grpc.insecure_channel(gateway, options=own_connection)
    other = grpc.insecure_channel(gateway, options=own_connection)
    try:
        health = health_pb2_grpc.HealthStub(crowded)
        watches = [health.Watch(health_pb2.HealthCheckRequest()) for _ in range(STREAMS)]
        for watch in watches:
            assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as waited:
            health.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
        assert waited.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        other_health = health_pb2_grpc.HealthStub(other)
        answer = other_health.Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        watches.pop().cancel()
        answer = health.Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        for watch in watches:
            watch.cancel()
    finally:
        crowded.close()
        other.close()


#: Slow clients on each entrypoint in `make test`; SHIKOKU_SLOW_CLIENTS sets more (`make soak`).
SMALL = 1_000


@pytest.fixture(scope="module")
def held_system(redis_url: str) -> Iterator[System]:
    """A system of its own with every connection timer long enough that all the slow clients
    stay connected while the test runs: on a loaded machine even a thousand of them (`make
    test`'s size) can take longer to open and check than the default timers, which then close
    some of them (as they should), and at full size opening 10,000 always does."""
    system = start_system(
        redis_url,
        SHIKOKU_RATE_PER_SECOND="10000",
        SHIKOKU_RATE_BURST="10000",
        SHIKOKU_WEB_HEADER_TIMEOUT_SECONDS="600",
        SHIKOKU_WEB_KEEP_ALIVE_SECONDS="600",
        SHIKOKU_GATEWAY_HANDSHAKE_TIMEOUT_SECONDS="600",
        SHIKOKU_GATEWAY_MAX_CONNECTION_IDLE_SECONDS="600",
    )
    yield system
    stop_system(system)


def wait_for_metric(system: System, process: str, name: str, least: int, timeout: float) -> None:
    [url] = metrics_urls(system.output)[process]
    deadline = time.monotonic() + timeout
    while (value := total(scrape(url), name)) < least:
        assert time.monotonic() < deadline, f"{process} {name} is {value}, not {least}"
        time.sleep(0.2)


def fresh_grpc_call(system: System) -> float:
    """A new SDK channel's ListTables: seconds from creating it to the answer."""
    started = time.monotonic()
    channel = keyed_channel(system.gateway, system.api_key)
    try:
        lobby_pb2_grpc.LobbyServiceStub(channel).ListTables(
            lobby_pb2.ListTablesRequest(), timeout=10
        )
    finally:
        channel.close()
    return time.monotonic() - started


def fresh_web_call(system: System) -> float:
    started = time.monotonic()
    conn = connection(system.web, timeout=10)
    try:
        answer = connect_json(conn, "LobbyService/ListTables", {}, api_headers(system.api_key))
    finally:
        conn.close()
    assert answer.status == 200, answer
    return time.monotonic() - started


def test_fresh_calls_are_answered_at_once_while_slow_clients_hold_both_entrypoints(
    held_system: System,
) -> None:
    """Thousands of idle and half-sent connections against the web entrypoint and as many raw
    idle ones (TCP only, or an HTTP/2 preface and nothing) against the gateway, held (at full
    size, while four bot games play): every fresh gRPC and web call is answered within a
    second, and the games end."""
    count = slow_clients_count(SMALL)
    games = 0 if count <= SMALL else 4
    system = held_system
    web_kinds = ("idle", "half", "keepalive")
    timeout = max(30.0, count / 100)
    with (
        SlowClients(system.web, count, web_kinds, first_source="127.1.0.1") as on_web,
        SlowClients(system.gateway, count, ("idle", "preface"), first_source="127.2.0.1") as on_gw,
    ):
        held = on_web.wait(count, timeout).held, on_gw.wait(count, timeout).held
        assert held == (count, count), f"held {held} of {count} each"
        # A connect returns once the kernel has queued the connection: wait until the servers
        # have taken them all, so that what is measured is their holding them, not a backlog.
        wait_for_metric(system, "web", "shikoku_web_connections_open", count, timeout)
        wait_for_metric(system, "gateway", "process_open_fds", count, timeout)
        env = dict(os.environ, SHIKOKU_API_KEY=system.api_key)
        bots = [
            subprocess.Popen(
                [sys.executable, "-m", "shikoku_sdk.bot", system.gateway, "2", "--seed", str(n)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for n in range(games)
        ]
        grpc_latencies: list[float] = []
        web_latencies: list[float] = []
        while any(bot.poll() is None for bot in bots) or len(grpc_latencies) < 10:
            grpc_latencies.append(fresh_grpc_call(system))
            web_latencies.append(fresh_web_call(system))
            time.sleep(0.1)
        held = on_web.report().held, on_gw.report().held
    outputs = [bot.communicate()[0] for bot in bots]
    for name, latencies in (("gateway", grpc_latencies), ("web", web_latencies)):
        print(
            f"\n{name}: {held} slow connections held (web, gateway); {len(latencies)} fresh "
            f"calls, p50 {statistics.median(latencies) * 1000:.1f} ms, "
            f"max {max(latencies) * 1000:.1f} ms"
        )
    assert [bot.returncode for bot in bots] == [0] * games, outputs
    assert max(grpc_latencies) < FRESH_ANSWER_SECONDS, grpc_latencies
    assert max(web_latencies) < FRESH_ANSWER_SECONDS, web_latencies
    assert held == (count, count), f"held {held} of {count} each at the end"
