"""A table's chat: the domain's decisions (pure), then the lobby servicer over gRPC on loopback
with a real rules servicer and real Redis (posting, watching and resuming, hiding, the limits,
who may read, retries, and that a refused post writes nothing)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

import grpc
import pytest
import redis.asyncio

from infra.grpc_errors import from_rpc_error
from kernel.rejection import Rejected
from services.lobby.domain import chat, players, tables
from services.lobby.domain.access import Caller
from services.lobby.shell import chat as chat_shell
from services.lobby.shell.server import build_lobby
from shikoku.internal.v1 import rules_pb2_grpc
from shikoku.v1 import lobby_pb2, lobby_pb2_grpc
from tests.lobby.test_round_crashes import SETTINGS, auth, rules_service, serving

# ---- the domain ----------------------------------------------------------------------------


def table(open_to_spectators: bool = True, host_player: str = "") -> tables.Table:
    spectating = tables.Spectating(open=open_to_spectators)
    events = tables.create(
        "t-1", 3, "", False, False, "host-hash", host_player_id=host_player, spectating=spectating
    )
    made = tables.fold(events)
    events += tables.join(made, "Ann", 1, "ann-hash", "")
    made = tables.fold(events)
    events += tables.join(made, "Bo", 2, "bo-hash", "p-bo")
    return tables.fold(events)


def player(player_id: str) -> players.Player:
    return players.fold(players.register(player_id, player_id, "player", "h", 0))


def refusal(call: Any, *args: Any) -> Rejected:
    with pytest.raises(Rejected) as refused:
        call(*args)
    return refused.value


@pytest.mark.parametrize("text", ["hi", "x" * chat.MAX_TEXT, "🚂" * chat.MAX_TEXT, " a "])
def test_texts_of_1_to_500_code_points_may_be_said(text: str) -> None:
    assert chat.checked_text(text) == text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "MESSAGE_EMPTY"),
        (" \n\t ", "MESSAGE_EMPTY"),
        ("x" * (chat.MAX_TEXT + 1), "MESSAGE_TOO_LONG"),
        ("🚂" * (chat.MAX_TEXT + 1), "MESSAGE_TOO_LONG"),
    ],
)
def test_empty_and_long_texts_are_refused(text: str, reason: str) -> None:
    refused = refusal(chat.checked_text, text)
    assert (refused.reason, refused.kind.value) == (reason, "INVALID_ARGUMENT")


def test_seats_and_host_speak_as_themselves_and_nobody_else_speaks() -> None:
    at = table(host_player="p-director")
    ann, bo = at.seats[0], at.seats[1]
    assert chat.author_of(Caller(table=at, seat=ann), at) == chat.Author(1, "Ann")
    assert chat.author_of(Caller(player=player("p-bo")), at) == chat.Author(2, "Bo")
    assert chat.author_of(Caller(table=at, is_host=True), at) == chat.Author(0, "host")
    assert chat.author_of(Caller(player=player("p-director")), at) == chat.Author(0, "host")
    other = tables.Table(table_id="t-2", seats=(tables.Seat(1, "Ann", "ann-hash"),))
    for stranger in (
        Caller(player=player("p-stranger")),
        Caller(table=other, seat=other.seats[0]),
        Caller(table=other, is_host=True),
    ):
        assert refusal(chat.author_of, stranger, at).reason == "NOT_AT_TABLE"
    assert bo.player_id == "p-bo"


def test_a_closed_table_is_read_by_its_seats_and_host_only() -> None:
    closed, opened = table(open_to_spectators=False), table()
    chat.require_reader(Caller(table=closed, seat=closed.seats[0]), closed)
    chat.require_reader(Caller(table=closed, is_host=True), closed)
    chat.require_reader(Caller(player=player("p-bo")), closed)
    for outsider in (None, Caller(player=player("p-stranger"))):
        assert refusal(chat.require_reader, outsider, closed).reason == "CLOSED_TO_SPECTATORS"
        chat.require_reader(outsider, opened)


def test_the_sixth_message_within_ten_seconds_waits_for_the_oldest_to_leave_the_window() -> None:
    posts = [1_000, 2_000, 3_000, 4_000]
    assert chat.rate_wait_ms(posts, 9_000) == 0
    assert chat.rate_wait_ms([*posts, 5_000], 9_000) == 2_000  # 1_000 leaves at 11_000
    assert chat.rate_wait_ms([*posts, 5_000], 11_000) == 0  # 10 s old: out of the window
    assert chat.rate_wait_ms([*posts, 5_000, 6_000, 7_000], 9_000) == 4_000  # the 5th last
    assert chat.rate_wait_ms([-50_000, -40_000, -30_000, -20_000, 5_000], 9_000) == 0


def test_an_author_s_last_five_post_times_are_kept() -> None:
    assert chat.remembered_posts([1, 2, 3, 4, 5], 6) == [2, 3, 4, 5, 6]
    assert chat.remembered_posts([], 6) == [6]


def test_a_chat_takes_5000_messages() -> None:
    chat.require_room(chat.MAX_MESSAGES - 1)
    refused = refusal(chat.require_room, chat.MAX_MESSAGES)
    assert (refused.reason, refused.kind.value) == ("CHAT_FULL", "FAILED_PRECONDITION")


def test_a_hidden_message_keeps_its_place_and_loses_its_text() -> None:
    said = chat.said(chat.Author(2, "Bo"), "secret", 7, 1_234, 40)
    assert chat.hidden(said) == chat.Message(7, 2, "Bo", "", 1_234, 40, hidden=True)


# ---- the lobby, on real Redis ----------------------------------------------------------------


@dataclass
class Lobby:
    stub: lobby_pb2_grpc.LobbyServiceAsyncStub
    redis: redis.asyncio.Redis


@asynccontextmanager
async def serving_lobby(redis_url: str) -> AsyncIterator[Lobby]:
    client = redis.asyncio.Redis.from_url(redis_url)
    async with rules_service(redis_url) as rules_address:
        rules_channel = grpc.aio.insecure_channel(rules_address)
        built = build_lobby(SETTINGS, client, rules_pb2_grpc.RulesServiceStub(rules_channel))
        try:
            async with (
                serving(
                    lambda s: lobby_pb2_grpc.add_LobbyServiceServicer_to_server(built.servicer, s)
                ) as at,
                grpc.aio.insecure_channel(at) as channel,
            ):
                yield Lobby(lobby_pb2_grpc.LobbyServiceStub(channel), client)
        finally:
            await built.servicer.close()
            await rules_channel.close(None)
            await client.aclose()


@pytest.fixture
async def lobby(redis_url: str) -> AsyncIterator[Lobby]:
    async with serving_lobby(redis_url) as served:
        yield served


@dataclass
class Seated:
    table_id: str
    host: str
    seats: list[str]


async def seated_table(
    lobby: Lobby, closed: bool = False, start: bool = False, host: str = ""
) -> Seated:
    options = lobby_pb2.TableOptions(closed_to_spectators=closed)
    created = await lobby.stub.CreateTable(
        lobby_pb2.CreateTableRequest(seat_count=2, options=options),
        metadata=auth(host) if host else None,
    )
    table_id = created.table.table_id
    seats = []
    for name in ("Ann", "Bo"):
        joined = await lobby.stub.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=table_id, player_name=name)
        )
        seats.append(joined.seat_token)
    if start:
        await lobby.stub.StartTable(
            lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(created.host_token)
        )
    return Seated(table_id, created.host_token, seats)


async def post(
    lobby: Lobby, at: Seated, token: str, text: str, request_id: str = ""
) -> lobby_pb2.ChatMessage:
    request = lobby_pb2.PostMessageRequest(table_id=at.table_id, text=text, request_id=request_id)
    message: lobby_pb2.ChatMessage = await lobby.stub.PostMessage(request, metadata=auth(token))
    return message


async def refused(call: Any) -> tuple[grpc.StatusCode, str, Rejected]:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    error = from_rpc_error(raised.value)
    assert error is not None, raised.value
    return raised.value.code(), error.reason, error


def watching(
    lobby: Lobby, at: Seated, token: str = "", from_position: int = 0, heartbeat: int = 0
) -> Any:
    request = lobby_pb2.WatchChatRequest(
        table_id=at.table_id, from_position=from_position, heartbeat_seconds=heartbeat
    )
    return lobby.stub.WatchChat(request, metadata=auth(token) if token else None)


async def items(stream: Any, count: int) -> list[lobby_pb2.WatchChatResponse]:
    return [await asyncio.wait_for(stream.read(), 10) for _ in range(count)]


async def stored_keys(lobby: Lobby, table_id: str) -> dict[str, Any]:
    """Everything the table's chat has in Redis."""
    found: dict[str, Any] = {}
    async for key in lobby.redis.scan_iter(match=f"table:{{{table_id}}}:chat*"):
        kind = cast(bytes, await lobby.redis.type(key)).decode()
        if kind == "stream":
            found[key.decode()] = await lobby.redis.xrange(key)
        else:
            found[key.decode()] = await lobby.redis.hgetall(key)
    return found


