"""The web bridge (gateway/web/) over real sockets: a real bridge in front of a real gRPC server
on loopback, whose small fake servicers answer, fail and stream as each test needs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from gateway.web import bridge as bridge_module
from gateway.web import protocol
from gateway.web.bridge import Bridge
from gateway.web.cors import Cors
from gateway.web.methods import public_methods
from gateway.web.pages import demo_pages
from gateway.web.server import start
from infra.grpc_errors import to_status
from infra.grpc_types import Context
from infra.rejection import Kind, Rejected
from shikoku.v1 import game_pb2, lobby_pb2

pytestmark = pytest.mark.client

ALLOWED_ORIGIN = "https://play.example"
BIG_VERSION = 2**40  # beyond what a JSON number keeps exactly in every client


@dataclass
class Calls:
    metadata: list[dict[str, str]] = field(default_factory=list)
    stream_cancelled: asyncio.Event = field(default_factory=asyncio.Event)


class FakeLobby:
    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    async def CreateTable(
        self, request: lobby_pb2.CreateTableRequest, context: Context
    ) -> lobby_pb2.CreateTableResponse:
        self.calls.metadata.append(
            {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}
        )
        if request.seat_count == 9:
            rejection = Rejected(
                "INVALID_SEAT_COUNT", "2 to 6 seats", Kind.INVALID_ARGUMENT, {"field": "seat_count"}
            )
            await context.abort_with_status(to_status(rejection))  # type: ignore[attr-defined]
        if request.seat_count == 7:
            limited = Rejected(
                "RATE_LIMITED", "slow down", Kind.RESOURCE_EXHAUSTED, retry_after=timedelta(0, 1.2)
            )
            await context.abort_with_status(to_status(limited))  # type: ignore[attr-defined]
        if request.seat_count == 5:
            await asyncio.sleep(5)  # past the bridge's deadline
        table = lobby_pb2.Table(
            table_id="t-1",
            seat_count=request.seat_count,
            options=request.options,
            status=lobby_pb2.TABLE_STATUS_OPEN,
        )
        return lobby_pb2.CreateTableResponse(table=table, host_token="t-1~host")


class FakeGame:
    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    async def GetState(
        self, request: game_pb2.GetStateRequest, context: Context
    ) -> game_pb2.GameState:
        state = struct_pb2.Struct()
        state.update({"phase": "2", "round": {"type": "stock_round", "number": 1}})
        return game_pb2.GameState(
            game_id=request.game_id,
            version=BIG_VERSION + request.version,
            acting_seats=[2, 3],
            state=state,
        )

    async def StreamEvents(
        self, request: game_pb2.StreamEventsRequest, context: Context
    ) -> AsyncIterator[game_pb2.GameEvent]:
        if request.game_id == "missing":
            missing = Rejected("GAME_NOT_FOUND", "no game missing", Kind.NOT_FOUND)
            await context.abort_with_status(to_status(missing))  # type: ignore[attr-defined]
        for version in range(request.from_version, request.from_version + 3):
            yield game_pb2.GameEvent(game_id=request.game_id, version=version, type="Passed")
        if request.game_id == "fails":
            down = Rejected("STORE_UNAVAILABLE", "the store is down", Kind.UNAVAILABLE)
            await context.abort_with_status(to_status(down))  # type: ignore[attr-defined]
        if request.game_id == "forever":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.calls.stream_cancelled.set()
                raise


@dataclass
class Web:
    host: str
    port: int
    calls: Calls


@pytest.fixture(scope="module")
async def web() -> AsyncIterator[Web]:
    calls = Calls()
    upstream = grpc.aio.server()
    lobby, game = FakeLobby(calls), FakeGame(calls)
    # Only these methods exist upstream; any other is UNIMPLEMENTED there.
    upstream.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "shikoku.v1.LobbyService",
                {
                    "CreateTable": grpc.unary_unary_rpc_method_handler(
                        lobby.CreateTable,
                        lobby_pb2.CreateTableRequest.FromString,
                        lobby_pb2.CreateTableResponse.SerializeToString,
                    )
                },
            ),
            grpc.method_handlers_generic_handler(
                "shikoku.v1.GameService",
                {
                    "GetState": grpc.unary_unary_rpc_method_handler(
                        game.GetState,
                        game_pb2.GetStateRequest.FromString,
                        game_pb2.GameState.SerializeToString,
                    ),
                    "StreamEvents": grpc.unary_stream_rpc_method_handler(
                        game.StreamEvents,
                        game_pb2.StreamEventsRequest.FromString,
                        game_pb2.GameEvent.SerializeToString,
                    ),
                },
            ),
        )
    )
    port = upstream.add_insecure_port("127.0.0.1:0")
    await upstream.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    bridge = Bridge(channel, public_methods(), Cors(frozenset({ALLOWED_ORIGIN})), demo_pages())
    server, listening = await start(bridge, "127.0.0.1:0")
    host, _, bound = listening.rpartition(":")
    yield Web(host, int(bound), calls)
    server.close()
    await bridge.close_connections(1.0)
    await channel.close(None)
    await upstream.stop(None)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def reason(self) -> str:
        (info,) = [d for d in self.json()["details"] if d["@type"].endswith("rpc.ErrorInfo")]
        return str(info["reason"])


async def exchange(web: Web, raw: bytes) -> Answer:
    """Sends `raw` as it is and reads the whole response (the bridge closes after it)."""
    reader, writer = await asyncio.open_connection(web.host, web.port)
    writer.write(raw)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return parse_response(data)


def parse_response(data: bytes) -> Answer:
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = b"".join(dechunked(body))
    return Answer(int(status_line.split()[1]), headers, body)


def dechunked(body: bytes) -> Iterator[bytes]:
    while True:
        size, _, rest = body.partition(b"\r\n")
        length = int(size, 16)
        if length == 0:
            return
        yield rest[:length]
        body = rest[length + 2 :]


def request(
    method: str, path: str, body: bytes = b"", headers: tuple[tuple[str, str], ...] = ()
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: test", *(f"{k}: {v}" for k, v in headers)]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join([*lines, "", ""])).encode() + body


def post(path: str, document: object, *headers: tuple[str, str]) -> bytes:
    return request("POST", path, json.dumps(document).encode(), headers)


LOBBY = "/shikoku.v1.LobbyService"
GAME = "/shikoku.v1.GameService"


async def test_a_unary_call_round_trips_the_protobuf_json_mapping(web: Web) -> None:
    answer = await exchange(web, post(f"{GAME}/GetState", {"gameId": "g-1", "version": "5"}))
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {
        "gameId": "g-1",
        "version": str(BIG_VERSION + 5),  # int64: a string
        "actingSeats": [2, 3],
        "state": {"phase": "2", "round": {"type": "stock_round", "number": 1.0}},
    }
    created = await exchange(
        web, post(f"{LOBBY}/CreateTable", {"seat_count": 3, "options": {"undoAllowed": True}})
    )
    assert created.json()["table"] == {
        "tableId": "t-1",
        "seatCount": 3,
        "options": {"undoAllowed": True},
        "status": "TABLE_STATUS_OPEN",  # enums by name
    }


async def test_an_empty_body_is_the_empty_request(web: Web) -> None:
    answer = await exchange(web, request("POST", f"{GAME}/GetState"))
    assert answer.status == 200
    assert answer.json()["version"] == str(BIG_VERSION)


async def test_a_refusal_is_its_http_status_and_the_status_with_its_error_info(web: Web) -> None:
    answer = await exchange(web, post(f"{LOBBY}/CreateTable", {"seatCount": 9}))
    assert answer.status == 400
    document = answer.json()
    assert document["code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert document["message"] == "2 to 6 seats"
    assert document["details"] == [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "INVALID_SEAT_COUNT",
            "domain": "shikoku.1889",
            "metadata": {"field": "seat_count"},
        },
        {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [
                {
                    "field": "seat_count",
                    "description": "2 to 6 seats",
                    "reason": "INVALID_SEAT_COUNT",
                }
            ],
        },
    ]


async def test_rate_limited_is_429_with_retry_after_in_whole_seconds(web: Web) -> None:
    answer = await exchange(
        web, post(f"{LOBBY}/CreateTable", {"seatCount": 7}, ("Origin", ALLOWED_ORIGIN))
    )
    assert answer.status == 429
    assert answer.headers["retry-after"] == "2"
    assert answer.headers["access-control-expose-headers"] == "retry-after"
    assert answer.reason() == "RATE_LIMITED"
    retry = [d for d in answer.json()["details"] if d["@type"].endswith("rpc.RetryInfo")]
    assert retry == [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.200s"}]


async def test_a_method_the_server_does_not_implement_is_501(web: Web) -> None:
    answer = await exchange(web, post(f"{LOBBY}/GetTable", {"tableId": "t-1"}))
    assert answer.status == 501
    assert answer.json()["code"] == grpc.StatusCode.UNIMPLEMENTED.value[0]


async def test_unary_calls_have_a_deadline(web: Web, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bridge_module, "UNARY_DEADLINE_SECONDS", 0.2)
    answer = await exchange(web, post(f"{LOBBY}/CreateTable", {"seatCount": 5}))
    assert answer.status == 504
    assert answer.json()["code"] == grpc.StatusCode.DEADLINE_EXCEEDED.value[0]


async def test_credentials_are_forwarded_and_the_peer_address_replaces_x_forwarded_for(
    web: Web,
) -> None:
    headers = (
        ("Authorization", "Bearer t-1~seat"),
        ("X-Api-Key", "k-123"),
        ("X-Forwarded-For", "203.0.113.9"),
        ("Cookie", "not=forwarded"),
    )
    await exchange(web, post(f"{LOBBY}/CreateTable", {"seatCount": 3}, *headers))
    seen = web.calls.metadata[-1]
    assert seen["authorization"] == "Bearer t-1~seat"
    assert seen["x-api-key"] == "k-123"
    assert seen["x-forwarded-for"] == "127.0.0.1"
    assert "cookie" not in seen
    await exchange(web, post(f"{LOBBY}/CreateTable", {"seatCount": 3}))
    assert "x-api-key" not in web.calls.metadata[-1]


async def test_cors_preflight_and_origins(web: Web) -> None:
    preflight = await exchange(
        web,
        request(
            "OPTIONS",
            f"{GAME}/WatchGame",
            headers=(
                ("Origin", ALLOWED_ORIGIN),
                ("Access-Control-Request-Method", "POST"),
                ("Access-Control-Request-Headers", "authorization, x-api-key, content-type"),
            ),
        ),
    )
    assert preflight.status == 204
    assert preflight.headers["access-control-allow-origin"] == ALLOWED_ORIGIN
    assert preflight.headers["access-control-allow-methods"] == "POST, OPTIONS"
    allowed = preflight.headers["access-control-allow-headers"].split(", ")
    assert sorted(allowed) == ["authorization", "content-type", "x-api-key"]
    assert preflight.headers["vary"] == "Origin"
    stranger = await exchange(
        web, request("OPTIONS", f"{GAME}/WatchGame", headers=(("Origin", "https://evil.example"),))
    )
    assert "access-control-allow-origin" not in stranger.headers
    assert Cors(frozenset({"*"})).headers("https://any.example")[0] == (
        "Access-Control-Allow-Origin",
        "*",
    )


async def test_a_body_over_one_mebibyte_is_413(web: Web) -> None:
    body = b'{"gameId": "' + b"x" * (1024 * 1024) + b'"}'
    answer = await exchange(web, request("POST", f"{GAME}/GetState", body))
    assert answer.status == 413
    assert answer.reason() == "REQUEST_TOO_LARGE"
    just_under = b'{"gameId": "' + b"x" * (1024 * 1024 - 20) + b'"}'
    assert (await exchange(web, request("POST", f"{GAME}/GetState", just_under))).status == 200


async def test_unknown_paths_are_404_and_wrong_methods_405(web: Web) -> None:
    missing = await exchange(web, post(f"{LOBBY}/NoSuchMethod", {}))
    assert (missing.status, missing.reason()) == (404, "NO_SUCH_PATH")
    assert (await exchange(web, post("/shikoku.internal.v1.RulesService/Submit", {}))).status == 404
    wrong = await exchange(web, request("GET", f"{LOBBY}/CreateTable"))
    assert wrong.status == 405
    assert wrong.headers["allow"] == "POST, OPTIONS"
    assert (await exchange(web, request("DELETE", "/"))).status == 405


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"seatCount": ', "INVALID_JSON"),
        (b"[3]", "INVALID_JSON"),
        (b"\xff\xfe", "INVALID_JSON"),
        (b"[" * 100_000, "INVALID_JSON"),
        (b'{"seatCount": "three"}', "INVALID_FIELD"),
        (b'{"noSuchField": 1}', "INVALID_FIELD"),
    ],
)
async def test_a_body_that_is_not_the_request_in_json_is_400(
    web: Web, body: bytes, reason: str
) -> None:
    answer = await exchange(web, request("POST", f"{LOBBY}/CreateTable", body))
    assert answer.status == 400
    assert answer.json()["code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert answer.reason() == reason


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET / HTTP/2.0\r\n\r\n", 505),
        (b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400),
        (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n", 431),
        (b"GET / HTTP/1.1\r\n" + b"X-A: b\r\n" * 101 + b"\r\n", 431),
        (f"POST {LOBBY}/CreateTable HTTP/1.1\r\nContent-Length: 1, 2\r\n\r\n".encode(), 400),
        (f"POST {LOBBY}/CreateTable HTTP/1.1\r\nContent-Length: -1\r\n\r\n".encode(), 400),
    ],
)
async def test_malformed_requests_are_refused(web: Web, raw: bytes, status: int) -> None:
    assert (await exchange(web, raw)).status == status


async def test_a_body_needs_a_content_length(web: Web) -> None:
    raw = f"POST {LOBBY}/CreateTable HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    assert (await exchange(web, raw.encode())).status == 411


async def test_a_slow_client_is_cut_off(web: Web, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocol, "HEADER_SECONDS", 0.2)
    monkeypatch.setattr(protocol, "BODY_SECONDS", 0.2)
    reader, writer = await asyncio.open_connection(web.host, web.port)
    writer.write(b"GET / HTTP/1.1\r\n")  # and nothing more
    answer = parse_response(await asyncio.wait_for(reader.read(), 5))
    assert answer.status == 408
    writer.close()
    slow_body = request("POST", f"{LOBBY}/CreateTable", b'{"seatCount": 3}')[:-4]
    assert (await exchange_without_closing(web, slow_body)).status == 408


async def exchange_without_closing(web: Web, raw: bytes) -> Answer:
    reader, writer = await asyncio.open_connection(web.host, web.port)
    writer.write(raw)
    answer = parse_response(await asyncio.wait_for(reader.read(), 5))
    writer.close()
    return answer


async def test_a_stream_is_ndjson_ending_with_the_error_that_ended_it(web: Web) -> None:
    answer = await exchange(
        web, post(f"{GAME}/StreamEvents", {"gameId": "fails", "fromVersion": 4})
    )
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/x-ndjson"
    assert answer.headers["transfer-encoding"] == "chunked"
    lines = [json.loads(line) for line in answer.body.decode().splitlines()]
    assert [line.get("version") for line in lines[:3]] == ["4", "5", "6"]
    assert len(lines) == 4
    error = lines[3]["error"]
    assert error["code"] == grpc.StatusCode.UNAVAILABLE.value[0]
    assert error["details"][0]["reason"] == "STORE_UNAVAILABLE"


async def test_a_stream_that_ends_normally_ends_the_body(web: Web) -> None:
    answer = await exchange(web, post(f"{GAME}/StreamEvents", {"gameId": "g", "fromVersion": 1}))
    assert answer.status == 200
    assert [json.loads(line)["version"] for line in answer.body.splitlines()] == ["1", "2", "3"]


async def test_a_stream_refused_at_its_start_gets_the_http_status(web: Web) -> None:
    answer = await exchange(web, post(f"{GAME}/StreamEvents", {"gameId": "missing"}))
    assert answer.status == 404
    assert answer.reason() == "GAME_NOT_FOUND"


async def test_a_browser_that_leaves_cancels_the_upstream_stream(web: Web) -> None:
    web.calls.stream_cancelled.clear()
    reader, writer = await asyncio.open_connection(web.host, web.port)
    writer.write(post(f"{GAME}/StreamEvents", {"gameId": "forever", "fromVersion": 1}))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 200 ")
    first_chunk = await asyncio.wait_for(reader.readuntil(b"\n\r\n"), 5)
    assert b'"version":"1"' in first_chunk
    assert not web.calls.stream_cancelled.is_set()
    writer.close()
    await asyncio.wait_for(web.calls.stream_cancelled.wait(), 5)


async def test_the_demo_page_its_script_and_health(web: Web) -> None:
    page = await exchange(web, request("GET", "/?api_key=k"))
    assert page.status == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert b'<script src="/app.js"' in page.body
    script = await exchange(web, request("GET", "/app.js"))
    assert script.headers["content-type"].startswith("text/javascript")
    assert b"WatchGame" in script.body
    assert (await exchange(web, request("GET", "/healthz"))).status == 200
    assert (await exchange(web, request("GET", "/static/app.js"))).status == 404


async def test_connections_beyond_the_cap_are_told_to_come_back() -> None:
    channel = grpc.aio.insecure_channel("127.0.0.1:1")  # never called: pages only
    bridge = Bridge(channel, public_methods(), Cors(frozenset()), demo_pages(), max_connections=1)
    server, listening = await start(bridge, "127.0.0.1:0")
    host, _, bound = listening.rpartition(":")
    web = Web(host, int(bound), Calls())
    _idle_reader, idle = await asyncio.open_connection(host, int(bound))  # holds the one slot
    await asyncio.sleep(0.1)
    refused = await exchange(web, request("GET", "/healthz"))
    assert refused.status == 503 and refused.reason() == "TOO_MANY_CONNECTIONS"
    assert refused.headers["retry-after"] == "1"
    idle.close()
    await asyncio.sleep(0.1)
    assert (await exchange(web, request("GET", "/healthz"))).status == 200
    server.close()
    await bridge.close_connections(1.0)
    await channel.close(None)
