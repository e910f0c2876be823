"""One local Redis Cluster (3 masters, no replicas) for the whole session, and cluster clients."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from redis.asyncio.cluster import ClusterNode, RedisCluster

from infra.redis_cluster import EmbeddedRedisCluster


async def cluster_client(cluster: EmbeddedRedisCluster, **options: Any) -> RedisCluster:
    """A `redis.asyncio.cluster.RedisCluster` on every node of `cluster`, its slot map loaded
    before any command: a client left to initialize itself on a burst of concurrent first
    commands (redis-py 8.1) re-initializes over and over, dropping connections under commands
    in flight, and retries them (an append that was written can then come back as a conflict)."""
    nodes = [ClusterNode(host, port) for host, port in cluster.startup_nodes]
    client = RedisCluster(startup_nodes=nodes, **options)
    await client.initialize()
    return client


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[EmbeddedRedisCluster]:
    with EmbeddedRedisCluster(masters=3) as cluster:
        yield cluster


@pytest.fixture
async def cluster_redis(redis_cluster: EmbeddedRedisCluster) -> AsyncIterator[RedisCluster]:
    """A cluster client on an emptied cluster."""
    client = await cluster_client(redis_cluster)
    await client.flushall(target_nodes=RedisCluster.PRIMARIES)
    yield client
    await client.aclose()
