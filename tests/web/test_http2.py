"""The web entrypoint over cleartext HTTP/2, beside HTTP/1.1 on the same port: curl by prior
knowledge and by upgrade gets Connect answers, gRPC-Web and Connect streams share one
connection, and the slow-client guard holds for HTTP/2 as it does for HTTP/1.1 (a connection
that sends its preface and nothing more, a stream whose body never ends, an idle connection, the
caps on connections and on work in flight, and many streams on one connection). Real processes
on loopback: the tests' system, and `shikoku serve web` with the settings under test."""

from __future__ import annotations

import json
import struct
import subprocess
import time
from collections.abc import Iterator

import h2.settings
import pytest

from shikoku.v1 import lobby_pb2
from tests.e2e.api import Client, System, started_table
from tests.web.conftest import STREAMS_PER_CALLER
from tests.web.h2wire import H2Client
from tests.web.test_slow_clients import (
    SLACK_SECONDS,
    closed_for,
    get_healthz,
    start_web,
)
from tests.web.wire import END_STREAM, api_headers, envelope, frames

pytestmark = pytest.mark.e2e

GET_TITLE = "/shikoku.v1.TitleService/GetTitle"
LIST_TABLES = "/shikoku.v1.LobbyService/ListTables"
#: MAX_CONCURRENT_STREAMS the server announces (gateway.web.connections).
STREAMS_PER_CONNECTION = 100


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
        SHIKOKU_WEB_MAX_REQUESTS_IN_FLIGHT="2",
    )


