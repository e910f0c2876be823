"""A game's timeline (what the clocks read) kept between calls is the one read afresh: after
more commands, and after an undo takes one back (real Redis)."""

from __future__ import annotations

import random

import redis.asyncio

from infra.eventstore import EventStore
from services.rules.domain import events as ev
from services.rules.domain.commands import CreateGame, Undo
from services.rules.domain.decide import legal_actions
from services.rules.shell.repository import GameRepository
from tools.bots import choose, command_for

PLAYERS = tuple(ev.SeatedPlayer(seat, f"p{seat}") for seat in (1, 2, 3))


async def play(games: GameRepository, game_id: str, commands: int, rng: random.Random) -> int:
    """Plays `commands` random legal commands; returns the seat that played the last one."""
    seat = 0
    for _ in range(commands):
        state = (await games.load(game_id)).state
        command = command_for(choose(legal_actions(state), rng), rng, state)
        await games.execute(game_id, command)
        seat = command.seat
    return seat


async def test_a_kept_timeline_is_the_timeline_read_afresh(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = EventStore(redis_client, "game")
    kept, rng = GameRepository(store), random.Random(3)
    await kept.execute("g-t", CreateGame(PLAYERS, seed=5, undo_allowed=True))
    first = await kept.timeline("g-t")
    assert [m.actor for m in first] == [None]  # the creation

    last_seat = await play(kept, "g-t", 12, rng)
    after = await kept.timeline("g-t")
    assert after == await GameRepository(store).timeline("g-t")
    assert after[: len(first)] == first and len(after) == 13

    await kept.execute("g-t", Undo(last_seat))
    undone = await kept.timeline("g-t")
    assert undone == await GameRepository(store).timeline("g-t")
    assert undone == after[:-1]  # the taken-back command no longer counts

    await play(kept, "g-t", 5, rng)
    assert await kept.timeline("g-t") == await GameRepository(store).timeline("g-t")
