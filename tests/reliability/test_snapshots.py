"""Snapshots are a cache: whatever happens to them, a game loads to the same state."""

from __future__ import annotations

import random
from pathlib import Path

import msgpack
import pytest
import redis.asyncio

from infra.eventstore import EventStore
from services.rules.domain import events as ev
from services.rules.domain.commands import Command, CreateGame, RunRoutes
from services.rules.domain.decide import legal_actions
from services.rules.domain.state import GameState, OperatingRound
from services.rules.shell.repository import GameRepository
from services.rules.shell.snapshots import SnapshotStore, snapshot_key
from tools.bots import best_routes, choose, command_for


async def _routes(state: GameState, command: Command) -> Command:
    if isinstance(command, RunRoutes) and isinstance(state.round, OperatingRound):
        return best_routes(state, state.round.current, command.seat)
    return command


async def played_game(store: EventStore, snapshots: SnapshotStore, game_id: str) -> GameState:
    games = GameRepository(store, snapshots)
    players = tuple(ev.SeatedPlayer(s, f"p{s}") for s in (1, 2, 3))
    await games.execute(game_id, CreateGame(players, seed=3))
    rng = random.Random(3)
    for _ in range(300):
        state = (await games.load(game_id)).state
        if state.result is not None:
            break
        command = command_for(choose(legal_actions(state), rng), rng, state)
        await games.execute(game_id, command, _routes)
    return (await games.load(game_id)).state


async def fresh_load(store: EventStore, snapshots: SnapshotStore, game_id: str) -> GameState:
    """As a rules process that has never seen the game."""
    return (await GameRepository(store, snapshots).load(game_id)).state


async def test_snapshots_are_written_and_used(redis_client: redis.asyncio.Redis) -> None:
    store, snapshots = EventStore(redis_client, "game"), SnapshotStore(redis_client, 50)
    final = await played_game(store, snapshots, "g-snap")
    snapshot = await snapshots.load("g-snap")
    assert snapshot is not None and snapshot.version >= 50
    assert await fresh_load(store, snapshots, "g-snap") == final


@pytest.mark.parametrize("damage", ["deleted", "corrupted", "older code", "foreign class"])
async def test_a_game_loads_whatever_happened_to_its_snapshot(
    redis_client: redis.asyncio.Redis, damage: str, tmp_path: Path
) -> None:
    store, snapshots = EventStore(redis_client, "game"), SnapshotStore(redis_client, 50)
    final = await played_game(store, snapshots, "g-snap")
    key = snapshot_key("g-snap")
    raw = await redis_client.get(key)
    assert isinstance(raw, bytes)
    match damage:
        case "deleted":
            await redis_client.delete(key)
        case "corrupted":
            await redis_client.set(key, raw[: len(raw) // 2] + b"garbage")
        case "older code":
            record = msgpack.unpackb(raw, strict_map_key=False)
            await redis_client.set(key, msgpack.packb({**record, "code": "an older version"}))
        case "foreign class":
            # Someone with write access to Redis stores a "state" that would run a program if
            # it were built: snapshots are data, and only the domain's classes are built.
            record = msgpack.unpackb(raw, strict_map_key=False)
            ran = tmp_path / "ran"
            popen = {"@d": "subprocess:Popen", "f": {"args": ["touch", str(ran)]}}
            await redis_client.set(key, msgpack.packb({**record, "state": popen}))
    reader = SnapshotStore(redis_client, 50)
    assert await reader.load("g-snap") is None
    assert await fresh_load(store, reader, "g-snap") == final
    assert not (tmp_path / "ran").exists()
