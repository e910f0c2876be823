"""Slow and idle clients cannot lock anyone out of the web entrypoint: half-sent requests and
idle connections are closed in time, one address holds only so many connections, and with
thousands of them open a fresh client is still answered at once (docs/operations.md, "Slow and
idle clients"). Each web process here is `shikoku serve web` with the settings under test,
before the gateway of the tests' system; the slow clients are raw sockets from many loopback
addresses, in a process of their own (tests/e2e/slow_clients.py)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import statistics
import threading
import time
from collections.abc import Iterator

import pytest

from shikoku_dev.redis_server import free_port
from shikoku_dev.supervisor import ServiceProcess
from tests.e2e.api import Client, System, started_table
from tests.e2e.observing import scrape, total
from tests.e2e.slow_clients import SlowClients, slow_clients_count
from tests.web.wire import END_STREAM, api_headers, connect_json, connection, envelope, read_frame

pytestmark = pytest.mark.e2e

#: Slack for a loaded machine on top of each timeout; still far below the old behaviour (the
#: server closed nothing, ever, but idle keep-alive connections after 30 s).
SLACK_SECONDS = 2.0
#: How long a fresh client may wait for its answer with the slow clients holding on.
FRESH_ANSWER_SECONDS = 1.0


OPEN_GAUGE = "shikoku_web_connections_open"
#: Where each web process started here serves its metrics, by its address.
METRICS: dict[str, str] = {}


def start_web(web_api: System, **settings: str) -> Iterator[str]:
    """The web entrypoint with `settings`, before the tests' gateway: yields its address."""
    address = f"127.0.0.1:{free_port()}"
    METRICS[address] = f"127.0.0.1:{free_port()}"
    env = dict(
        os.environ,
        SHIKOKU_WEB_ADDR=address,
        SHIKOKU_GATEWAY_ADDR=web_api.gateway,
        SHIKOKU_WEB_METRICS_ADDR=METRICS[address],
        **settings,
    )
    web = ServiceProcess("web", "gateway.web.server", env, log=io.StringIO())
    try:
        web.wait_listening()
        yield address
    finally:
        web.stop()


@pytest.fixture(scope="module")
def short_timers(web_api: System) -> Iterator[str]:
    yield from start_web(
        web_api,
        SHIKOKU_WEB_HEADER_TIMEOUT_SECONDS="1",
        SHIKOKU_WEB_BODY_TIMEOUT_SECONDS="3",
        SHIKOKU_WEB_KEEP_ALIVE_SECONDS="1",
    )


@pytest.fixture(scope="module")
def capped(web_api: System) -> Iterator[str]:
    yield from start_web(
        web_api,
        SHIKOKU_WEB_HEADER_TIMEOUT_SECONDS="60",
        SHIKOKU_WEB_MAX_CONNECTIONS_PER_ADDRESS="4",
        SHIKOKU_WEB_MAX_CONNECTIONS="12",
        SHIKOKU_WEB_MAX_REQUESTS_IN_FLIGHT="2",
    )


@pytest.fixture(scope="module")
def roomy(web_api: System) -> Iterator[str]:
    """The default caps, and timers long enough that every slow client stays while measured."""
    yield from start_web(
        web_api, SHIKOKU_WEB_HEADER_TIMEOUT_SECONDS="120", SHIKOKU_WEB_KEEP_ALIVE_SECONDS="120"
    )


