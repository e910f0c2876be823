"""Rate limits: token buckets in a real Redis, and the interceptor on a real grpc.aio server."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any, cast

import grpc
import pytest
import redis.asyncio
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer

from gateway.api_keys import ApiKey
from gateway.rate_limit import (
    Limits,
    RateLimit,
    TokenBuckets,
    bucket_key,
    caller_key,
    lease_size,
)
from infra.grpc_errors import Metadata
from shikoku_dev.redis_server import free_port

PEER = "ipv4:10.0.0.7:51234"


def key(token: str) -> str:
    return caller_key((("authorization", f"Bearer {token}"),), PEER)


async def take_all(buckets: TokenBuckets, key: str, calls: int) -> list[timedelta | None]:
    return [await buckets.take(key) for _ in range(calls)]


async def test_a_burst_is_allowed_then_calls_are_refused_with_a_delay(
    redis_client: redis.asyncio.Redis,
) -> None:
    buckets = TokenBuckets(redis_client, Limits(per_second=1, burst=5))
    taken = await take_all(buckets, key("alice"), 6)
    assert taken[:5] == [None] * 5
    wait = taken[5]
    assert wait is not None and timedelta(0) < wait <= timedelta(seconds=1)


async def test_the_bucket_refills_at_the_rate(redis_client: redis.asyncio.Redis) -> None:
    buckets = TokenBuckets(redis_client, Limits(per_second=20, burst=2))
    allowed = 0
    while (wait := await buckets.take(key("alice"))) is None:
        allowed += 1
    assert 2 <= allowed < 10  # some may have refilled while we were taking
    assert wait <= timedelta(milliseconds=50)  # one token takes 1/20 s
    await asyncio.sleep(wait.total_seconds() + 0.05)
    assert await buckets.take(key("alice")) is None


async def test_an_idle_bucket_holds_no_more_than_the_burst(
    redis_client: redis.asyncio.Redis,
) -> None:
    buckets = TokenBuckets(redis_client, Limits(per_second=4, burst=2))
    await take_all(buckets, key("alice"), 2)
    await asyncio.sleep(1.0)  # four tokens' worth of time
    taken = await take_all(buckets, key("alice"), 3)
    assert taken[:2] == [None, None] and taken[2] is not None


async def test_an_idle_bucket_expires(redis_client: redis.asyncio.Redis) -> None:
    buckets = TokenBuckets(redis_client, Limits(per_second=10, burst=2))
    await buckets.take(key("alice"))
    ttl_ms = await redis_client.pttl(key("alice"))
    assert 0 < ttl_ms <= 200 + 1000


async def test_each_credential_has_its_own_bucket(redis_client: redis.asyncio.Redis) -> None:
    buckets = TokenBuckets(redis_client, Limits(per_second=1, burst=2))
    assert (await take_all(buckets, key("alice"), 3))[2] is not None
    assert await take_all(buckets, key("bob"), 2) == [None, None]


def test_callers_are_credentials_or_else_ip_addresses() -> None:
    assert "alice" not in key("alice")  # only its hash is stored
    assert key("alice") != key("bob")
    assert key("alice") == caller_key((("authorization", "Bearer alice"),), "ipv4:10.0.0.8:1")
    assert caller_key((), PEER) == "ratelimit:{anon:10.0.0.7}"
    assert caller_key((), "ipv4:10.0.0.7:60000") == caller_key((), PEER)  # any connection
    assert caller_key(None, "ipv6:[::1]:51234") == "ratelimit:{anon:[::1]}"

    # Through a trusted proxy (the web bridge), the browser's address is the caller.
    proxied = (("x-forwarded-for", "6.6.6.6, 10.0.0.9"),)
    trusted = frozenset({"127.0.0.1"})
    assert caller_key(proxied, "ipv4:127.0.0.1:4000", trusted) == "ratelimit:{anon:10.0.0.9}"
    assert caller_key(proxied, PEER, trusted) == "ratelimit:{anon:10.0.0.7}"  # not trusted
    assert caller_key((), "ipv4:127.0.0.1:4000", trusted) == "ratelimit:{anon:127.0.0.1}"


def test_a_call_is_charged_to_a_bucket_chosen_without_looking_its_credential_up() -> None:
    application = ApiKey("k-0123456789ab", "bot", 0, revoked=False)
    proven = {"alice"}.__contains__
    alice, bob = auth("alice"), auth("bob")
    assert bucket_key(alice, PEER, application, proven) == key("alice")  # its own
    assert bucket_key(bob, PEER, application, proven) == "ratelimit:{key:k-0123456789ab}"
    assert bucket_key(bob, PEER, None, proven) == "ratelimit:{anon:10.0.0.7}"  # no valid key
    assert bucket_key((), PEER, application, proven) == "ratelimit:{anon:10.0.0.7}"


async def test_limits_can_be_turned_off(redis_client: redis.asyncio.Redis) -> None:
    buckets = TokenBuckets(redis_client, Limits(per_second=0))
    assert await take_all(buckets, key("alice"), 200) == [None] * 200
    assert await redis_client.exists(key("alice")) == 0


async def test_calls_go_through_when_redis_is_down(caplog: pytest.LogCaptureFixture) -> None:
    down = redis.asyncio.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0")
    buckets = TokenBuckets(down, Limits(per_second=1, burst=1))
    start = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="gateway.rate_limit"):
        assert await take_all(buckets, key("alice"), 5) == [None] * 5
    assert time.monotonic() - start < 1.0
    assert len(caplog.records) == 1
    await down.aclose()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers, like a Redis that hangs."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield int(listener.getsockname()[1])


async def test_calls_go_through_quickly_when_redis_hangs(silent_port: int) -> None:
    hung = redis.asyncio.Redis.from_url(f"redis://127.0.0.1:{silent_port}/0")
    buckets = TokenBuckets(hung, Limits(per_second=1, burst=1))
    start = time.monotonic()
    assert await take_all(buckets, key("alice"), 5) == [None] * 5
    assert time.monotonic() - start < 2.0  # one wait for Redis, then it is skipped for a while
    await hung.aclose()


# The interceptor on a real server: a unary and a streaming method that echo bytes, and health.
async def _say(request: bytes, context: Any) -> bytes:
    return request


async def _repeat(request: bytes, context: Any) -> AsyncIterator[bytes]:
    for _ in range(3):
        yield request


@pytest.fixture
async def channel(redis_client: redis.asyncio.Redis) -> AsyncIterator[grpc.aio.Channel]:
    buckets = TokenBuckets(redis_client, Limits(per_second=1, burst=3))
    # alice and bob are credentials the lobby has accepted; any other token is unproven.
    limit = RateLimit(buckets, vouched=lambda token: token in ("alice", "bob"))
    server = grpc.aio.server(interceptors=[limit])
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "test.Echo",
                {
                    "Say": grpc.unary_unary_rpc_method_handler(_say),
                    "Repeat": grpc.unary_stream_rpc_method_handler(_repeat),
                },
            )
        ]
    )
    health_pb2_grpc.add_HealthServicer_to_server(HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield channel
    await server.stop(None)


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def details(error: grpc.aio.AioRpcError) -> tuple[error_details_pb2.ErrorInfo, float]:
    """The ErrorInfo and the RetryInfo's delay in seconds."""
    trailers = cast(Metadata, error.trailing_metadata() or ())
    status = status_pb2.Status.FromString(dict(trailers)["grpc-status-details-bin"])
    info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
    assert status.details[0].Unpack(info) and status.details[1].Unpack(retry)
    return info, retry.retry_delay.ToTimedelta().total_seconds()


