"""A writer process for the concurrency tests: plays random legal commands into one game."""

from __future__ import annotations

import asyncio
import random

from redis.asyncio import Redis

from infra.eventstore import EventStore
from kernel.rejection import Rejected
from services.rules.domain.commands import Command, RunRoutes
from services.rules.domain.decide import legal_actions
from services.rules.domain.state import GameState, OperatingRound
from services.rules.shell.repository import GameRepository
from tools.bots import best_routes, choose, command_for


async def _fresh_routes(state: GameState, command: Command) -> Command:
    """Routes are priced on the state they are decided on (as the rules service does)."""
    if isinstance(command, RunRoutes) and isinstance(state.round, OperatingRound):
        return best_routes(state, state.round.current, command.seat)
    return command


async def _write(redis_url: str, game_id: str, commands: int, seed: int) -> list[int]:
    """Versions written by `commands` accepted commands (fewer only if the game ends or most
    tries keep losing the race: at most twenty tries a command)."""
    rng = random.Random(seed)
    redis = Redis.from_url(redis_url)
    games = GameRepository(EventStore(redis, "game"))
    acknowledged: list[int] = []
    accepted = 0
    try:
        for _ in range(20 * commands):
            if accepted == commands:
                break
            state = (await games.load(game_id)).state
            if state.result is not None:
                break
            command = command_for(choose(legal_actions(state), rng), rng, state)
            try:
                stored = (await games.execute(game_id, command, _fresh_routes)).events
            except Rejected:
                continue  # another writer got there first and changed what is legal
            acknowledged += [event.version for event in stored]
            accepted += 1
    finally:
        await redis.aclose()
    return acknowledged


def write(redis_url: str, game_id: str, commands: int, seed: int) -> list[int]:
    return asyncio.run(_write(redis_url, game_id, commands, seed))