async def test_seats_and_host_chat_before_the_start_and_the_game_s_version_follows(
    lobby: Lobby,
) -> None:
    at = await seated_table(lobby)
    first = await post(lobby, at, at.seats[0], "good luck")
    by_host = await post(lobby, at, at.host, "welcome")
    assert (first.number, first.seat, first.author, first.text) == (1, 1, "Ann", "good luck")
    assert (by_host.number, by_host.seat, by_host.author) == (2, 0, "host")
    assert first.game_version == by_host.game_version == 0
    assert abs(first.posted_at_ms - chat_shell.now_ms()) < 5_000
    await lobby.stub.StartTable(
        lobby_pb2.StartTableRequest(table_id=at.table_id), metadata=auth(at.host)
    )
    started = await post(lobby, at, at.seats[1], "off we go")
    game_events = await lobby.redis.xlen(f"game:{{{at.table_id}}}:events")
    assert started.game_version == game_events > 0
    # Every key of the chat carries the table's hash tag.
    assert all(
        key.startswith(f"table:{{{at.table_id}}}:") for key in await stored_keys(lobby, at.table_id)
    )


async def test_a_watch_sends_the_chat_then_live_messages_and_hides_and_resumes_after_the_last(
    lobby: Lobby,
) -> None:
    at = await seated_table(lobby)
    await post(lobby, at, at.seats[0], "one")
    await post(lobby, at, at.seats[1], "two")
    stream = watching(lobby, at, at.seats[1])
    caught_up = await items(stream, 2)
    assert [(i.position, i.message.number, i.message.text) for i in caught_up] == [
        (1, 1, "one"),
        (2, 2, "two"),
    ]
    await post(lobby, at, at.seats[0], "three")
    hidden = await lobby.stub.HideMessage(
        lobby_pb2.HideMessageRequest(table_id=at.table_id, number=2), metadata=auth(at.host)
    )
    assert (hidden.number, hidden.hidden, hidden.text, hidden.author) == (2, True, "", "Bo")
    live = await items(stream, 2)
    assert [(i.position, i.message.number, i.message.hidden) for i in live] == [
        (3, 3, False),
        (4, 2, True),
    ]
    assert live[1].message.text == ""
    stream.cancel()
    # Resumed from the last position seen + 1: nothing again, nothing missed.
    await post(lobby, at, at.seats[1], "four")
    resumed = watching(lobby, at, at.seats[0], from_position=4)
    again = await items(resumed, 2)
    assert [(i.position, i.message.number, i.message.text) for i in again] == [
        (4, 2, ""),
        (5, 4, "four"),
    ]
    resumed.cancel()
    # From the start, a hidden message is sent as it now stands: its text never again.
    replay = watching(lobby, at, at.seats[0])
    whole = await items(replay, 5)
    assert [i.message.text for i in whole] == ["one", "", "three", "", "four"]
    replay.cancel()