async def test_a_call_over_the_limit_ends_with_resource_exhausted(
    channel: grpc.aio.Channel,
) -> None:
    say: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
        "/test.Echo/Say", None, None
    )
    for _ in range(3):
        assert await say(b"hi", metadata=auth("alice")) == b"hi"
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await say(b"hi", metadata=auth("alice"))
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info, delay = details(raised.value)
    assert info.reason == "RATE_LIMITED"
    assert dict(info.metadata) == {"limit_per_second": "1", "burst": "3"}
    assert 0 < delay <= 1
    assert await say(b"hi", metadata=auth("bob")) == b"hi"


async def test_unproven_credentials_share_one_bucket(channel: grpc.aio.Channel) -> None:
    """Tokens the lobby has not vouched for are charged, before anyone looks them up, to one
    bucket (here, with no API key, the address's): a new token each call gains nothing."""
    say: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
        "/test.Echo/Say", None, None
    )
    for call in range(3):
        assert await say(b"hi", metadata=auth(f"invented-{call}")) == b"hi"
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await say(b"hi", metadata=auth("invented-3"))
    assert details(raised.value)[0].reason == "RATE_LIMITED"
    with pytest.raises(grpc.aio.AioRpcError):
        await say(b"hi")  # the address's bucket, which the invented tokens emptied
    assert await say(b"hi", metadata=auth("alice")) == b"hi"  # a proven credential's own


async def test_a_stream_costs_one_token_at_its_start(channel: grpc.aio.Channel) -> None:
    repeat: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(
        "/test.Echo/Repeat", None, None
    )
    for _ in range(3):
        assert [item async for item in repeat(b"hi")] == [b"hi"] * 3
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        _ = [item async for item in repeat(b"hi")]
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_health_checks_are_free(channel: grpc.aio.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for _ in range(10):
        reply = await health.Check(health_pb2.HealthCheckRequest())
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_calls_at_once_share_one_lease_instead_of_draining_the_bucket(
    redis_client: redis.asyncio.Redis,
) -> None:
    limits = Limits(per_second=50, burst=100)
    buckets = TokenBuckets(redis_client, limits)
    taken = await asyncio.gather(*(buckets.take(key("alice")) for _ in range(16)))
    assert taken == [None] * 16
    # Two leases at most (16 calls, 12 tokens a lease), not one a call (16 x 12 > the burst).
    left = float(await redis_client.hget(key("alice"), "tokens") or 0)
    assert left >= limits.burst - 2 * lease_size(limits)
