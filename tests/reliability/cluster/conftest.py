"""Cluster clients on the session's Redis Cluster (`redis_cluster`, in tests/conftest.py)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio.cluster import ClusterNode, RedisCluster

from infra.eventstore import stream_key
from shikoku_dev.redis_cluster import EmbeddedRedisCluster


async def cluster_client(cluster: EmbeddedRedisCluster, **options: Any) -> RedisCluster:
    """A `redis.asyncio.cluster.RedisCluster` on every node of `cluster`, its slot map loaded
    before any command: a client left to initialize itself on a burst of concurrent first
    commands (redis-py 8.1) re-initializes over and over, dropping connections under commands
    in flight, and retries them (an append that was written can then come back as a conflict)."""
    nodes = [ClusterNode(host, port) for host, port in cluster.startup_nodes]
    client = RedisCluster(startup_nodes=nodes, **options)
    await client.initialize()
    return client


def ids_by_master(client: RedisCluster, per_master: int) -> dict[int, list[str]]:
    """`per_master` aggregate ids for each master (by port), from the cluster's slot map; ids
    have the lobby's form (`t-<12 hex>`; a game's id is its table's id)."""
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
    """Aggregate ids whose streams land on every master."""
    chosen = ids_by_master(client, per_master)
    return [aggregate for ids in chosen.values() for aggregate in ids]


@pytest.fixture
async def cluster_redis(redis_cluster: EmbeddedRedisCluster) -> AsyncIterator[RedisCluster]:
    """A cluster client on an emptied cluster."""
    client = await cluster_client(redis_cluster)
    await client.flushall(target_nodes=RedisCluster.PRIMARIES)
    yield client
    await client.aclose()