async def test_a_quiet_watch_sends_heartbeats_at_the_last_position_sent(lobby: Lobby) -> None:
    at = await seated_table(lobby)
    empty = watching(lobby, at, at.seats[0], heartbeat=1)
    beat = await items(empty, 1)
    assert (beat[0].heartbeat, beat[0].position, beat[0].HasField("message")) == (True, 0, False)
    empty.cancel()
    await post(lobby, at, at.seats[0], "hello")
    stream = watching(lobby, at, "", heartbeat=1)
    said, beat_after = await items(stream, 2)
    assert (said.position, said.heartbeat) == (1, False)
    assert (beat_after.position, beat_after.heartbeat) == (1, True)
    stream.cancel()
    code, reason, _ = await refused(items(watching(lobby, at, heartbeat=61), 1))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_HEARTBEAT")


async def test_hiding_is_the_host_s_own_and_hiding_twice_changes_nothing(lobby: Lobby) -> None:
    director = await lobby.stub.RegisterPlayer(
        lobby_pb2.RegisterPlayerRequest(display_name="Director", role=lobby_pb2.ROLE_HOST)
    )
    at = await seated_table(lobby, host=director.credential)
    await post(lobby, at, at.seats[0], "rude")
    hide = lobby_pb2.HideMessageRequest(table_id=at.table_id, number=1)
    code, reason, _ = await refused(lobby.stub.HideMessage(hide, metadata=auth(at.seats[1])))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_HOST")
    first = await lobby.stub.HideMessage(hide, metadata=auth(director.credential))
    before = await stored_keys(lobby, at.table_id)
    second = await lobby.stub.HideMessage(hide, metadata=auth(at.host))
    assert first == second and second.hidden
    assert await stored_keys(lobby, at.table_id) == before
    missing = lobby_pb2.HideMessageRequest(table_id=at.table_id, number=2)
    code, reason, _ = await refused(lobby.stub.HideMessage(missing, metadata=auth(at.host)))
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "MESSAGE_NOT_FOUND")


