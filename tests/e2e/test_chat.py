"""The table's chat through the gateway, over gRPC, on the whole system: two seats and a
spectator talk and watch live, the host hides, the limits and access rules hold at the edge,
a closed table keeps its chat from spectators, `shikoku export --messages` carries the chat,
and chat watches count against the caller's stream quota."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from infra.grpc_errors import from_rpc_error
from shikoku.v1 import game_pb2, lobby_pb2
from tests.e2e.api import PASS, Client, System, auth, expect_error, open_table, started_table
from tests.e2e.launch import start_system, stop_system
from tests.e2e.test_players import register
from tools.sitelog.export_format import effective_actions, load
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import replay

pytestmark = pytest.mark.e2e
SHIKOKU = str(Path(sys.executable).parent / "shikoku")


def post(client: Client, table_id: str, token: str, text: str) -> lobby_pb2.ChatMessage:
    request = lobby_pb2.PostMessageRequest(table_id=table_id, text=text)
    message: lobby_pb2.ChatMessage = client.lobby.PostMessage(request, metadata=auth(token))
    return message


def watch(client: Client, table_id: str, token: str = "", from_position: int = 0) -> Any:
    request = lobby_pb2.WatchChatRequest(
        table_id=table_id, from_position=from_position, heartbeat_seconds=1
    )
    return client.lobby.WatchChat(request, metadata=auth(token) if token else (), timeout=60)


def said(stream: Any, count: int) -> list[tuple[int, int, int, str, bool]]:
    """The next `count` messages of a chat watch (heartbeats passed over): (position, number,
    seat, text, hidden)."""
    found: list[tuple[int, int, int, str, bool]] = []
    while len(found) < count:
        item = next(stream)
        if not item.heartbeat:
            m = item.message
            found.append((item.position, m.number, m.seat, m.text, m.hidden))
    return found


def test_two_seats_and_a_spectator_chat_live_through_the_gateway(client: Client) -> None:
    table_id, seats, host = started_table(client, 2)
    stranger = register(client, "Stranger")
    spectator, by_seat = watch(client, table_id), watch(client, table_id, seats[1])
    first = post(client, table_id, seats[0], "hello from seat 1")
    assert (first.number, first.seat, first.author) == (1, 1, "player 1")
    assert first.game_version == client.stream_length(table_id)
    post(client, table_id, seats[1], "hello back")
    hidden = client.lobby.HideMessage(
        lobby_pb2.HideMessageRequest(table_id=table_id, number=1), metadata=auth(host)
    )
    assert (hidden.hidden, hidden.text) == (True, "")
    expected = [
        (1, 1, 1, "hello from seat 1", False),
        (2, 2, 2, "hello back", False),
        (3, 1, 1, "", True),
    ]
    for stream in (spectator, by_seat):
        items = said(stream, 3)
        # A watch that opened before the hide may have sent message 1 as said; one that
        # caught up after it sends it as it now stands.
        assert items[1:] == expected[1:]
        assert items[0][:3] == expected[0][:3]
        stream.cancel()
    resumed = watch(client, table_id, seats[0], from_position=3)
    assert said(resumed, 1) == [expected[2]]
    resumed.cancel()

    post_request = lobby_pb2.PostMessageRequest(table_id=table_id, text="hi")
    expect_error(
        lambda: client.lobby.PostMessage(post_request),
        grpc.StatusCode.UNAUTHENTICATED,
        "MISSING_CREDENTIAL",
    )
    expect_error(
        lambda: client.lobby.PostMessage(post_request, metadata=auth(stranger.credential)),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_AT_TABLE",
    )
    expect_error(
        lambda: client.lobby.HideMessage(
            lobby_pb2.HideMessageRequest(table_id=table_id, number=2), metadata=auth(seats[0])
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_HOST",
    )
    expect_error(
        lambda: post(client, table_id, seats[0], "x" * 501),
        grpc.StatusCode.INVALID_ARGUMENT,
        "MESSAGE_TOO_LONG",
    )


def test_a_sixth_message_in_ten_seconds_is_refused_with_a_retry_delay(client: Client) -> None:
    table_id, seats, _host = open_table(client, 2)
    for n in range(5):
        post(client, table_id, seats[0], f"quick {n}")
    with pytest.raises(grpc.RpcError) as raised:
        post(client, table_id, seats[0], "one too many")
    refused = from_rpc_error(raised.value)
    assert refused is not None and refused.reason == "CHAT_RATE_LIMITED"
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refused.retry_after is not None and 0 < refused.retry_after.total_seconds() <= 10
    assert post(client, table_id, seats[1], "the other seat may").number == 6


def test_a_table_closed_to_spectators_keeps_its_chat_from_them(client: Client) -> None:
    closed = lobby_pb2.TableOptions(closed_to_spectators=True)
    table_id, seats, host = started_table(client, 2, closed)
    post(client, table_id, host, "just us")
    expect_error(
        lambda: next(watch(client, table_id)),
        grpc.StatusCode.PERMISSION_DENIED,
        "CLOSED_TO_SPECTATORS",
    )
    other_table, other_seats, _other_host = open_table(client, 2)
    expect_error(
        lambda: next(watch(client, table_id, other_seats[0])),
        grpc.StatusCode.PERMISSION_DENIED,
        "CLOSED_TO_SPECTATORS",
    )
    stream = watch(client, table_id, seats[1])
    assert said(stream, 1) == [(1, 1, 0, "just us", False)]
    stream.cancel()
    assert other_table != table_id


def test_shikoku_export_with_messages_places_the_chat_among_the_actions(
    system: System, client: Client, tmp_path: Path
) -> None:
    options = lobby_pb2.TableOptions(fixed_seat_order=True)
    table_id, seats, host = open_table(client, 2, options)
    post(client, table_id, seats[0], "before the start")
    post(client, table_id, host, "the host's word, which the site has no player for")
    client.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(host))
    client.game.SubmitCommand(
        game_pb2.SubmitCommandRequest(game_id=table_id, command=PASS), metadata=auth(seats[0])
    )
    post(client, table_id, seats[1], "after the first pass")
    rude = post(client, table_id, seats[1], "rude")
    client.lobby.HideMessage(
        lobby_pb2.HideMessageRequest(table_id=table_id, number=rude.number), metadata=auth(host)
    )

    def export(*flags: str) -> Path:
        out = tmp_path / f"export{'-'.join(flags)}.json"
        command = [SHIKOKU, "export", table_id, "--gateway", system.gateway, "-o", str(out)]
        command += ["--api-key", system.api_key, *flags]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return out

    plain, chatty = load(export()), load(export("--messages"))
    actions = list(chatty.actions)
    assert [a["id"] for a in actions] == list(range(1, len(actions) + 1))
    messages = [
        (a["entity"], a["entity_type"], a["message"]) for a in actions if a["type"] == "message"
    ]
    assert messages == [(1, "player", "before the start"), (2, "player", "after the first pass")]
    assert actions[0]["type"] == "message"
    assert [a["type"] for a in actions[1:3]] == ["pass", "message"]
    assert isinstance(actions[0]["created_at"], int)
    assert abs(actions[0]["created_at"] - time.time()) < 600

    def without_ids(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in a.items() if k != "id"} for a in actions]

    assert without_ids(effective_actions(chatty.actions)) == without_ids(
        effective_actions(plain.actions)
    )
    assert replay(chatty, InProcessTable(chatty)).matches(chatty)


def test_chat_watches_count_against_the_callers_stream_quota(redis_url: str) -> None:
    system = start_system(redis_url, SHIKOKU_STREAMS_PER_CALLER="2")
    client = Client(system)
    streams: list[Any] = []
    try:
        table_id, seats, _host = open_table(client, 2)
        post(client, table_id, seats[0], "hello")
        for _ in range(2):
            stream = watch(client, table_id, seats[1])
            next(stream)  # open, and counted
            streams.append(stream)
        expect_error(
            lambda: next(watch(client, table_id, seats[1])),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "TOO_MANY_STREAMS",
        )
        streams.pop().cancel()
        time.sleep(0.5)
        again = watch(client, table_id, seats[1])
        assert said(again, 1)[0][3] == "hello"  # a closed stream gives its place back
        streams.append(again)
    finally:
        for stream in streams:
            stream.cancel()
        client.channel.close()
        client.redis.close()
        stop_system(system)
