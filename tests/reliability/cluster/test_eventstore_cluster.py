"""The event store on a real Redis Cluster of 3 masters, through redis-py's asyncio cluster client.

Aggregate ids have the lobby's form (`t-<12 hex>`; a game's id is its table's id) and are chosen
so that their streams land on every master.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from typing import cast

import pytest
import redis.asyncio
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import MaxConnectionsError

from infra.eventstore import (
    Appended,
    EventStore,
    NewEvent,
    StoredEvent,
    VersionConflict,
    stream_key,
)
from infra.redis_cluster import EmbeddedRedisCluster

from .conftest import cluster_client

pytestmark = pytest.mark.reliability

# The asyncio cluster client's default pool size, per node (100 in redis-py 8.1).
DEFAULT_POOL_PER_NODE: int = inspect.signature(RedisCluster).parameters["max_connections"].default


def batch(*types: str) -> list[NewEvent]:
    return [NewEvent(t, 1, {"n": i, "name": t}) for i, t in enumerate(types)]


def event_store(client: RedisCluster, kind: str = "game") -> EventStore:
    # EventStore is annotated with redis.asyncio.Redis; the cluster client has the same commands.
    return EventStore(cast(redis.asyncio.Redis, client), kind)


def ids_by_master(client: RedisCluster, per_master: int) -> dict[int, list[str]]:
    """`per_master` aggregate ids for each master (by port), from the cluster's slot map."""
    masters = {node.port for node in client.get_primaries()}
    chosen: dict[int, list[str]] = {int(port): [] for port in masters}
    for n in itertools.count():
        aggregate = f"t-{n:012x}"
        node = client.get_node_from_key(stream_key("game", aggregate))
        assert node is not None
        port = int(node.port)
        if len(chosen[port]) < per_master:
            chosen[port].append(aggregate)
        if all(len(ids) == per_master for ids in chosen.values()):
            return chosen
    raise AssertionError("unreachable")


def spread_ids(client: RedisCluster, per_master: int = 2) -> list[str]:
    chosen = ids_by_master(client, per_master)
    return [aggregate for ids in chosen.values() for aggregate in ids]


async def keys_by_master(cluster: EmbeddedRedisCluster) -> dict[int, set[str]]:
    """Every key each node really holds, asked of the node itself (not through the router)."""
    held: dict[int, set[str]] = {}
    for host, port in cluster.startup_nodes:
        async with redis.asyncio.Redis(host=host, port=port, decode_responses=True) as node:
            held[port] = set(cast(list[str], await node.keys("*")))
    return held


async def first_event(
    store: EventStore, aggregate: str, from_version: int = 1, block_ms: int = 5_000
) -> StoredEvent:
    async for event in store.follow(aggregate, from_version, block_ms):
        return event
    raise AssertionError("follow ended")


async def test_the_cluster_has_three_masters_and_covers_every_slot(
    cluster_redis: RedisCluster, redis_cluster: EmbeddedRedisCluster
) -> None:
    primaries = {int(node.port) for node in cluster_redis.get_primaries()}
    assert primaries == {port for _host, port in redis_cluster.startup_nodes}
    info = cast(
        dict[str, dict[str, str]],
        await cluster_redis.cluster_info(target_nodes=RedisCluster.ALL_NODES),
    )
    assert len(info) == 3
    for node_info in info.values():
        assert node_info["cluster_state"] == "ok"
        assert node_info["cluster_slots_ok"] == "16384"


async def test_append_then_read_and_version_on_every_master(cluster_redis: RedisCluster) -> None:
    store = event_store(cluster_redis)
    ids = spread_ids(cluster_redis)
    for aggregate in ids:
        assert await store.append(aggregate, 0, batch("A", "B"), cause={"seat": 1}) == 2
        assert await store.append(aggregate, 2, batch("C")) == 3
    for aggregate in ids:
        events = await store.read(aggregate)
        assert [(e.version, e.type, e.payload["name"]) for e in events] == [
            (1, "A", "A"),
            (2, "B", "B"),
            (3, "C", "C"),
        ]
        assert [e.cause for e in events] == [{"seat": 1}, None, None]
        assert [e.version for e in await store.read(aggregate, 2)] == [2, 3]
        assert [e.version for e in await store.read(aggregate, 1, 2)] == [1, 2]
        assert await store.version(aggregate) == 3
    assert await store.version("t-unknown") == 0
    assert await store.read("t-unknown") == []


