"""The embedded cluster with replicas: replication, a master's failover, and the old master's
return, on real redis-server processes (3 masters, 3 replicas, a 1 s node timeout).

The tests share one cluster and run in order: the last one fails a master over.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, cast

import pytest
import redis.asyncio
from redis.asyncio.cluster import RedisCluster

from shikoku_dev.redis_cluster import HOST, EmbeddedRedisCluster

from .conftest import cluster_client

pytestmark = pytest.mark.slow

NODE_TIMEOUT_MS = 1_000


@pytest.fixture(scope="module")
def cluster() -> Iterator[EmbeddedRedisCluster]:
    """Its own cluster, not the session's: these tests kill nodes."""
    with EmbeddedRedisCluster(masters=3, replicas=1, node_timeout_ms=NODE_TIMEOUT_MS) as started:
        yield started


async def replication(port: int) -> dict[str, Any]:
    """INFO replication of one node, asked of the node itself."""
    async with redis.asyncio.Redis(host=HOST, port=port, decode_responses=True) as node:
        info: dict[str, Any] = await node.info("replication")
        return info


async def held_keys(port: int) -> set[str]:
    """Every key one node holds (KEYS is keyless, so a replica answers it too)."""
    async with redis.asyncio.Redis(host=HOST, port=port, decode_responses=True) as node:
        return set(cast(list[str], await node.keys("*")))


def master_port_of(client: RedisCluster, key: str) -> int:
    node = client.get_node_from_key(key)
    assert node is not None
    return int(node.port)


async def write_across_slots(client: RedisCluster, prefix: str, count: int) -> dict[str, str]:
    """`count` keys in as many slots, on every master."""
    keys = {f"{prefix}:{n}": str(n) for n in range(count)}
    for key, value in keys.items():
        await client.set(key, value)
    masters = {int(node.port) for node in client.get_primaries()}
    assert {master_port_of(client, key) for key in keys} == masters
    return keys


async def test_every_master_has_one_replica_whose_link_is_up(
    cluster: EmbeddedRedisCluster,
) -> None:
    masters, replicas = cluster.masters_ports(), cluster.replica_ports()
    assert len(masters) == len(replicas) == 3
    assert {port for _host, port in cluster.startup_nodes} == set(masters) | set(replicas)
    followed = []
    for port in replicas:
        info = await replication(port)
        assert info["master_link_status"] == "up", (port, info)
        followed.append(int(info["master_port"]))
    assert sorted(followed) == sorted(masters)

    client = await cluster_client(cluster)
    try:
        assert {int(node.port) for node in client.get_primaries()} == set(masters)
        assert {int(node.port) for node in client.get_replicas()} == set(replicas)
    finally:
        await client.aclose()


def test_the_cluster_url_names_every_node(cluster: EmbeddedRedisCluster) -> None:
    assert cluster.cluster_url.startswith("redis+cluster://")
    named = cluster.cluster_url.removeprefix("redis+cluster://").split(",")
    assert named == [f"{host}:{port}" for host, port in cluster.startup_nodes]
    assert cluster.url in {f"redis://{address}" for address in named}


async def test_writes_reach_the_replicas(cluster: EmbeddedRedisCluster) -> None:
    client = await cluster_client(cluster, decode_responses=True)
    try:
        keys = await write_across_slots(client, "replicated", 60)
        cluster.wait_for_replication()
        for port in cluster.replica_ports():
            master = int((await replication(port))["master_port"])
            expected = {key for key in keys if master_port_of(client, key) == master}
            assert expected <= await held_keys(port)
        # WAIT counts the writes of its own connection: one write on each master, then WAIT.
        for master in cluster.masters_ports():
            key = next(k for k in keys if master_port_of(client, k) == master)
            async with redis.asyncio.Redis(host=HOST, port=master) as node:
                await node.set(key, "waited")
                assert await node.wait(1, 2_000) == 1
    finally:
        await client.aclose()


async def test_a_killed_replica_restarts_as_the_same_masters_replica(
    cluster: EmbeddedRedisCluster,
) -> None:
    replica = cluster.replica_ports()[0]
    master = int((await replication(replica))["master_port"])
    cluster.kill(replica)
    assert replica not in cluster.replica_ports()
    with pytest.raises(ValueError, match="not a master stopped by kill"):
        cluster.wait_for_failover(replica, timeout=1)
    cluster.restart(replica)
    info = await replication(replica)
    assert (int(info["master_port"]), info["master_link_status"]) == (master, "up")
    assert master in cluster.masters_ports()


async def test_a_killed_master_fails_over_and_rejoins_as_a_replica(
    cluster: EmbeddedRedisCluster,
) -> None:
    client = await cluster_client(cluster, decode_responses=True)
    try:
        keys = await write_across_slots(client, "before", 300)
    finally:
        await client.aclose()
    cluster.wait_for_replication()
    old = cluster.masters_ports()[0]
    [standby] = [
        port
        for port in cluster.replica_ports()
        if int((await replication(port))["master_port"]) == old
    ]

    cluster.kill(old)
    started = time.monotonic()
    promoted = cluster.wait_for_failover(old, timeout=15)
    # Detection takes the node timeout, then the FAIL vote, then a 0.5-1 s election delay.
    assert time.monotonic() - started < 10 * NODE_TIMEOUT_MS / 1_000
    assert promoted == standby
    masters = cluster.masters_ports()
    assert len(masters) == 3
    assert promoted in masters
    assert old not in masters

    fresh = await cluster_client(cluster, decode_responses=True)
    try:
        assert {key: await fresh.get(key) for key in keys} == keys
        lost = {key for key in keys if master_port_of(fresh, key) == promoted}
        assert lost, "the killed master held some of the keys"
        assert await fresh.set("after", "1")

        cluster.restart(old)
        assert old in cluster.replica_ports()
        assert promoted in cluster.masters_ports()
        info = await replication(old)
        assert (int(info["master_port"]), info["master_link_status"]) == (promoted, "up")
        # It was killed holding nothing on disk: what it holds now came from the new master.
        assert lost <= await held_keys(old)
        assert {key: await fresh.get(key) for key in keys} == keys
    finally:
        await fresh.aclose()
