"""Server streams through the web entrypoint over real HTTP: events reach the browser as the
game stores them, a stream ends with its status in the protocol's own end message (Connect) or
trailers frame (gRPC-Web), and a browser that goes away takes its upstream stream with it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from connectrpc.protocol import ProtocolType
from google.rpc import error_details_pb2

from shikoku.server.game_connect import GameServiceClient
from shikoku.v1 import game_pb2, lobby_pb2
from tests.e2e.api import PASS, Client, System, auth, started_table
from tests.web.conftest import STREAMS_PER_CALLER
from tests.web.wire import (
    END_STREAM,
    api_headers,
    connection,
    envelope,
    error_info,
    grpc_web,
    read_frame,
)

pytestmark = pytest.mark.e2e


class JsonStream:
    """A Connect server stream in JSON, read message by message as a browser's fetch does."""

    def __init__(
        self, web: str, method: str, request: dict[str, Any], headers: dict[str, str]
    ) -> None:
        self.conn = connection(web, timeout=20)
        sent = {**headers, "content-type": "application/connect+json"}
        self.conn.request(
            "POST",
            f"/shikoku.v1.{method}",
            body=envelope(json.dumps(request).encode()),
            headers=sent,
        )
        self.response = self.conn.getresponse()

    def next(self) -> tuple[bool, dict[str, Any]]:
        """(whether it is the end message, its JSON)."""
        flags, payload = read_frame(self.response)
        return bool(flags & END_STREAM), json.loads(payload)

    def message(self) -> dict[str, Any]:
        end, document = self.next()
        assert not end, f"the stream ended: {document}"
        return document

    def end(self) -> dict[str, Any]:
        end, document = self.next()
        assert end, f"a message instead of the end: {document}"
        return document

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def stream_factory(web_api: System) -> Iterator[list[JsonStream]]:
    opened: list[JsonStream] = []
    yield opened
    for stream in opened:
        stream.close()


def acting_seat(client: Client, game_id: str, tokens: list[str]) -> int:
    legal = client.game.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id=game_id), metadata=auth(tokens[0])
    )
    return legal.actions[0].seat


def play_a_pass(client: Client, game_id: str, tokens: list[str]) -> int:
    """A pass by the seat that acts (the opening private auction allows it); the version after."""
    seat = acting_seat(client, game_id, tokens)
    answer = client.game.SubmitCommand(
        game_pb2.SubmitCommandRequest(game_id=game_id, command=PASS),
        metadata=auth(tokens[seat - 1]),
    )
    return int(answer.version)


def latest_version(client: Client, game_id: str, token: str) -> int:
    state = client.game.GetState(game_pb2.GetStateRequest(game_id=game_id), metadata=auth(token))
    return int(state.version)


def test_a_connect_json_stream_delivers_each_event_as_it_is_stored(
    web_api: System, grpc_client: Client
) -> None:
    game_id, tokens, host = started_table(grpc_client)
    opening = latest_version(grpc_client, game_id, host)
    stream = JsonStream(
        web_api.web,
        "GameService/StreamEvents",
        {"gameId": game_id, "fromVersion": "1"},
        api_headers(web_api.api_key, token=host),
    )
    try:
        assert stream.response.status == 200
        assert stream.response.getheader("content-type") == "application/connect+json"
        backlog = [stream.message() for _ in range(opening)]
        assert [int(event["version"]) for event in backlog] == list(range(1, opening + 1))
        assert backlog[0]["gameId"] == game_id
        for _ in range(3):
            # Stored after the stream was opened: it can only arrive by being sent live.
            stored = play_a_pass(grpc_client, game_id, tokens)
            started = time.monotonic()
            live = [stream.message()]
            while int(live[-1]["version"]) < stored:
                live.append(stream.message())
            assert time.monotonic() - started < 5
            assert int(live[0]["version"]) == opening + 1
            opening = stored
    finally:
        stream.close()


def test_a_stream_ends_with_its_status_when_the_browsers_deadline_passes(
    web_api: System, grpc_client: Client
) -> None:
    game_id, _, host = started_table(grpc_client)
    headers = api_headers(web_api.api_key, token=host, **{"connect-timeout-ms": "1500"})
    request = {"gameId": game_id, "heartbeatSeconds": 1}
    stream = JsonStream(web_api.web, "GameService/WatchGame", request, headers)
    try:
        kinds = []
        while True:
            end, document = stream.next()
            if end:
                break
            kinds.append("event" if "event" in document else "heartbeat")
        assert kinds[0] == "event" and "heartbeat" in kinds
        assert document["error"]["code"] == "deadline_exceeded"
        assert stream.response.status == 200
    finally:
        stream.close()


