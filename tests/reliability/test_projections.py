"""Game summaries through a consumer group: correct, idempotent, and recovered after a
consumer dies (XAUTOCLAIM)."""

from __future__ import annotations

import random

import pytest
import redis.asyncio

from infra.eventstore import EventStore
from services.projections.game_summaries import read_summary, register_game
from services.rules.domain import events as ev
from services.rules.domain.commands import CreateGame
from services.rules.domain.decide import legal_actions
from services.rules.shell.repository import GameRepository
from services.rules.shell.summaries import GROUP, SummaryProjector, summarise
from tools.bots import choose, command_for

pytestmark = pytest.mark.reliability


async def play(redis_client: redis.asyncio.Redis, game_id: str, commands: int) -> None:
    games = GameRepository(EventStore(redis_client, "game"))
    if not await EventStore(redis_client, "game").version(game_id):
        await register_game(redis_client, game_id)
        players = tuple(ev.SeatedPlayer(s, f"p{s}") for s in (1, 2, 3))
        await games.execute(game_id, CreateGame(players, seed=1))
    rng = random.Random(game_id)
    for _ in range(commands):
        state = (await games.load(game_id)).state
        await games.execute(game_id, command_for(choose(legal_actions(state), rng), rng, state))


async def expected(redis_client: redis.asyncio.Redis, game_id: str) -> dict[str, object]:
    loaded = await GameRepository(EventStore(redis_client, "game")).load(game_id)
    return summarise(game_id, loaded.version, loaded.state)


async def test_summaries_follow_every_game(redis_client: redis.asyncio.Redis) -> None:
    for game_id in ("g-a", "g-b"):
        await play(redis_client, game_id, 20)
    projector = SummaryProjector(redis_client, "lobby-1")
    assert await projector.run_once() > 0
    for game_id in ("g-a", "g-b"):
        summary = await read_summary(redis_client, game_id)
        assert summary is not None and summary.document == await expected(redis_client, game_id)
    await play(redis_client, "g-a", 5)
    await projector.run_once()
    summary = await read_summary(redis_client, "g-a")
    assert summary is not None and summary.document == await expected(redis_client, "g-a")
    assert await projector.run_once() == 0  # nothing new: nothing handled


async def test_a_dead_consumers_entries_are_claimed_and_handled_once_more(
    redis_client: redis.asyncio.Redis,
) -> None:
    await play(redis_client, "g-c", 15)
    doomed = SummaryProjector(redis_client, "lobby-dies")
    taken = await doomed.read_new("g-c")  # read, then the process dies: never acknowledged
    assert taken and await read_summary(redis_client, "g-c") is None
    survivor = SummaryProjector(redis_client, "lobby-2", claim_idle_ms=0)
    assert await survivor.run_once() == len(taken)
    summary = await read_summary(redis_client, "g-c")
    assert summary is not None and summary.document == await expected(redis_client, "g-c")
    pending = await redis_client.xpending(EventStore(redis_client, "game").key("g-c"), GROUP)
    assert pending["pending"] == 0


async def test_handling_twice_or_late_changes_nothing(redis_client: redis.asyncio.Redis) -> None:
    await play(redis_client, "g-d", 10)
    projector = SummaryProjector(redis_client, "lobby-1")
    entries = await projector.read_new("g-d")
    await projector.handle("g-d", entries)
    first = await read_summary(redis_client, "g-d")
    await projector.handle("g-d", entries)  # delivered again
    assert await read_summary(redis_client, "g-d") == first
    assert first is not None
    # An older version arriving late is not written over a newer one.
    assert not await projector.write("g-d", first.version - 1, {})
    assert await read_summary(redis_client, "g-d") == first
