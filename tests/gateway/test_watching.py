"""The gateway's fan-out of a game's log to its watchers, against a real Redis."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from gateway import watching
from gateway.watching import GameWatchers
from infra.eventstore import EventStore, NewEvent, StoredEvent


async def append_actions(store: EventStore, game_id: str, actions: int, size: int = 3) -> None:
    for _ in range(actions):
        version = await store.version(game_id)
        events = [NewEvent("Something", 1, {"n": version + i}) for i in range(size)]
        await store.append(game_id, version, events, cause={"command": "x"})


async def collect(
    watchers: GameWatchers, game_id: str, first: int, until: int, delay: float = 0.0
) -> list[StoredEvent]:
    """What one watcher receives up to version `until`, taking `delay` seconds per batch."""
    received: list[StoredEvent] = []
    async for batch in watchers.watch(game_id, first, quiet_seconds=0.2):
        received += batch
        await asyncio.sleep(delay)
        if received and received[-1].version >= until:
            return received
    raise AssertionError("the watch ended")


async def test_every_watcher_gets_every_event_once_in_order(
    redis_client: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watching, "QUEUE_BATCHES", 2)  # so the slow watcher overflows
    store = EventStore(redis_client, "game")
    await append_actions(store, "g", 5)
    watchers = GameWatchers(store)
    total = 15 + 40 * 3
    fast = [asyncio.create_task(collect(watchers, "g", 1, total)) for _ in range(5)]
    late = asyncio.create_task(collect(watchers, "g", 7, total))
    slow = asyncio.create_task(collect(watchers, "g", 1, total, delay=0.05))
    await asyncio.sleep(0.05)
    for _ in range(40):
        await append_actions(store, "g", 1)
    results = await asyncio.wait_for(asyncio.gather(*fast, late, slow), 30)
    for received in [*results[:5], results[6]]:
        assert [e.version for e in received] == list(range(1, total + 1))
    assert [e.version for e in results[5]] == list(range(7, total + 1))
    assert results[0][-1].payload == {"n": total - 1}
    assert watchers.feeds == 0  # the game's reader stops with its last watcher


async def test_a_quiet_game_gives_empty_batches(redis_client: redis.asyncio.Redis) -> None:
    store = EventStore(redis_client, "game")
    await append_actions(store, "quiet", 1)
    watchers = GameWatchers(store)
    batches: list[list[StoredEvent]] = []
    async for batch in watchers.watch("quiet", 1, quiet_seconds=0.1):
        batches.append(batch)
        if len(batches) == 3:
            break
    assert [len(b) for b in batches] == [3, 0, 0]
