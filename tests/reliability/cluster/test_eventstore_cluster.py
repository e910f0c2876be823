"""What only the Redis Cluster adds to the event store, on a real cluster of 3 masters through
redis-py's asyncio cluster client: the slots every key of an aggregate lands in, and the client's
connection pool under followers. The event-log contract itself, which the store keeps on the
cluster as on one server and as the log in memory does, is tests/test_eventstore.py.

Aggregate ids have the lobby's form (`t-<12 hex>`; a game's id is its table's id) and are chosen
so that their streams land on every master.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import cast

import pytest
import redis.asyncio
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import MaxConnectionsError

from infra.eventstore import (
    EventStore,
    NewEvent,
    StoredEvent,
)
from shikoku_dev.redis_cluster import EmbeddedRedisCluster

from .conftest import cluster_client, ids_by_master, spread_ids

__all__ = ["ids_by_master"]  # also test_no_replica's

pytestmark = pytest.mark.slow

# The asyncio cluster client's default pool size, per node (100 in redis-py 8.1).
DEFAULT_POOL_PER_NODE: int = inspect.signature(RedisCluster).parameters["max_connections"].default


def batch(*types: str) -> list[NewEvent]:
    return [NewEvent(t, 1, {"n": i, "name": t}) for i, t in enumerate(types)]


def event_store(client: RedisCluster, kind: str = "game") -> EventStore:
    # EventStore is annotated with redis.asyncio.Redis; the cluster client has the same commands.
    return EventStore(cast(redis.asyncio.Redis, client), kind)


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
        _done, going_on = await asyncio.wait(followers, timeout=10)
        assert not going_on, "a cancelled follow went on"


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