async def test_refused_posts_say_why_and_write_nothing(lobby: Lobby) -> None:
    at = await seated_table(lobby)
    other = await seated_table(lobby)
    stranger = await lobby.stub.RegisterPlayer(lobby_pb2.RegisterPlayerRequest(display_name="X"))
    await post(lobby, at, at.seats[0], "first")
    before = await stored_keys(lobby, at.table_id)
    cases = [
        (at.seats[0], "", grpc.StatusCode.INVALID_ARGUMENT, "MESSAGE_EMPTY"),
        (at.seats[0], "x" * 501, grpc.StatusCode.INVALID_ARGUMENT, "MESSAGE_TOO_LONG"),
        (other.seats[0], "hi", grpc.StatusCode.PERMISSION_DENIED, "NOT_AT_TABLE"),
        (other.host, "hi", grpc.StatusCode.PERMISSION_DENIED, "NOT_AT_TABLE"),
        (stranger.credential, "hi", grpc.StatusCode.PERMISSION_DENIED, "NOT_AT_TABLE"),
        (f"{at.table_id}~forged", "hi", grpc.StatusCode.UNAUTHENTICATED, "INVALID_CREDENTIAL"),
    ]
    for token, text, code, reason in cases:
        assert (await refused(post(lobby, at, token, text)))[:2] == (code, reason), reason
    assert await stored_keys(lobby, at.table_id) == before
    absent = Seated("t-nowhere", "", [])
    code, reason, _ = await refused(post(lobby, absent, at.seats[0], "hi"))
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")


async def test_five_messages_in_ten_seconds_per_author_then_a_wait(
    lobby: Lobby, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = await seated_table(lobby)
    clock = [1_000_000]
    monkeypatch.setattr(chat_shell, "now_ms", lambda: clock[0])
    for n in range(5):
        await post(lobby, at, at.seats[0], f"spam {n}")
        clock[0] += 1_000
    before = await stored_keys(lobby, at.table_id)
    code, reason, error = await refused(post(lobby, at, at.seats[0], "one more"))
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "CHAT_RATE_LIMITED")
    assert error.retry_after == timedelta(milliseconds=5_000)  # the first leaves at 1_010_000
    assert await stored_keys(lobby, at.table_id) == before
    await post(lobby, at, at.seats[1], "another author is not held back")
    await post(lobby, at, at.host, "nor the host")
    clock[0] += 5_000
    assert (await post(lobby, at, at.seats[0], "now again")).number == 8


