"""Game summaries through a consumer group: correct, idempotent, and recovered after a
consumer dies (XAUTOCLAIM)."""

from __future__ import annotations

import random
from typing import Any

import pytest
import redis.asyncio

from infra.eventstore import EventStore
from services.projections.game_summaries import (
    DEFAULT_CHANGE_SHARDS,
    change_note,
    changes_key,
    read_summary,
    shard_of,
)
from services.rules.domain import events as ev
from services.rules.domain.commands import CreateGame, EndGame
from services.rules.domain.decide import legal_actions
from services.rules.shell.repository import GameRepository
from services.rules.shell.summaries import GROUP, SummaryProjector, summarise
from tools.bots import choose, command_for


def repository(redis_client: redis.asyncio.Redis) -> GameRepository:
    """A repository that notes each change, as the rules service's does."""

    return GameRepository(EventStore(redis_client, "game"), change_note=change_note)


def projector(
    redis_client: redis.asyncio.Redis, consumer: str, claim_idle_ms: int = 30_000
) -> SummaryProjector:
    return SummaryProjector(redis_client, repository(redis_client), consumer, claim_idle_ms)


async def play(redis_client: redis.asyncio.Redis, game_id: str, commands: int) -> None:
    games = repository(redis_client)
    if not await EventStore(redis_client, "game").version(game_id):
        players = tuple(ev.SeatedPlayer(s, f"p{s}") for s in (1, 2, 3))
        await games.execute(game_id, CreateGame(players, seed=1))
    rng = random.Random(game_id)
    for _ in range(commands):
        state = (await games.load(game_id)).state
        await games.execute(game_id, command_for(choose(legal_actions(state), rng), rng, state))


async def expected(redis_client: redis.asyncio.Redis, game_id: str) -> dict[str, object]:
    loaded = await repository(redis_client).load(game_id)
    return summarise(game_id, loaded.version, loaded.state)


async def test_summaries_follow_every_game(redis_client: redis.asyncio.Redis) -> None:
    for game_id in ("g-a", "g-b"):
        await play(redis_client, game_id, 20)
    one = projector(redis_client, "rules-1")
    assert await one.run_once() > 0
    for game_id in ("g-a", "g-b"):
        summary = await read_summary(redis_client, game_id)
        assert summary is not None and summary.document == await expected(redis_client, game_id)
    await play(redis_client, "g-a", 5)
    await one.run_once()
    summary = await read_summary(redis_client, "g-a")
    assert summary is not None and summary.document == await expected(redis_client, "g-a")
    assert await one.run_once() == 0  # nothing new: nothing handled


async def test_a_dead_consumers_entries_are_claimed_and_handled_once_more(
    redis_client: redis.asyncio.Redis,
) -> None:
    await play(redis_client, "g-c", 15)
    doomed = projector(redis_client, "rules-dies")
    shard = shard_of("g-c")
    taken = await doomed.read_new(shard)  # read, then the process dies: never acknowledged
    assert taken and await read_summary(redis_client, "g-c") is None
    survivor = projector(redis_client, "rules-2", claim_idle_ms=0)
    assert await survivor.run_once() == len(taken)
    summary = await read_summary(redis_client, "g-c")
    assert summary is not None and summary.document == await expected(redis_client, "g-c")
    pending = await redis_client.xpending(changes_key(shard), GROUP)
    assert pending["pending"] == 0


async def test_handling_twice_or_late_changes_nothing(redis_client: redis.asyncio.Redis) -> None:
    await play(redis_client, "g-d", 10)
    one = projector(redis_client, "rules-1")
    shard = shard_of("g-d")
    notes = await one.read_new(shard)
    await one.handle(shard, notes)
    first = await read_summary(redis_client, "g-d")
    await one.handle(shard, notes)  # delivered again
    assert await read_summary(redis_client, "g-d") == first
    assert first is not None
    # An older version arriving late is not written over a newer one.
    assert not await one.write("g-d", first.version - 1, {})
    assert await read_summary(redis_client, "g-d") == first


class CountingRedis(redis.asyncio.Redis):
    """The real client, counting the commands it sends (the server's own counter would count
    every other client of a shared Redis too)."""

    sent = 0

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        self.sent += 1
        return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


async def idle_calls(redis_client: redis.asyncio.Redis, passes: int) -> int:
    """Redis commands a projector sends over `passes` passes with nothing new to handle."""
    counting = CountingRedis(connection_pool=redis_client.connection_pool)
    idle = projector(counting, "rules-idle")
    await idle.run_once()  # its groups exist from now on
    before = counting.sent
    for _ in range(passes):
        assert await idle.run_once(claim=False) == 0
    return counting.sent - before


@pytest.mark.slow  # a projector left idle a while: about half a minute
async def test_an_idle_projector_does_no_work_per_finished_game(
    redis_client: redis.asyncio.Redis,
) -> None:
    """With nothing being played, a pass costs one read per change shard, however many games
    have been played and finished."""
    await play(redis_client, "g-first", 30)
    await projector(redis_client, "rules-1").run_once()
    with_one_game = await idle_calls(redis_client, 20)
    games = repository(redis_client)
    for n in range(60):
        await play(redis_client, f"g-{n}", 30)
        await games.execute(f"g-{n}", EndGame())  # the host ends it: a finished game
    await projector(redis_client, "rules-1").run_once()
    finished = await read_summary(redis_client, "g-59")
    assert finished is not None and finished.document["finished"]
    with_many_games = await idle_calls(redis_client, 20)
    assert with_many_games == with_one_game == 20 * DEFAULT_CHANGE_SHARDS
