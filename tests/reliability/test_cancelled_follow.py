"""A follow ends when its task is cancelled, even when the Redis client swallows the
cancellation: redis-py can, when the cancel lands as a blocking XREAD ends (redis/redis-py#2028),
and the gateway cancels a follow each time a watching client goes away."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import redis.asyncio

from infra.eventstore import EventStore


class SwallowsCancellation:
    """The real client, but its XREAD answers "nothing new" instead of being cancelled: what
    redis-py does in that race."""

    def __init__(self, real: redis.asyncio.Redis) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    async def xread(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await self._real.xread(*args, **kwargs)
        except asyncio.CancelledError:
            return []


async def follow_forever(store: EventStore) -> None:
    async for _event in store.follow("t-quiet", block_ms=100):
        raise AssertionError("nothing was appended")


async def test_a_cancelled_follow_ends_though_its_client_swallowed_the_cancellation(
    redis_url: str,
) -> None:
    client = redis.asyncio.Redis.from_url(redis_url)
    try:
        store = EventStore(cast(redis.asyncio.Redis, SwallowsCancellation(client)), "game")
        follower = asyncio.create_task(follow_forever(store))
        await asyncio.sleep(0.05)  # blocked in its XREAD
        follower.cancel()
        done, _pending = await asyncio.wait([follower], timeout=2)
        assert follower in done, "the follow went on reading after it was cancelled"
        assert follower.cancelled()
    finally:
        await client.aclose()