async def test_a_full_chat_takes_no_more(lobby: Lobby, monkeypatch: pytest.MonkeyPatch) -> None:
    at = await seated_table(lobby)
    monkeypatch.setattr(chat, "MAX_MESSAGES", 3)
    for n in range(3):
        await post(lobby, at, [at.seats[0], at.seats[1], at.host][n], f"m{n}")
    before = await stored_keys(lobby, at.table_id)
    code, reason, _ = await refused(post(lobby, at, at.seats[0], "fourth"))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "CHAT_FULL")
    assert await stored_keys(lobby, at.table_id) == before


async def test_a_closed_table_s_chat_is_read_by_its_seats_and_host_only(lobby: Lobby) -> None:
    at = await seated_table(lobby, closed=True, start=True)
    await post(lobby, at, at.seats[0], "private")
    for reader in (at.seats[1], at.host):
        stream = watching(lobby, at, reader)
        assert (await items(stream, 1))[0].message.text == "private"
        stream.cancel()
    other = await seated_table(lobby)
    for outsider in ("", other.seats[0]):
        code, reason, _ = await refused(items(watching(lobby, at, outsider), 1))
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "CLOSED_TO_SPECTATORS")
    opened = await seated_table(lobby)
    await post(lobby, opened, opened.seats[0], "public")
    stream = watching(lobby, opened)
    assert (await items(stream, 1))[0].message.text == "public"
    stream.cancel()


async def test_a_post_sent_again_with_its_request_id_is_said_once(lobby: Lobby) -> None:
    at = await seated_table(lobby)
    copies = await asyncio.gather(
        *(post(lobby, at, at.seats[0], "once", request_id="r-1") for _ in range(4))
    )
    assert len({c.SerializeToString() for c in copies}) == 1
    again = await post(lobby, at, at.seats[0], "once", request_id="r-1")
    assert again == copies[0]
    code, reason, _ = await refused(post(lobby, at, at.seats[0], "other", request_id="r-1"))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
    stream = watching(lobby, at, at.seats[0], heartbeat=1)
    said, beat = await items(stream, 2)
    assert (said.message.text, beat.heartbeat, beat.position) == ("once", True, 1)
    stream.cancel()


async def test_a_retry_after_the_first_answer_was_lost_finds_the_message_said(
    redis_url: str,
) -> None:
    """The first lobby said the message and lost its answer before keeping it under the request
    id (a crash between the two writes); a fresh lobby, asked again, answers the same
    message."""
    async with serving_lobby(redis_url) as first:
        at = await seated_table(first)
        said = await post(first, at, at.seats[0], "lost reply", request_id="r-lost")
        await first.redis.delete("lobby:request:{PostMessage:r-lost}")
    async with serving_lobby(redis_url) as fresh:
        again = await post(fresh, at, at.seats[0], "lost reply", request_id="r-lost")
        assert again == said
        assert await fresh.redis.hlen(f"table:{{{at.table_id}}}:chat:messages") == 1


async def test_closing_the_feed_ends_its_readers_though_a_watch_is_still_open(
    redis_url: str,
) -> None:
    """A lobby stopping while a WatchChat stream is still open (its handler not yet closed)
    leaves no reader behind to reconnect to a Redis that is gone."""
    client = redis.asyncio.Redis.from_url(redis_url)
    feed = chat_shell.ChatFeed(client)
    try:
        with feed.woken("t-open") as wake:
            await asyncio.wait_for(wake.wait(), 5)  # the reader is running
            readers = [t for t in asyncio.all_tasks() if "ChatFeed._read" in repr(t.get_coro())]
            assert readers
            await feed.close()
            assert all(reader.done() for reader in readers)
    finally:
        await client.aclose()