async def test_append_at_a_stale_version_writes_nothing(cluster_redis: RedisCluster) -> None:
    store = event_store(cluster_redis)
    for aggregate in spread_ids(cluster_redis):
        await store.append(aggregate, 0, batch("A"))
        with pytest.raises(VersionConflict) as conflict:
            await store.append(aggregate, 0, batch("X", "Y"))
        assert (conflict.value.expected, conflict.value.actual) == (0, 1)
        with pytest.raises(VersionConflict):
            await store.append(aggregate, 5, batch("X"))
        assert await cluster_redis.xlen(store.key(aggregate)) == 1
        assert [e.type for e in await store.read(aggregate)] == ["A"]


async def test_concurrent_appends_at_one_version_let_exactly_one_win(
    cluster_redis: RedisCluster, redis_cluster: EmbeddedRedisCluster
) -> None:
    """Ten writers per game, from three clients (three rules processes), race at each version."""
    ids = spread_ids(cluster_redis)
    clients = [await cluster_client(redis_cluster) for _ in range(3)]
    try:
        stores = [event_store(client) for client in clients]
        for version in (0, 1):
            attempts = [
                (aggregate, stores[i % 3].append(aggregate, version, batch(f"E{version}-{i}")))
                for aggregate in ids
                for i in range(10)
            ]
            results = await asyncio.gather(*(a for _id, a in attempts), return_exceptions=True)
            for aggregate in ids:
                mine = [r for (a, _), r in zip(attempts, results, strict=True) if a == aggregate]
                assert mine.count(version + 1) == 1, mine
                assert sum(isinstance(r, VersionConflict) for r in mine) == 9, mine
        for aggregate in ids:
            assert await cluster_redis.xlen(stream_key("game", aggregate)) == 2
            assert [e.version for e in await stores[0].read(aggregate)] == [1, 2]
    finally:
        for client in clients:
            await client.aclose()


async def test_follow_yields_old_events_then_new_ones_as_appended(
    cluster_redis: RedisCluster,
) -> None:
    store = event_store(cluster_redis)
    ids = spread_ids(cluster_redis, per_master=1)
    seen: dict[str, list[int]] = {aggregate: [] for aggregate in ids}

    async def watch(aggregate: str) -> None:
        async for event in store.follow(aggregate, from_version=2, block_ms=100):
            seen[aggregate].append(event.version)
            if event.version == 4:
                return

    for aggregate in ids:
        await store.append(aggregate, 0, batch("A", "B"))
    watchers = [asyncio.create_task(watch(aggregate)) for aggregate in ids]
    await asyncio.sleep(0.3)  # past a few empty XREAD timeouts
    for aggregate in ids:
        await store.append(aggregate, 2, batch("C", "D"))
    await asyncio.wait_for(asyncio.gather(*watchers), 5)
    assert seen == {aggregate: [2, 3, 4] for aggregate in ids}


async def test_a_command_id_sent_by_many_clients_at_once_is_applied_once(
    cluster_redis: RedisCluster, redis_cluster: EmbeddedRedisCluster
) -> None:
    """The append script touches the stream and the command-id hash: two keys, one slot."""
    ids = spread_ids(cluster_redis)
    clients = [await cluster_client(redis_cluster) for _ in range(3)]
    try:
        stores = [event_store(client) for client in clients]
        for aggregate in ids:
            await stores[0].append(aggregate, 0, batch("A"))
        results = await asyncio.gather(
            *(
                stores[i % 3].append_once(aggregate, 1, batch("B", "C"), command_id="cmd-1")
                for aggregate in ids
                for i in range(10)
            )
        )
        for n, aggregate in enumerate(ids):
            mine = results[n * 10 : (n + 1) * 10]
            assert {(r.first, r.last) for r in mine} == {(2, 3)}
            assert sum(not r.duplicate for r in mine) == 1
            assert [e.type for e in await stores[1].read(aggregate)] == ["A", "B", "C"]
            assert await stores[2].applied(aggregate, "cmd-1") == Appended(2, 3, duplicate=True)
    finally:
        for client in clients:
            await client.aclose()