@pytest.mark.parametrize("method", ["StreamEvents", "WatchGame"])
def test_a_stream_refused_at_its_start_ends_with_the_gateways_error(
    web_api: System, grpc_client: Client, method: str
) -> None:
    missing = JsonStream(
        web_api.web, f"GameService/{method}", {"gameId": "t-missing"}, api_headers(web_api.api_key)
    )
    try:
        assert missing.response.status == 200  # Connect streams carry their status at the end
        error = missing.end()["error"]
        assert error["code"] == "not_found"
        assert error_info(error)["reason"] == "GAME_NOT_FOUND"
    finally:
        missing.close()

    closed = lobby_pb2.TableOptions(closed_to_spectators=True)
    game_id, _, _ = started_table(grpc_client, options=closed)
    refused = JsonStream(
        web_api.web, f"GameService/{method}", {"gameId": game_id}, api_headers(web_api.api_key)
    )
    try:
        error = refused.end()["error"]
        assert error["code"] == "permission_denied"
        assert error_info(error)["reason"] == "CLOSED_TO_SPECTATORS"
    finally:
        refused.close()


def test_grpc_web_streams_and_ends_with_trailers(web_api: System, grpc_client: Client) -> None:
    game_id, _, host = started_table(grpc_client)
    opening = latest_version(grpc_client, game_id, host)
    headers = api_headers(web_api.api_key, token=host, **{"grpc-timeout": "1500m"})
    request = game_pb2.StreamEventsRequest(game_id=game_id, from_version=1)
    answer = grpc_web(connection(web_api.web), "GameService/StreamEvents", request, headers)
    versions = [game_pb2.GameEvent.FromString(m).version for m in answer.messages]
    assert versions == list(range(1, opening + 1))
    assert answer.grpc_status == 4  # DEADLINE_EXCEEDED, after every event

    missing = game_pb2.StreamEventsRequest(game_id="t-missing")
    refused = grpc_web(connection(web_api.web), "GameService/StreamEvents", missing, headers)
    assert refused.messages == []
    assert refused.grpc_status == 5  # NOT_FOUND
    info = error_details_pb2.ErrorInfo()
    assert refused.rich_status().details[0].Unpack(info) and info.reason == "GAME_NOT_FOUND"


async def test_the_generated_client_watches_live_in_binary_and_grpc_web(
    web_api: System, grpc_client: Client
) -> None:
    for protocol in (ProtocolType.CONNECT, ProtocolType.GRPC_WEB):
        game_id, tokens, host = started_table(grpc_client)
        opening = latest_version(grpc_client, game_id, host)
        headers = {"x-api-key": web_api.api_key, "authorization": f"Bearer {host}"}
        request = game_pb2.WatchGameRequest(game_id=game_id, include_state=True)
        seen: list[int] = []
        async with GameServiceClient(f"http://{web_api.web}", protocol=protocol) as games:
            watch = games.watch_game(request, headers=headers, timeout_ms=10_000)
            async for item in watch:
                if item.HasField("event"):
                    seen.append(item.event.version)
                if seen and seen[-1] == opening:
                    assert item.state.version == opening
                    stored = play_a_pass(grpc_client, game_id, tokens)
                    opening = -1
                if opening == -1 and seen[-1] == stored:
                    break
        assert seen == list(range(1, stored + 1)), protocol


def open_and_read_first(web: str, game_id: str, token: str, api_key: str) -> JsonStream:
    stream = JsonStream(
        web,
        "GameService/StreamEvents",
        {"gameId": game_id},
        api_headers(api_key, token=token),
    )
    return stream


def test_a_browser_that_goes_away_releases_its_stream_upstream(
    web_api: System, grpc_client: Client
) -> None:
    """The gateway lets a caller hold only a few streams at once: were the web entrypoint to
    keep the gateway's stream of a browser that left, the caller would soon be refused."""
    game_id, tokens, _ = started_table(grpc_client)
    seat = tokens[0]
    for _ in range(3 * STREAMS_PER_CALLER):
        stream = open_and_read_first(web_api.web, game_id, seat, web_api.api_key)
        assert int(stream.message()["version"]) == 1
        stream.close()

    held: list[JsonStream] = []
    try:
        deadline = time.monotonic() + 10
        while len(held) < STREAMS_PER_CALLER:
            stream = open_and_read_first(web_api.web, game_id, seat, web_api.api_key)
            end, document = stream.next()
            if not end:
                held.append(stream)
                continue
            stream.close()
            assert time.monotonic() < deadline, f"streams not released upstream: {document}"
            time.sleep(0.2)
        # The quota is real: one more stream than it allows is refused.
        extra = open_and_read_first(web_api.web, game_id, seat, web_api.api_key)
        held.append(extra)
        error = extra.end()["error"]
        assert error["code"] == "resource_exhausted"
        assert error_info(error)["reason"] == "TOO_MANY_STREAMS"
    finally:
        for stream in held:
            stream.close()
