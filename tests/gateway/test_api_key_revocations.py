"""Revoked API keys are forgotten by every gateway at once: gateways' key caches (`ApiKeys`, as
each gateway process holds one) following the revocations announced on a real Redis, and
forgetting what they remember when their subscription was lost and made again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio

from gateway.api_keys import ApiKeys
from kernel.rejection import Rejected

#: Long enough that only an announcement (or a new subscription) can explain a refusal.
REMEMBERED = 60.0


async def until(condition: Callable[[], object], seconds: float) -> float:
    """Polls `condition` every 10 ms; how long it took to hold (fails after `seconds`)."""
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < seconds, "not within the time"
        await asyncio.sleep(0.01)
    return time.monotonic() - start


async def reason(keys: ApiKeys, key: str) -> str:
    try:
        await keys.check(key)
    except Rejected as refused:
        return refused.reason
    return "OK"


@pytest.fixture
async def gateways(redis_url: str) -> AsyncIterator[list[ApiKeys]]:
    """Two gateways' key caches, each on a Redis client of its own, following revocations."""
    clients = [redis.asyncio.Redis.from_url(redis_url) for _ in range(2)]
    caches = [ApiKeys(client, remember_seconds=REMEMBERED) for client in clients]
    following = [asyncio.create_task(cache.follow_revocations()) for cache in caches]
    await until(lambda: all(cache.following for cache in caches), 5)
    yield caches
    for task in following:
        task.cancel()
    await asyncio.gather(*following, return_exceptions=True)
    for client in clients:
        await client.aclose()


async def test_every_gateway_refuses_a_revoked_key_at_once(
    redis_client: redis.asyncio.Redis, gateways: list[ApiKeys]
) -> None:
    operator = ApiKeys(redis_client)  # `shikoku api-key revoke`'s
    issued, key = await operator.issue("bot")
    _other_issued, other = await operator.issue("another bot")
    for cache in gateways:
        assert await reason(cache, key) == "OK" and await reason(cache, other) == "OK"
    await operator.revoke(issued.key_id)
    start = time.monotonic()
    while [await reason(cache, key) for cache in gateways] != ["API_KEY_REVOKED"] * 2:
        assert time.monotonic() - start < 1.0, "a gateway still takes the revoked key"
        await asyncio.sleep(0.01)
    for cache in gateways:
        assert await reason(cache, other) == "OK"  # only the revoked key is forgotten
        assert cache.remembered == 1


async def test_a_gateway_that_lost_its_subscription_forgets_every_key_it_remembers(
    redis_client: redis.asyncio.Redis, gateways: list[ApiKeys]
) -> None:
    """A revocation announced while a gateway had no subscription never reaches it: once
    subscribed again, it checks every key anew."""
    issued, key = await ApiKeys(redis_client).issue("bot")
    cache = gateways[0]
    assert await reason(cache, key) == "OK"
    # Revoked with no announcement, as one made while the subscription was down would be lost.
    await redis_client.hset(f"{{api-keys}}:key:{issued.key_id}", "revoked", 1)
    assert await reason(cache, key) == "OK"  # remembered
    await redis_client.client_kill_filter(_type="pubsub")
    await until(lambda: cache.remembered == 0, 10)
    assert await reason(cache, key) == "API_KEY_REVOKED"
    await until(lambda: cache.following, 10)


async def test_a_subscription_whose_ping_goes_unanswered_is_made_again(
    redis_url: str, redis_client: redis.asyncio.Redis
) -> None:
    """A Redis that stops answering (paused here, as a half-open connection would look) while
    the subscription's connection stays open: the follower gives it up when its ping has no
    answer, subscribes again once Redis answers, and forgets what it remembered."""
    issued, key = await ApiKeys(redis_client).issue("bot")
    client = redis.asyncio.Redis.from_url(redis_url)
    cache = ApiKeys(client, remember_seconds=REMEMBERED)
    following = asyncio.create_task(cache.follow_revocations(quiet_seconds=0.2))
    try:
        await until(lambda: cache.following, 5)
        assert await reason(cache, key) == "OK"
        await redis_client.hset(f"{{api-keys}}:key:{issued.key_id}", "revoked", 1)  # unheard
        await redis_client.client_pause(1500, all=True)
        await until(lambda: not cache.following, 5)  # the ping went unanswered
        await until(lambda: cache.following, 10)  # subscribed again after the pause
        assert await reason(cache, key) == "API_KEY_REVOKED"
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await client.aclose()