async def test_every_key_of_an_aggregate_is_in_one_slot_on_one_master(
    cluster_redis: RedisCluster, redis_cluster: EmbeddedRedisCluster
) -> None:
    """A table and its game share the id, so all their keys (event streams, command ids) share
    the hash tag, hence the slot and the master."""
    ids = spread_ids(cluster_redis)
    stores = [event_store(cluster_redis, kind) for kind in ("game", "table")]
    for store in stores:
        for aggregate in ids:
            await store.append_once(aggregate, 0, batch("A"), command_id="cmd-1")

    def keys_of(aggregate: str) -> set[str]:
        return {key for s in stores for key in (s.key(aggregate), s.commands_key(aggregate))}

    held = await keys_by_master(redis_cluster)
    assert set().union(*held.values()) == set().union(*(keys_of(a) for a in ids))
    for aggregate in ids:
        keys = keys_of(aggregate)
        assert len(keys) == 4
        slots = {await cluster_redis.cluster_keyslot(key) for key in keys}
        assert slots == {await cluster_redis.cluster_keyslot(aggregate)}
        holders = [port for port, node_keys in held.items() if keys & node_keys]
        assert len(holders) == 1, (aggregate, holders)
        assert keys <= held[holders[0]]
    assert sum(1 for node_keys in held.values() if node_keys) >= 2
    assert all(held.values()), "the ids were chosen to land on every master"


async def test_a_cancelled_follow_leaves_no_stale_reply_on_a_pooled_connection(
    cluster_redis: RedisCluster,
) -> None:
    """The gateway cancels a follow when its stream's client goes away, mid-XREAD. The XREAD's
    late reply must not be read as the answer to a later command on the same connection."""
    store = event_store(cluster_redis)
    ids = spread_ids(cluster_redis)
    for aggregate in ids:
        await store.append(aggregate, 0, batch("A"))

    followers = [
        asyncio.create_task(first_event(store, aggregate, from_version=2, block_ms=10_000))
        for aggregate in ids
        for _ in range(3)
    ]
    await asyncio.sleep(0.3)  # every follower is blocked in XREAD
    for follower in followers:
        follower.cancel()
    await asyncio.gather(*followers, return_exceptions=True)
    for aggregate in ids:  # unblocks any XREAD the server still has
        assert await store.append(aggregate, 1, batch("B", "C")) == 3
    for _ in range(5):
        for aggregate in ids:
            assert await store.version(aggregate) == 3
            assert [e.type for e in await store.read(aggregate)] == ["A", "B", "C"]


async def test_followers_beyond_the_default_pool_exhaust_it(
    redis_cluster: EmbeddedRedisCluster, cluster_redis: RedisCluster
) -> None:
    """Each follow holds one connection of its node for the whole XREAD block, and the cluster
    client's pool is bounded per node (the plain client's is not): past it, commands fail."""
    ids = ids_by_master(cluster_redis, DEFAULT_POOL_PER_NODE + 20).popitem()[1]
    store = event_store(cluster_redis)
    followers = [
        asyncio.create_task(first_event(store, aggregate, block_ms=2_000)) for aggregate in ids
    ]
    try:
        done, _pending = await asyncio.wait(followers, timeout=0.5)
        failures = [task.exception() for task in done]
        assert len(failures) == len(ids) - DEFAULT_POOL_PER_NODE
        assert all(isinstance(failure, MaxConnectionsError) for failure in failures)
    finally:
        for follower in followers:
            follower.cancel()
        await asyncio.gather(*followers, return_exceptions=True)


async def test_a_pool_sized_for_the_followers_carries_them_and_the_appends(
    redis_cluster: EmbeddedRedisCluster, cluster_redis: RedisCluster
) -> None:
    """Sized for every follower plus every append in flight at once, all on one master."""
    followers_count = DEFAULT_POOL_PER_NODE + 50
    ids = ids_by_master(cluster_redis, followers_count).popitem()[1]
    client = await cluster_client(redis_cluster, max_connections=2 * followers_count + 10)
    try:
        store = event_store(client)
        followers = [asyncio.create_task(first_event(store, aggregate)) for aggregate in ids]
        await asyncio.sleep(0.3)  # all blocked, on one master
        versions = await asyncio.gather(*(store.append(a, 0, batch("A")) for a in ids))
        assert versions == [1] * followers_count
        seen = await asyncio.wait_for(asyncio.gather(*followers), 10)
        assert [(event.version, event.type) for event in seen] == [(1, "A")] * followers_count
    finally:
        await client.aclose()
