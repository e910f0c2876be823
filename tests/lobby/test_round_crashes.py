"""A tournament round cut short anywhere is finished by the next StartRound: the real lobby
servicer and the real rules servicer, each served by gRPC on loopback, over real Redis.

The lobby "crashes" right after its N-th write of a StartRound (a Redis command that changes
something, or its CreateGame call to the rules service): the write is done, then the call fails
and that lobby is thrown away, as a process killed at that point leaves things. A fresh lobby
over the same Redis then gets the StartRound again, with the same request id (a client retrying)
and with a new one (the host pressing again), for every N from the first write to the last.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import grpc
import pytest
import redis.asyncio

from infra.call_chain import FailuresAsStatus
from infra.eventstore import Entries, EventStore, stream_key
from infra.settings import load
from services.lobby.shell.keepers import CLOCKED
from services.lobby.shell.repository import TABLES_INDEX
from services.lobby.shell.server import build_lobby
from services.lobby.shell.settings import LobbySettings
from services.rules.shell.repository import GameRepository
from services.rules.shell.server import RulesServicer
from services.rules.shell.snapshots import SnapshotStore
from shikoku.internal.v1 import routes_pb2_grpc, rules_pb2, rules_pb2_grpc
from shikoku.v1 import lobby_pb2, lobby_pb2_grpc
from shikoku_dev.redis_server import free_port

# Redis commands that change something: the lobby's writes. (Its reads are free to repeat.)
WRITES = frozenset(
    {"SET", "SETEX", "DEL", "EXPIRE", "EVAL", "EVALSHA", "XADD", "ZADD", "SADD", "SREM", "HSET"}
)
ENTRANTS = 6  # in tables of 3: two tables a round
CLOCK = lobby_pb2.ClockOptions(
    bank_seconds=600, increment_seconds=10, policy=lobby_pb2.CLOCK_POLICY_FLAG
)
OPTIONS = lobby_pb2.TableOptions(clock=CLOCK)  # clocked tables: their watching is a write too
#: The deployment's token keys every id, credential and seed the lobby derives: every fresh
#: lobby of these tests derives the same ones.
SETTINGS = load(LobbySettings, {"SHIKOKU_INTERNAL_TOKEN": "round-crash-tests"}, "lobby")


class Crash(Exception):
    """The lobby died right after a write."""


@dataclass
class Writes:
    """The writes of one lobby, counted from `arm`; the `crash_after`-th raises Crash once
    it is done, and none is done after it (the process is dead: the lobby's other tasks,
    starting tables at the same time, write nothing more)."""

    crash_after: int = 0
    done: list[str] = field(default_factory=list)
    armed: bool = False

    def arm(self, crash_after: int = 0) -> None:
        self.crash_after, self.done, self.armed = crash_after, [], True

    def dead(self) -> None:
        """Raises Crash if the lobby has crashed already: no more writes."""
        if self.armed and self.crash_after and len(self.done) >= self.crash_after:
            raise Crash("crashed already")

    def wrote(self, what: str) -> None:
        if not self.armed:
            return
        self.done.append(what)
        if len(self.done) == self.crash_after:
            raise Crash(f"crashed after write {self.crash_after}: {what}")


class CountingRedis(redis.asyncio.Redis):
    """A real Redis client that tells `writes` of each command that changes something."""

    writes: Writes

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        name = str(args[0]).upper()
        if name in WRITES:
            self.writes.dead()
        reply = await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        if name in WRITES:
            # EVAL/EVALSHA: script, key count, then the keys; the others: their key first.
            key = args[3] if name.startswith("EVAL") else args[1]
            self.writes.wrote(f"{name} {key.decode() if isinstance(key, bytes) else key}")
        return reply


class CountingRules:
    """The lobby's real stub of the rules service, telling `writes` of each game it created;
    `hold`, when set, keeps the first CreateGame waiting for it before the call."""

    def __init__(self, stub: rules_pb2_grpc.RulesServiceAsyncStub, writes: Writes) -> None:
        self._stub = stub
        self._writes = writes
        self.hold: asyncio.Event | None = None
        self.held = asyncio.Event()

    async def CreateGame(
        self, request: rules_pb2.CreateGameRequest, **options: Any
    ) -> rules_pb2.CreateGameResponse:
        if self.hold is not None and not self.held.is_set():
            self.held.set()
            await self.hold.wait()
        self._writes.dead()
        reply = await self._stub.CreateGame(request, **options)
        self._writes.wrote(f"CreateGame {request.game_id}")
        return reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stub, name)


@asynccontextmanager
async def serving(add: Callable[[grpc.aio.Server], None]) -> AsyncIterator[str]:
    server = grpc.aio.server(interceptors=[FailuresAsStatus()])
    add(server)
    address = f"127.0.0.1:{free_port()}"
    server.add_insecure_port(address)
    await server.start()
    try:
        yield address
    finally:
        await server.stop(0)


@asynccontextmanager
async def rules_service(redis_url: str) -> AsyncIterator[str]:
    """The rules servicer on its own Redis client (its writes are not the lobby's)."""
    client = redis.asyncio.Redis.from_url(redis_url)
    routes = grpc.aio.insecure_channel(f"127.0.0.1:{free_port()}")  # CreateGame runs no routes
    games = GameRepository(EventStore(client, "game"), SnapshotStore(client))
    servicer = RulesServicer(games, routes_pb2_grpc.RouteEngineStub(routes), client)
    try:
        async with serving(
            lambda server: rules_pb2_grpc.add_RulesServiceServicer_to_server(servicer, server)
        ) as address:
            yield address
    finally:
        await routes.close(None)
        await client.aclose()


@dataclass
class Lobby:
    stub: lobby_pb2_grpc.LobbyServiceAsyncStub
    writes: Writes
    rules: CountingRules


@asynccontextmanager
async def lobby(redis_url: str, rules_address: str) -> AsyncIterator[Lobby]:
    """A fresh lobby: its own servicer, Redis client and channels, as a new process has."""
    client = cast(CountingRedis, CountingRedis.from_url(redis_url))
    writes = client.writes = Writes()
    rules_channel = grpc.aio.insecure_channel(rules_address)
    rules = CountingRules(rules_pb2_grpc.RulesServiceStub(rules_channel), writes)
    built = build_lobby(SETTINGS, client, cast("rules_pb2_grpc.RulesServiceAsyncStub", rules))
    servicer = built.servicer
    try:
        async with (
            serving(lambda s: lobby_pb2_grpc.add_LobbyServiceServicer_to_server(servicer, s)) as at,
            grpc.aio.insecure_channel(at) as channel,
        ):
            yield Lobby(lobby_pb2_grpc.LobbyServiceStub(channel), writes, rules)
    finally:
        await servicer.close()
        await rules_channel.close(None)
        await client.aclose()


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def new_tournament(stub: lobby_pb2_grpc.LobbyServiceAsyncStub) -> tuple[str, str]:
    """The tournament and its host's credential: the same ones on every fresh Redis, as every
    call has a request id (and the deployment's token keys what is derived from it)."""
    host = await stub.RegisterPlayer(
        lobby_pb2.RegisterPlayerRequest(
            display_name="Director", role=lobby_pb2.ROLE_HOST, request_id="host"
        )
    )
    entrants = [
        await stub.RegisterPlayer(
            lobby_pb2.RegisterPlayerRequest(display_name=f"Player {n}", request_id=f"p{n}")
        )
        for n in range(ENTRANTS)
    ]
    created = await stub.CreateTournament(
        lobby_pb2.CreateTournamentRequest(
            name="Crash Cup",
            player_ids=[e.player_id for e in entrants],
            table_size=3,
            table_options=OPTIONS,
            request_id="cup",
        ),
        metadata=auth(host.credential),
    )
    return created.tournament_id, host.credential


async def start_round(
    stub: lobby_pb2_grpc.LobbyServiceAsyncStub, tournament_id: str, host: str, request_id: str
) -> lobby_pb2.Tournament:
    request = lobby_pb2.StartRoundRequest(tournament_id=tournament_id, request_id=request_id)
    return await stub.StartRound(request, metadata=auth(host), timeout=10)


async def types_of(client: redis.asyncio.Redis, key: str) -> list[str]:
    entries = cast(Entries, await client.xrange(key))
    return [fields[b"t"].decode() for _id, fields in entries]


async def stored(client: redis.asyncio.Redis, tournament_id: str) -> dict[str, Any]:
    """What the round left in Redis, as far as a clean run decides it (not the hashes of
    credentials nobody holds, nor the games' own random seeds)."""
    tournament = await types_of(client, stream_key("tournament", tournament_id))
    store = EventStore(client, "tournament")
    assigned = [e.payload for e in await store.read(tournament_id) if e.type == "TablesAssigned"]
    table_ids = assigned[0]["table_ids"] if assigned else []
    tables = {}
    for table_id in table_ids:
        events = await EventStore(client, "table").read(table_id)
        game = await types_of(client, stream_key("game", table_id))
        tables[table_id] = {
            "events": [e.type for e in events],
            "seats": [(e.payload["seat"], e.payload["player_id"]) for e in events[1:-1]],
            "games created": game.count("GameCreated"),
        }
    index = sorted(m.decode() for m in cast(list[bytes], await client.zrange(TABLES_INDEX, 0, -1)))
    clocked = sorted(m.decode() for m in cast(set[bytes], await client.smembers(CLOCKED)))
    return {
        "tournament": tournament,
        "rounds": [e.payload for e in await store.read(tournament_id) if e.type == "RoundStarted"],
        "tables": tables,
        "index": index,
        "clocked": clocked,
    }


async def test_a_round_cut_short_after_any_write_is_finished_once_with_the_same_tables(
    redis_client: redis.asyncio.Redis, redis_url: str
) -> None:
    async with rules_service(redis_url) as rules_address, lobby(redis_url, rules_address) as clean:
        tournament_id, host = await new_tournament(clean.stub)
        clean.writes.arm()
        answer = await start_round(clean.stub, tournament_id, host, "round-1")
        writes = clean.writes.done
        expected = await stored(redis_client, tournament_id)
    (round_,) = answer.rounds
    tables = [table.table_id for table in round_.tables]
    assert len(tables) == 2 and all(tables)
    assert expected["tables"] == {
        table.table_id: {
            "events": ["TableCreated", "SeatTaken", "SeatTaken", "SeatTaken", "TableStarted"],
            "seats": list(enumerate(table.player_ids, start=1)),
            "games created": 1,
        }
        for table in round_.tables
    }
    assert expected["tournament"] == ["TournamentCreated", "RoundStarted", "TablesAssigned"]
    assert expected["index"] == expected["clocked"] == sorted(tables)
    # The claim of the request id, the round, each table and its listing, the round's tables,
    # each game (after its players record, a transaction, and each player's live tables), its
    # table's start and its clock watched, the answer kept.
    # The tables are created, then started, several at a time: in order phase by phase.
    kinds = [write.split()[0] for write in writes]
    creating = ["EVALSHA", "ZADD"] * 2
    starting = [*["ZADD"] * (ENTRANTS // 2), "CreateGame", "EVALSHA", "SADD"] * 2
    assert kinds[:2] == ["SET", "EVALSHA"], writes
    assert sorted(kinds[2 : 2 + len(creating)]) == sorted(creating), writes
    assert kinds[2 + len(creating)] == "EVALSHA", writes
    assert sorted(kinds[3 + len(creating) : -1]) == sorted(starting), writes
    assert kinds[-1] == "SET" and len(kinds) == 4 + len(creating) + len(starting), writes

    for crash_after in range(1, len(writes) + 1):
        for again in ("round-1", "round-1 again"):
            await redis_client.flushdb()
            async with rules_service(redis_url) as rules_address:  # no game cached from before
                async with lobby(redis_url, rules_address) as crashing:
                    assert await new_tournament(crashing.stub) == (tournament_id, host)
                    crashing.writes.arm(crash_after)
                    with pytest.raises(grpc.aio.AioRpcError):
                        await start_round(crashing.stub, tournament_id, host, "round-1")
                    # Writes under way beside the one it died after may have landed too.
                    assert len(crashing.writes.done) >= crash_after
                cut = f"cut after write {crash_after} ({writes[crash_after - 1]}), then {again!r}"
                async with lobby(redis_url, rules_address) as fresh:
                    first = await start_round(fresh.stub, tournament_id, host, again)
                    other = "round-1" if again != "round-1" else "round-1 again"
                    second = await start_round(fresh.stub, tournament_id, host, other)
                assert first == answer and second == answer, cut
                assert await stored(redis_client, tournament_id) == expected, cut


async def test_a_retry_after_a_lost_reply_answers_the_same_round(
    redis_client: redis.asyncio.Redis, redis_url: str
) -> None:
    """The client gave up waiting while the lobby was still starting the round's games (its
    reply is lost) and sends the StartRound again with the same request id."""
    async with rules_service(redis_url) as rules_address, lobby(redis_url, rules_address) as at:
        tournament_id, host = await new_tournament(at.stub)
        at.rules.hold = release = asyncio.Event()
        request = lobby_pb2.StartRoundRequest(tournament_id=tournament_id, request_id="r-1")
        first = at.stub.StartRound(request, metadata=auth(host), timeout=30)
        await asyncio.wait_for(at.rules.held.wait(), 30)  # at its first game
        first.cancel()  # gRPC cancels the handler too: the first attempt is cut short there
        with pytest.raises(asyncio.CancelledError):
            await first
        retried = await start_round(at.stub, tournament_id, host, "r-1")
        release.set()  # (had the first attempt still been waiting, it would carry on now)
        again = await start_round(at.stub, tournament_id, host, "r-2")
        assert [r.number for r in retried.rounds] == [1] and again == retried
        assert all(table.table_id for table in retried.rounds[0].tables)
        left = await stored(redis_client, tournament_id)
        assert left["tournament"] == ["TournamentCreated", "RoundStarted", "TablesAssigned"]
        assert [t["games created"] for t in left["tables"].values()] == [1, 1]
        assert all(t["events"].count("TableStarted") == 1 for t in left["tables"].values())


async def test_start_rounds_sent_at_once_make_one_round(
    redis_client: redis.asyncio.Redis, redis_url: str
) -> None:
    """A double click reaching two lobby replicas, and a client's copy of one click: all three
    at once answer the same round."""
    async with (
        rules_service(redis_url) as rules_address,
        lobby(redis_url, rules_address) as one,
        lobby(redis_url, rules_address) as two,
    ):
        tournament_id, host = await new_tournament(one.stub)
        answers = await asyncio.gather(
            start_round(one.stub, tournament_id, host, "click-1"),
            start_round(two.stub, tournament_id, host, "click-2"),
            start_round(two.stub, tournament_id, host, "click-1"),
        )
    assert answers[0] == answers[1] == answers[2] and len(answers[0].rounds) == 1
    left = await stored(redis_client, tournament_id)
    assert left["tournament"] == ["TournamentCreated", "RoundStarted", "TablesAssigned"]
    assert [t["games created"] for t in left["tables"].values()] == [1, 1]
    assert all(t["events"].count("TableStarted") == 1 for t in left["tables"].values())
    assert left["index"] == left["clocked"] == sorted(left["tables"])
