"""Gateways' key caches following revocations on a Redis Cluster whose master of the keys'
slot fails: a gateway's subscription, on that master, breaks; the gateway subscribes again
through another node and a revocation made after the failover reaches it (three masters with a
replica each, a short node timeout so that the failover takes two or three seconds)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator

import pytest
from redis.asyncio.cluster import RedisCluster

from gateway.api_keys import REVOCATIONS, ApiKeys
from infra.config import connect_redis
from kernel.rejection import Rejected
from shikoku_dev.redis_cluster import EmbeddedRedisCluster

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def failing_cluster() -> Iterator[EmbeddedRedisCluster]:
    with EmbeddedRedisCluster(3, 1_000, replicas=1) as cluster:
        yield cluster


async def reason(keys: ApiKeys, key: str) -> str:
    try:
        await keys.check(key)
    except Rejected as refused:
        return refused.reason
    return "OK"


async def test_a_gateway_follows_revocations_through_a_failover(
    failing_cluster: EmbeddedRedisCluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="infra.announcements")
    gateway_redis = await connect_redis("gateway", failing_cluster.cluster_url)
    operator_redis = await connect_redis("operator", failing_cluster.cluster_url)
    gateway = ApiKeys(gateway_redis, remember_seconds=60)
    following = asyncio.create_task(gateway.follow_revocations())
    try:
        issued, key = await ApiKeys(operator_redis).issue("bot")
        start = time.monotonic()
        while not gateway.following:
            assert time.monotonic() - start < 10
            await asyncio.sleep(0.01)
        assert await reason(gateway, key) == "OK"
        assert isinstance(gateway_redis, RedisCluster)
        master = gateway_redis.get_node_from_key(REVOCATIONS)
        assert master is not None
        failing_cluster.kill(master.port)  # the subscription's node and the keys' records
        await asyncio.to_thread(failing_cluster.wait_for_failover, master.port)
        await ApiKeys(operator_redis).revoke(issued.key_id)
        start = time.monotonic()
        while await reason(gateway, key) != "API_KEY_REVOKED":
            assert time.monotonic() - start < 10, "the revoked key is still taken"
            await asyncio.sleep(0.05)
        assert gateway.following
        said = [r.getMessage() for r in caplog.records if r.name == "infra.announcements"]
        assert said[0].startswith("lost API key revocations"), said
        assert said[-1] == "following API key revocations again", said
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await gateway_redis.aclose()
        await operator_redis.aclose()