def open_socket(address: str, source: str = "127.0.0.1", timeout: float = 10.0) -> socket.socket:
    host, _, port = address.rpartition(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect((host, int(port)))
    return sock


def read_to_end(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset counts as closed);
    socket.timeout if it does not close it within the socket's timeout."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def read_head(sock: socket.socket) -> bytes:
    """An answer's status line and headers (and whatever came with them)."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {received!r}"
        received += chunk
    return received


def closed_after(sock: socket.socket, since: float) -> tuple[float, bytes]:
    """(seconds from `since` until the server closed `sock`, what it sent before)."""
    received = read_to_end(sock)
    return time.monotonic() - since, received


def get_healthz(address: str, source: str = "127.0.0.1") -> tuple[int, float]:
    """A fresh client's GET /healthz: (HTTP status, seconds from connecting to the answer)."""
    started = time.monotonic()
    sock = open_socket(address, source)
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: web.example\r\nConnection: close\r\n\r\n")
        answer = read_to_end(sock)
    finally:
        sock.close()
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
    return status, time.monotonic() - started


def connections_open(address: str) -> int:
    """The web process's own count of its open connections (its metrics)."""
    text = scrape(f"http://{METRICS[address]}/metrics")
    if f"# TYPE {OPEN_GAUGE} " not in text:
        raise ValueError(f"no {OPEN_GAUGE} in the web process's metrics")
    return int(total(text, OPEN_GAUGE))


def closed_for(address: str, reason: str) -> float:
    """How many connections the web process says it closed for `reason` (its metrics)."""
    text = scrape(f"http://{METRICS[address]}/metrics")
    return total(text, "shikoku_web_connections_closed_total", reason=reason)


def wait_accepted(address: str, count: int, timeout: float) -> None:
    """Until the server has accepted `count` connections (a client's connect returns once the
    kernel has queued it, before the server takes it), or `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    with contextlib.suppress(ValueError, OSError):  # a server without the metric: no wait
        while connections_open(address) < count and time.monotonic() < deadline:
            time.sleep(0.2)


def test_half_sent_requests_are_closed_within_the_header_timeout(short_timers: str) -> None:
    """A request line and one header, a connection with nothing, and a request trickling in
    a byte at a time: each closed about a second after it began, and counted."""
    before = closed_for(short_timers, "HEADER_TIMEOUT")
    started = time.monotonic()
    half = open_socket(short_timers)
    half.sendall(b"GET /healthz HTTP/1.1\r\nHost: web.example\r\n")
    silent = open_socket(short_timers)
    trickling = open_socket(short_timers)
    stop = threading.Event()

    def trickle() -> None:
        for byte in b"POST /shikoku.v1.LobbyService/ListTables HTTP/1.1\r\nX-Slow: " + b"a" * 100:
            if stop.wait(0.1):
                return
            try:
                trickling.send(bytes([byte]))
            except OSError:
                return

    threading.Thread(target=trickle, daemon=True).start()
    try:
        half_after, half_answer = closed_after(half, started)
        silent_after, silent_answer = closed_after(silent, started)
        trickling_after, _ = closed_after(trickling, started)
    finally:
        stop.set()
        for sock in (half, silent, trickling):
            sock.close()
    for after in (half_after, silent_after, trickling_after):
        assert 0.9 <= after <= 1 + SLACK_SECONDS, (half_after, silent_after, trickling_after)
    # Part of a request came: told why. Nothing came: nothing to answer.
    assert half_answer.startswith(b"HTTP/1.1 408 "), half_answer
    assert silent_answer == b""
    assert closed_for(short_timers, "HEADER_TIMEOUT") == before + 3


def test_a_body_that_never_comes_is_closed_within_the_body_timeout(short_timers: str) -> None:
    started = time.monotonic()
    sock = open_socket(short_timers)
    try:
        sock.sendall(
            b"POST /shikoku.v1.LobbyService/ListTables HTTP/1.1\r\nHost: web.example\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        after, _ = closed_after(sock, started)
    finally:
        sock.close()
    assert 2.9 <= after <= 3 + SLACK_SECONDS


def test_an_idle_keep_alive_connection_is_closed_after_the_keep_alive_timeout(
    short_timers: str,
) -> None:
    sock = open_socket(short_timers)
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: web.example\r\n\r\n")
        answer = b""
        while not answer.endswith(b"ok\n"):
            answer += sock.recv(65536)
        answered = time.monotonic()
        # Between requests only the keep-alive timer runs: a second request is welcome...
        time.sleep(0.5)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: web.example\r\n\r\n")
        answer = b""
        while not answer.endswith(b"ok\n"):
            answer += sock.recv(65536)
        answered = time.monotonic()
        # ...and after it, a second of nothing closes the connection.
        after, rest = closed_after(sock, answered)
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert rest == b""
    assert 0.9 <= after <= 1 + SLACK_SECONDS


def test_requests_under_way_outlive_the_header_and_keep_alive_timeouts(
    short_timers: str, web_api: System, grpc_client: Client
) -> None:
    """A body sent slowly (after whole headers) and a stream lasting several seconds are
    answered in full: the header timer stops at the headers, the keep-alive one runs only
    between requests."""
    body = b"{}" + b" " * 38
    sock = open_socket(short_timers)
    try:
        sock.sendall(
            b"POST /shikoku.v1.LobbyService/ListTables HTTP/1.1\r\nHost: web.example\r\n"
            b"Content-Type: application/json\r\nConnect-Protocol-Version: 1\r\n"
            + f"X-Api-Key: {web_api.api_key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        )
        for at in range(0, len(body), 2):  # 2 s in all: twice the header timeout
            time.sleep(0.1)
            sock.sendall(body[at : at + 2])
        answer = read_head(sock)
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 200 "), answer

    game_id, _, host = started_table(grpc_client)
    conn = connection(short_timers, timeout=10)
    try:
        headers = {
            **api_headers(web_api.api_key, token=host),
            "content-type": "application/connect+json",
        }
        request = json.dumps({"gameId": game_id, "heartbeatSeconds": 1}).encode()
        conn.request("POST", "/shikoku.v1.GameService/WatchGame", envelope(request), headers)
        response = conn.getresponse()
        opened = time.monotonic()
        heartbeats = 0
        while heartbeats < 2:  # about 2 s: past both timers of this server (1 s)
            flags, payload = read_frame(response)
            assert not flags & END_STREAM, payload
            heartbeats += "heartbeat" in json.loads(payload)
        assert time.monotonic() - opened >= 1.5
    finally:
        conn.close()


def test_one_address_holds_at_most_its_cap_while_others_are_served(capped: str) -> None:
    held = [open_socket(capped, "127.0.0.2") for _ in range(4)]
    try:
        time.sleep(0.2)  # all four accepted and counted
        started = time.monotonic()
        extra = open_socket(capped, "127.0.0.2")
        after, answer = closed_after(extra, started)
        extra.close()
        assert answer == b"", "closed, not answered"
        assert after < 1.0, "closed at once (its header timeout is 60 s)"
        assert closed_for(capped, "TOO_MANY_FROM_ADDRESS") >= 1
        assert get_healthz(capped, "127.0.0.3")[0] == 200
        # One of the four goes: the address may open another.
        held.pop().close()
        deadline = time.monotonic() + 5
        while get_healthz(capped, "127.0.0.2")[0] != 200:
            assert time.monotonic() < deadline, "the address's count was not given back"
    finally:
        for sock in held:
            sock.close()


def test_the_process_holds_at_most_its_cap_of_connections(capped: str) -> None:
    sources = [f"127.3.0.{n}" for n in range(1, 4)]
    held = [open_socket(capped, source) for source in sources for _ in range(4)]  # 12: the cap
    try:
        time.sleep(0.2)
        started = time.monotonic()
        extra = open_socket(capped, "127.3.0.9")
        after, answer = closed_after(extra, started)
        extra.close()
        assert answer == b"", "closed, not answered 503"
        assert after < 1.0
        assert closed_for(capped, "TOO_MANY_CONNECTIONS") >= 1
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 5
    while get_healthz(capped, "127.3.0.9")[0] != 200:
        assert time.monotonic() < deadline


def test_work_in_flight_not_sockets_is_answered_503(capped: str, web_api: System) -> None:
    """Two requests being served (their bodies still coming) take both slots: a third request
    is answered 503 SERVER_BUSY with Retry-After (and CORS headers), and once they are done,
    served again."""
    slow = []
    for _ in range(2):
        sock = open_socket(capped, "127.0.0.4")
        sock.sendall(
            b"POST /shikoku.v1.LobbyService/ListTables HTTP/1.1\r\nHost: web.example\r\n"
            b"Content-Type: application/json\r\nConnect-Protocol-Version: 1\r\n"
            + f"X-Api-Key: {web_api.api_key}\r\nContent-Length: 4\r\n\r\n{{".encode()
        )
        slow.append(sock)
    try:
        time.sleep(0.3)  # both under way
        conn = connection(capped)
        page = "https://play.example"
        headers = {**api_headers(web_api.api_key), "origin": page}
        answer = connect_json(conn, "LobbyService/ListTables", {}, headers)
        conn.close()
        assert answer.status == 503
        assert answer.headers["retry-after"] == "1"
        # Readable by the page that asked, like every other refusal.
        assert answer.headers.get("access-control-allow-origin") in ("*", page)
        error = answer.json()
        assert error["code"] == "unavailable"
        assert error["details"][0]["debug"]["reason"] == "SERVER_BUSY"
        assert error["details"][0]["type"] == "google.rpc.ErrorInfo"
        for sock in slow:
            sock.sendall(b"}  ")
            assert read_head(sock).startswith(b"HTTP/1.1 200 ")
    finally:
        for sock in slow:
            sock.close()
    deadline = time.monotonic() + 5
    while get_healthz(capped)[0] != 200:
        assert time.monotonic() < deadline


def test_fresh_clients_are_answered_at_once_while_slow_clients_hold_thousands(
    roomy: str, web_api: System
) -> None:
    """Thousands of idle, half-sent, idle keep-alive and HTTP/2 preface-only connections from
    many addresses (each under the per-address cap): a fresh client's GET /healthz and Connect
    call are answered within a second, every time."""
    count = slow_clients_count(2_000)
    kinds = ("idle", "half", "keepalive", "preface")
    with SlowClients(roomy, count, kinds, first_source="127.1.0.1", per_source=50) as slow:
        slow.wait(count, timeout=max(30.0, count / 100))
        wait_accepted(roomy, count, timeout=max(30.0, count / 100))
        health, calls = [], []
        for _ in range(10):
            status, seconds = get_healthz(roomy)
            health.append((status, seconds))
            started = time.monotonic()
            conn = connection(roomy, timeout=10)
            answer = connect_json(conn, "LobbyService/ListTables", {}, api_headers(web_api.api_key))
            conn.close()
            calls.append((answer.status, time.monotonic() - started))
        held = slow.report().held
    latencies = [seconds for _, seconds in health + calls]
    print(
        f"\nweb: {held} slow connections held; fresh calls p50 "
        f"{statistics.median(latencies) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms"
    )
    assert [status for status, _ in health] == [200] * 10
    assert [status for status, _ in calls] == [200] * 10
    assert max(latencies) < FRESH_ANSWER_SECONDS, (health, calls)
    assert held == count, f"{held} of the {count} slow clients were still connected"
