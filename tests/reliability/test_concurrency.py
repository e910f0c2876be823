"""Many writers at once on one game: optimistic concurrency and idempotent commands."""

from __future__ import annotations

import asyncio
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import pytest
import redis.asyncio

from infra.eventstore import EventStore
from kernel.rejection import Rejected
from services.rules.domain import events as ev
from services.rules.domain.commands import CreateGame, PlaceBid
from services.rules.domain.evolve import fold
from services.rules.shell.repository import GameRepository, to_domain
from tests.reliability.writer import write

PLAYERS = tuple(ev.SeatedPlayer(seat, f"p{seat}") for seat in (1, 2, 3, 4))


async def new_game(games: GameRepository, game_id: str) -> None:
    await games.execute(game_id, CreateGame(PLAYERS, seed=7))


@pytest.mark.slow  # sixteen processes, about half a minute
async def test_sixteen_writer_processes_leave_one_gapless_history(
    redis_client: redis.asyncio.Redis, redis_url: str
) -> None:
    store = EventStore(redis_client, "game")
    games = GameRepository(store)
    await new_game(games, "g-hammered")
    with ProcessPoolExecutor(16, mp_context=get_context("spawn")) as pool:
        runs = [
            asyncio.wrap_future(pool.submit(write, redis_url, "g-hammered", 8, seed))
            for seed in range(16)
        ]
        acknowledged = [version for run in await asyncio.gather(*runs) for version in run]
    stored = await store.read("g-hammered")
    versions = [event.version for event in stored]
    assert versions == list(range(1, len(stored) + 1))  # no gap, no duplicate
    assert len(acknowledged) == len(set(acknowledged))  # no version acknowledged twice
    assert set(acknowledged) <= set(versions)  # nothing acknowledged is missing
    assert len(stored) > 100
    live = (await GameRepository(store).load("g-hammered")).state
    assert fold(to_domain(event) for event in stored) == live


async def test_one_command_id_sent_fifty_times_at_once_is_applied_once(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = EventStore(redis_client, "game")
    await new_game(GameRepository(store), "g-retried")
    before = await store.version("g-retried")
    state = (await GameRepository(store).load("g-retried")).state
    (seat,) = state.acting_seats
    command = PlaceBid(seat, "MF", 35)
    # Fifty replicas of the rules service, each with its own view of the game.
    answers = await asyncio.gather(
        *(GameRepository(store).execute("g-retried", command, None, "cmd-42") for _ in range(50))
    )
    assert await store.version("g-retried") == before + 1  # exactly one batch
    assert all([e.version for e in answer.events] == [before + 1] for answer in answers)
    assert all(answer.events[0].type == "BidPlaced" for answer in answers)


async def test_a_command_id_sent_again_with_another_command_is_refused(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = EventStore(redis_client, "game")
    games = GameRepository(store)
    await new_game(games, "g-reused")
    (seat,) = (await games.load("g-reused")).state.acting_seats
    first = await games.execute("g-reused", PlaceBid(seat, "MF", 35), None, "cmd-7")
    again = await games.execute("g-reused", PlaceBid(seat, "MF", 35), None, "cmd-7")
    assert [e.version for e in again.events] == [e.version for e in first.events]
    version = await store.version("g-reused")
    with pytest.raises(Rejected) as refused:
        await games.execute("g-reused", PlaceBid(seat, "MF", 40), None, "cmd-7")
    assert refused.value.reason == "COMMAND_ID_REUSED"
    assert refused.value.details["first_version"] == str(first.events[0].version)
    assert await store.version("g-reused") == version  # nothing written