def curl(*args: str) -> list[str]:
    """curl's output lines (it is told to write what it needs with -w)."""
    done = subprocess.run(
        ["curl", "--silent", "--show-error", "--max-time", "20", *args],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def connect_json_args(api_key: str) -> list[str]:
    return [
        "--header",
        "content-type: application/json",
        "--header",
        "connect-protocol-version: 1",
        "--header",
        f"x-api-key: {api_key}",
    ]


def json_headers(api_key: str) -> dict[str, str]:
    return {**api_headers(api_key), "content-type": "application/json"}


def slow_streams(client: H2Client, count: int, api_key: str) -> list[int]:
    """`count` ListTables calls on `client`'s connection whose bodies are still coming (the
    first byte of `{}` sent), given time to be under way."""
    streams = [
        client.request(LIST_TABLES, json_headers(api_key), b"{", end=False) for _ in range(count)
    ]
    time.sleep(0.3)
    return streams


def finish(client: H2Client, streams: list[int]) -> list[int]:
    """Sends the rest of each slow stream's body; the statuses they are answered with."""
    for stream in streams:
        client.conn.send_data(stream, b"}", end_stream=True)
    client.flush()
    return [client.answer(stream).status for stream in streams]


# Serving.


def test_curl_with_prior_knowledge_gets_a_connect_answer_over_http2(web_api: System) -> None:
    *body, version = curl(
        "--http2-prior-knowledge",
        *connect_json_args(web_api.api_key),
        "--data",
        '{"title": "1889"}',
        "--write-out",
        "\n%{http_version} %{response_code}",
        f"http://{web_api.web}{GET_TITLE}",
    )
    assert version == "2 200"
    title = json.loads("\n".join(body))
    assert title["name"] == "1889"
    assert title["hexes"], "the board's hexes"


def test_curl_upgrades_to_http2_and_calls_on_the_upgraded_connection(web_api: System) -> None:
    """A request without a body is upgraded (101, then HTTP/2); the next call, with a body,
    goes on that same connection over HTTP/2. A first request with a body is answered over
    HTTP/1.1, as hypercorn declines to upgrade it."""
    out = "%{http_version} %{response_code} %{num_connects}\n"
    upgraded, called = curl(
        "--http2",
        "--output",
        "/dev/null",
        "--write-out",
        out,
        f"http://{web_api.web}/healthz",
        "--next",
        "--http2",
        *connect_json_args(web_api.api_key),
        "--data",
        "{}",
        "--output",
        "/dev/null",
        "--write-out",
        out,
        f"http://{web_api.web}{GET_TITLE}",
    )
    assert upgraded == "2 200 1"
    assert called == "2 200 0", "the upgraded connection carried the call"
    (with_body,) = curl(
        "--http2",
        *connect_json_args(web_api.api_key),
        "--data",
        "{}",
        "--output",
        "/dev/null",
        "--write-out",
        "%{http_version} %{response_code}",
        f"http://{web_api.web}{GET_TITLE}",
    )
    assert with_body == "1.1 200"


def test_connect_and_grpc_web_streams_and_calls_share_one_http2_connection(
    web_api: System, grpc_client: Client
) -> None:
    """A Connect stream (WatchGame, heartbeats) stays open while a gRPC-Web call and a Connect
    JSON call are answered on other streams of the same connection."""
    game_id, _, host = started_table(grpc_client)
    client = H2Client(web_api.web)
    try:
        watch_headers = {
            **api_headers(web_api.api_key, token=host),
            "content-type": "application/connect+json",
        }
        watch = json.dumps({"gameId": game_id, "heartbeatSeconds": 1}).encode()
        watching = client.request(
            "/shikoku.v1.GameService/WatchGame", watch_headers, envelope(watch)
        )
        grpc_web_headers = {
            "x-api-key": web_api.api_key,
            "content-type": "application/grpc-web+proto",
            "x-grpc-web": "1",
        }
        listing = lobby_pb2.ListTablesRequest().SerializeToString()
        listed = client.request(LIST_TABLES, grpc_web_headers, envelope(listing))
        titled = client.request(GET_TITLE, json_headers(web_api.api_key), b"{}")

        answer = client.answer(listed)
        assert answer.status == 200
        assert answer.headers["content-type"].startswith("application/grpc-web")
        assert answer.grpc_web_trailers()["grpc-status"] == "0"
        assert json.loads(client.answer(titled).body)["name"] == "1889"

        deadline = time.monotonic() + 10
        kinds: list[str] = []
        while "heartbeat" not in kinds:
            assert time.monotonic() < deadline, kinds
            client.read()
            body = client.answers[watching].body
            whole = _whole_frames(body)
            kinds = ["event" if "event" in json.loads(p) else "heartbeat" for _, p in whole]
        assert watching not in client.ended, "the watch is still open"
        assert not any(flags & END_STREAM for flags, _ in _whole_frames(body))
    finally:
        client.close()


def _whole_frames(body: bytes) -> list[tuple[int, bytes]]:
    """The enveloped messages of a body still coming, up to the last whole one."""
    at = 0
    while at + 5 <= len(body):
        length = struct.unpack(">I", body[at + 1 : at + 5])[0]
        if at + 5 + length > len(body):
            break
        at += 5 + length
    return frames(body[:at])


def _first_message(client: H2Client, stream: int) -> tuple[int, dict[str, object]]:
    """The first enveloped message of a Connect JSON stream: (flags, document)."""
    deadline = time.monotonic() + 10
    while True:
        answer = client.answers.get(stream)
        whole = _whole_frames(answer.body) if answer else []
        if whole:
            flags, payload = whole[0]
            return flags, json.loads(payload)
        assert time.monotonic() < deadline and not client.closed, "no first message"
        client.read()


def test_a_reset_http2_stream_releases_its_stream_upstream(
    web_api: System, grpc_client: Client
) -> None:
    """As a browser that goes away over HTTP/1.1 (tests/web/test_streams.py): the gateway lets
    a caller hold only a few streams, so a stream reset by the client whose gateway stream
    were kept would soon have the caller refused; here the streams are reset one after
    another on one connection, which stays open."""
    game_id, tokens, _ = started_table(grpc_client)
    headers = {
        **api_headers(web_api.api_key, token=tokens[0]),
        "content-type": "application/connect+json",
    }
    request = envelope(json.dumps({"gameId": game_id}).encode())
    path = "/shikoku.v1.GameService/StreamEvents"
    client = H2Client(web_api.web)
    try:
        for _ in range(3 * STREAMS_PER_CALLER):
            stream = client.request(path, headers, request)
            flags, document = _first_message(client, stream)
            assert not flags & END_STREAM, document
            client.conn.reset_stream(stream)
            client.flush()
        held: list[int] = []
        deadline = time.monotonic() + 10
        while len(held) < STREAMS_PER_CALLER:
            stream = client.request(path, headers, request)
            flags, document = _first_message(client, stream)
            if not flags & END_STREAM:
                held.append(stream)
                continue
            assert time.monotonic() < deadline, f"streams not released upstream: {document}"
            time.sleep(0.2)
        # The quota is real: one more stream than it allows is refused.
        flags, document = _first_message(client, client.request(path, headers, request))
        assert flags & END_STREAM
        assert "TOO_MANY_STREAMS" in json.dumps(document)
    finally:
        client.close()


# The slow-client guard on HTTP/2.


def test_an_http2_connection_that_sends_only_its_preface_is_closed_in_time(
    short_timers: str,
) -> None:
    before = closed_for(short_timers, "HEADER_TIMEOUT")
    started = time.monotonic()
    client = H2Client(short_timers)  # the preface and settings, then nothing
    try:
        after = client.closed_after(started)
    finally:
        client.close()
    assert 0.9 <= after <= 1 + SLACK_SECONDS
    assert closed_for(short_timers, "HEADER_TIMEOUT") == before + 1


def test_an_http2_stream_whose_body_never_ends_is_closed_within_the_body_timeout(
    short_timers: str, web_api: System
) -> None:
    before = closed_for(short_timers, "BODY_TIMEOUT")
    client = H2Client(short_timers)
    try:
        client.request(LIST_TABLES, json_headers(web_api.api_key), b"{", end=False)
        started = time.monotonic()
        after = client.closed_after(started)
    finally:
        client.close()
    assert 2.9 <= after <= 3 + SLACK_SECONDS
    assert closed_for(short_timers, "BODY_TIMEOUT") == before + 1


def test_an_idle_http2_connection_is_closed_after_the_keep_alive_timeout(
    short_timers: str,
) -> None:
    client = H2Client(short_timers)
    try:
        answer = client.answer(client.request("/healthz", {}, method="GET"))
        assert (answer.status, answer.body) == (200, b"ok\n")
        after = client.closed_after(time.monotonic())
    finally:
        client.close()
    assert after <= 1 + SLACK_SECONDS


def test_an_http2_stream_outlives_the_header_and_keep_alive_timeouts(
    short_timers: str, web_api: System, grpc_client: Client
) -> None:
    game_id, _, host = started_table(grpc_client)
    client = H2Client(short_timers)
    try:
        headers = {
            **api_headers(web_api.api_key, token=host),
            "content-type": "application/connect+json",
        }
        request = json.dumps({"gameId": game_id, "heartbeatSeconds": 1}).encode()
        watching = client.request("/shikoku.v1.GameService/WatchGame", headers, envelope(request))
        opened = time.monotonic()
        heartbeats = 0
        while heartbeats < 2:  # about 2 s: past both timers of this server (1 s)
            client.read()
            assert not client.closed and watching not in client.ended
            answer = client.answers.get(watching)
            whole = _whole_frames(answer.body if answer else b"")
            heartbeats = sum("heartbeat" in json.loads(payload) for _, payload in whole)
        assert time.monotonic() - opened >= 1.5
    finally:
        client.close()


def test_http2_connections_count_against_the_per_address_cap(capped: str) -> None:
    held = [H2Client(capped, "127.0.0.6") for _ in range(4)]
    try:
        for client in held:
            client.server_settings()  # accepted and counted
        before = closed_for(capped, "TOO_MANY_FROM_ADDRESS")
        started = time.monotonic()
        extra = H2Client(capped, "127.0.0.6")
        after = extra.closed_after(started)
        extra.close()
        assert after < 1.0, "closed at once (its header timeout is 60 s)"
        assert closed_for(capped, "TOO_MANY_FROM_ADDRESS") == before + 1
        assert get_healthz(capped, "127.0.0.7")[0] == 200
    finally:
        for client in held:
            client.close()


def test_http2_streams_are_work_in_flight_and_only_work_is_answered_503(
    capped: str, web_api: System
) -> None:
    """Two streams of one connection, their bodies still coming, take both slots: a third
    request is answered 503 SERVER_BUSY; once their bodies come, both are answered."""
    client = H2Client(capped, "127.0.0.8")
    try:
        slow = slow_streams(client, 2, web_api.api_key)
        busy = client.answer(client.request(GET_TITLE, json_headers(web_api.api_key), b"{}"))
        assert busy.status == 503
        assert busy.headers["retry-after"] == "1"
        assert json.loads(busy.body)["details"][0]["debug"]["reason"] == "SERVER_BUSY"
        assert finish(client, slow) == [200, 200]
    finally:
        client.close()


def test_many_streams_on_one_connection_lock_no_one_out(web_api: System) -> None:
    """The server announces at most 100 streams a connection; with 100 open on one connection,
    their bodies still coming, a fresh client is answered at once."""
    client = H2Client(web_api.web, "127.0.0.9")
    try:
        settings = client.server_settings()
        assert settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] == STREAMS_PER_CONNECTION
        streams = slow_streams(client, STREAMS_PER_CONNECTION, web_api.api_key)
        for _ in range(5):
            status, seconds = get_healthz(web_api.web)
            assert status == 200
            assert seconds < 1.0
        fresh = H2Client(web_api.web, "127.0.0.10")
        try:
            answer = fresh.answer(fresh.request(GET_TITLE, json_headers(web_api.api_key), b"{}"))
            assert answer.status == 200
        finally:
            fresh.close()
        assert set(finish(client, streams)) == {200}
    finally:
        client.close()


