import asyncio

import pytest
import redis.asyncio

from infra.eventstore import EventStore, NewEvent, VersionConflict, stream_key


def batch(*types: str) -> list[NewEvent]:
    return [NewEvent(t, 1, {"n": i, "name": t}) for i, t in enumerate(types)]


async def test_key_uses_the_aggregate_id_as_hash_tag() -> None:
    assert stream_key("game", "g-1") == "game:{g-1}:events"


async def test_append_then_read_returns_events_with_gapless_versions(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = EventStore(redis_client, "game")
    assert await store.append("g-1", 0, batch("A", "B")) == 2
    assert await store.append("g-1", 2, batch("C")) == 3
    events = await store.read("g-1")
    assert [(e.version, e.type, e.payload["name"]) for e in events] == [
        (1, "A", "A"),
        (2, "B", "B"),
        (3, "C", "C"),
    ]
    assert [e.version for e in await store.read("g-1", 2)] == [2, 3]
    assert [e.version for e in await store.read("g-1", 1, 2)] == [1, 2]
    assert await store.version("g-1") == 3
    assert await store.version("unknown") == 0


async def test_append_at_a_stale_version_writes_nothing(redis_client: redis.asyncio.Redis) -> None:
    store = EventStore(redis_client, "game")
    await store.append("g-1", 0, batch("A"))
    with pytest.raises(VersionConflict) as conflict:
        await store.append("g-1", 0, batch("X", "Y"))
    assert conflict.value.actual == 1
    with pytest.raises(VersionConflict):
        await store.append("g-1", 5, batch("X"))
    assert await redis_client.xlen(store.key("g-1")) == 1


async def test_concurrent_appends_at_one_version_let_exactly_one_win(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = EventStore(redis_client, "game")
    results = await asyncio.gather(
        *(store.append("g-1", 0, batch(f"E{i}")) for i in range(10)), return_exceptions=True
    )
    assert sum(1 for r in results if r == 1) == 1
    assert sum(isinstance(r, VersionConflict) for r in results) == 9
    assert await redis_client.xlen(store.key("g-1")) == 1


async def test_payload_carries_type_and_schema_version(redis_client: redis.asyncio.Redis) -> None:
    store = EventStore(redis_client, "game")
    await store.append("g-1", 0, [NewEvent("PrivateSold", 3, {"company": "TR", "price": 20})])
    (event,) = await store.read("g-1")
    assert (event.type, event.schema_version, event.payload) == (
        "PrivateSold",
        3,
        {"company": "TR", "price": 20},
    )


async def test_follow_yields_old_events_then_new_ones_as_appended(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = EventStore(redis_client, "game")
    await store.append("g-1", 0, batch("A", "B"))
    seen: list[int] = []

    async def watch() -> None:
        async for event in store.follow("g-1", from_version=2, block_ms=100):
            seen.append(event.version)
            if event.version == 4:
                return

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0.2)
    await store.append("g-1", 2, batch("C", "D"))
    await asyncio.wait_for(watcher, 5)
    assert seen == [2, 3, 4]


async def test_a_batch_keeps_its_cause_on_its_first_event(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = EventStore(redis_client, "game")
    await store.append("g-1", 0, batch("A", "B"), cause={"type": "Pass", "seat": 2})
    await store.append("g-1", 2, batch("C"))
    causes = [event.cause for event in await store.read("g-1")]
    assert causes == [{"type": "Pass", "seat": 2}, None, None]


async def test_several_logs_read_at_once_are_each_log_whole(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = EventStore(redis_client, "table")
    await store.append("t-1", 0, batch("A", "B"))
    await store.append("t-2", 0, batch("C"))
    logs = await store.read_many(["t-2", "t-none", "t-1"])
    assert logs == [await store.read("t-2"), [], await store.read("t-1")]
    assert await store.read_many([]) == []