@pytest.fixture(scope="module")
def address_capped(web_api: System) -> Iterator[str]:
    yield from start_web(
        web_api,
        SHIKOKU_WEB_HEADER_TIMEOUT_SECONDS="60",
        SHIKOKU_WEB_MAX_CONNECTIONS_PER_ADDRESS="2",
    )


def test_one_address_takes_no_more_work_in_flight_than_its_connections_would(
    address_capped: str, web_api: System
) -> None:
    """Over HTTP/2 one connection carries many streams: one address's requests in flight are
    capped as its connections are (2 here), a third answered 429 ADDRESS_BUSY, while another
    address is served; once the two end, the address is served again."""
    client = H2Client(address_capped, "127.0.0.11")
    try:
        slow = slow_streams(client, 2, web_api.api_key)
        refused = client.answer(client.request(GET_TITLE, json_headers(web_api.api_key), b"{}"))
        assert refused.status == 429
        assert refused.headers["retry-after"] == "1"
        error = json.loads(refused.body)
        assert error["code"] == "resource_exhausted"
        assert error["details"][0]["debug"]["reason"] == "ADDRESS_BUSY"
        other = H2Client(address_capped, "127.0.0.12")
        try:
            answer = other.answer(other.request(GET_TITLE, json_headers(web_api.api_key), b"{}"))
            assert answer.status == 200
        finally:
            other.close()
        assert finish(client, slow) == [200, 200]
        again = client.answer(client.request(GET_TITLE, json_headers(web_api.api_key), b"{}"))
        assert again.status == 200
    finally:
        client.close()
