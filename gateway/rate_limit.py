"""Per-caller rate limits at the gateway: a token bucket per caller, kept in Redis so that
every gateway replica charges the same bucket.

A call is charged before any credential it carries is looked up, so the bucket is chosen from
what the gateway already knows:

- a bearer credential the lobby has accepted on this gateway lately
  (`Authorization.vouches_for`): the credential's own bucket, `ratelimit:{<sha256 of it>}`
  (the token itself is never stored);
- any other bearer credential, with a valid API key: the key's bucket, `ratelimit:{key:<key
  id>}`, shared by every unproven credential sent with that key, so that no more than
  burst + rate * t such calls of one key reach the lobby in t seconds, however many tokens
  are made up;
- no bearer credential, or no valid API key: the client address's bucket,
  `ratelimit:{anon:<ip>}`.

Each call takes one token (a streaming call one, when it starts); a bucket holds at most `burst`
tokens and refills at `per_second` (the API key's own limits, when it has them). Health checks
and reflection are free. When Redis does not answer, calls go through unlimited: the limiter
must never be the reason the gateway is down.

A gateway does not ask Redis for every token: it takes a lease of several at once from the
shared bucket (`lease_size`: about a quarter of a second's worth, at most a quarter of the
burst, one for small limits) and spends them locally; a lease not spent within
`LEASE_SECONDS` is dropped, and a bucket found empty is refused locally until Redis said a
token would be back. So across any number of gateways no more calls go through than the
shared bucket holds (burst + rate * t in t seconds): a lease can only hold back tokens, never
add any. The tolerance is the other way: a caller whose calls move to another gateway may find
up to one lease fewer tokens there for LEASE_SECONDS, and a bucket's PTTL counts from its last
lease. A caller at the full rate costs Redis about four calls a second per gateway, whatever
its rate.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from cachetools import TTLCache
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

from gateway import metrics
from gateway.api_keys import ApiKey, ApiKeys, api_key_from
from infra.call_chain import Admission
from infra.deployment_token import carries_token
from infra.grpc_types import Context
from infra.metadata import optional_bearer_token
from kernel.rejection import Kind, Rejected

log = logging.getLogger(__name__)

# KEYS: the bucket (a hash: tokens, and `at`, the last refill in ms). ARGV: tokens per second,
# burst, the most tokens to take. Takes as many as it holds, up to that. Returns {taken, 0} when
# some were taken, {0, ms until one is there} when none was. The clock is Redis's (TIME), so
# gateways with skewed clocks agree.
_TAKE = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local wanted = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(bucket[1]) or burst
local at = tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local taken, wait = math.min(wanted, math.floor(tokens)), 0
if taken >= 1 then
  tokens = tokens - taken
else
  taken = 0
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
-- An idle bucket is full again after burst / rate seconds, and a missing one counts as full.
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {taken, wait}
"""

#: How long a gateway may spend the tokens it leased from a bucket before it drops what is
#: left; a lease holds about this long's worth of the rate.
LEASE_SECONDS = 0.25
#: The most buckets a gateway holds leases (or an empty bucket's refusal) of at once.
LEASES_KEPT = 100_000


def lease_size(limits: Limits) -> int:
    """How many tokens one lease takes: LEASE_SECONDS of the rate, at most a quarter of the
    burst, at least one (small limits are charged a token at a time, exactly)."""
    return max(1, min(limits.burst // 4, int(limits.per_second * LEASE_SECONDS)))


@dataclass(slots=True)
class _Lease:
    tokens: int
    until: float  # monotonic: spent by then, or dropped


# A call waits at most this long for Redis before going through uncharged; after a failure,
# calls skip Redis for a while so that a Redis that hangs does not slow every call.
REDIS_SECONDS = 0.25
SKIP_REDIS_SECONDS = 2.0

DEFAULT_PER_SECOND = 50.0
DEFAULT_BURST = 100


@dataclass(frozen=True, slots=True)
class Limits:
    """`per_second` 0 turns the limits off. Calls without a credential from a host in
    `trusted_proxies`, or that carry `proxy_token` (the deployment's: our own web bridge), are
    charged to the address their X-Forwarded-For names."""

    per_second: float = DEFAULT_PER_SECOND
    burst: int = DEFAULT_BURST
    trusted_proxies: frozenset[str] = frozenset()
    proxy_token: str = ""

    def __post_init__(self) -> None:
        if self.per_second < 0 or (self.per_second > 0 and self.burst < 1):
            raise ValueError(f"rate limits need a rate >= 0 and a burst >= 1: {self}")

    @property
    def enabled(self) -> bool:
        return self.per_second > 0

    def for_application(self, application: ApiKey | None) -> Limits:
        """These limits, with those the application's API key sets in their place."""
        if application is None:
            return self
        return dataclasses.replace(
            self,
            per_second=self.per_second
            if application.per_second is None
            else application.per_second,
            burst=self.burst if application.burst is None else application.burst,
        )


def caller_key(
    metadata: Iterable[tuple[str, str | bytes]] | None,
    peer: str,
    trusted_proxies: frozenset[str] = frozenset(),
    proxy_token: str = "",
) -> str:
    """The caller's key: per credential, or per IP address for calls without one (the
    stream quota's caller; the rate limit's bucket is `bucket_key`)."""
    if token := optional_bearer_token(metadata):
        return credential_key(token)
    return address_key(metadata, peer, trusted_proxies, proxy_token)


def credential_key(token: str) -> str:
    return f"ratelimit:{{{hashlib.sha256(token.encode()).hexdigest()}}}"


def application_key(key_id: str) -> str:
    return f"ratelimit:{{key:{key_id}}}"


def address_key(
    metadata: Iterable[tuple[str, str | bytes]] | None,
    peer: str,
    trusted_proxies: frozenset[str] = frozenset(),
    proxy_token: str = "",
) -> str:
    """The bucket of the caller's IP address: the address a trusted proxy forwarded for, when
    the call comes through one (a host in `trusted_proxies`, or our web bridge, which sends the
    deployment's token, `proxy_token`)."""
    # gRPC peers look like ipv4:10.0.0.7:51234 or ipv6:[::1]:51234; the port changes with
    # every connection, so it is left out.
    kind, _, address = peer.partition(":")
    host = address.rsplit(":", 1)[0] if kind in ("ipv4", "ipv6") else peer
    if host in trusted_proxies or carries_token(metadata, proxy_token):
        host = _forwarded_for(metadata) or host
    return f"ratelimit:{{anon:{host}}}"


def bucket_key(
    metadata: Iterable[tuple[str, str | bytes]] | None,
    peer: str,
    application: ApiKey | None,
    vouched: Callable[[str], bool],
    trusted_proxies: frozenset[str] = frozenset(),
    proxy_token: str = "",
) -> str:
    """The bucket a call is charged to, chosen without looking its credential up: its
    credential's own if `vouched` for it, else its (valid) API key's if it sends a credential,
    else its address's."""
    token = optional_bearer_token(metadata)
    if token and vouched(token):
        return credential_key(token)
    if token and application is not None:
        return application_key(application.key_id)
    return address_key(metadata, peer, trusted_proxies, proxy_token)


def _vouch_for_none(token: str) -> bool:
    return False


def _forwarded_for(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The address the nearest proxy saw (the last of X-Forwarded-For: earlier entries came
    from the caller, who may have made them up)."""
    for key, value in metadata or ():
        if key.lower() == "x-forwarded-for" and isinstance(value, str):
            return value.rsplit(",", 1)[-1].strip()
    return ""


class TokenBuckets:
    def __init__(self, redis: Redis | RedisCluster, limits: Limits) -> None:
        self.limits = limits
        self._take = redis.register_script(_TAKE)
        self._skip_redis_until = 0.0
        self._failing = False
        self._leases: TTLCache[str, _Lease] = TTLCache(LEASES_KEPT, LEASE_SECONDS)
        # Buckets found empty: when Redis said a token is back (monotonic).
        self._empty: TTLCache[str, float] = TTLCache(LEASES_KEPT, SKIP_REDIS_SECONDS)
        # Leases being taken now, by bucket: done when the lease is in `_leases`.
        self._leasing: dict[str, asyncio.Future[None]] = {}

    async def take(self, key: str, limits: Limits | None = None) -> timedelta | None:
        """Takes a token from the bucket at `key` (filled at `limits`, by default the
        gateway's): from this gateway's lease of it, else from a new lease. None when the call
        may go ahead; otherwise how long until the bucket holds a token again."""
        limits = limits or self.limits
        if not limits.enabled:
            return None
        while True:
            now = time.monotonic()
            lease = self._leases.get(key)
            if lease is not None and lease.tokens > 0 and now < lease.until:
                lease.tokens -= 1
                return None
            back = self._empty.get(key)
            if back is not None and now < back:
                return timedelta(seconds=back - now)
            if now < self._skip_redis_until:
                metrics.UNCHARGED.inc()
                return None
            # One lease of a bucket at a time: calls that come meanwhile share what it brings
            # (each taking its own lease would drain the bucket a burst could use).
            pending = self._leasing.get(key)
            if pending is None:
                break
            await asyncio.shield(pending)
        leasing = self._leasing[key] = asyncio.get_running_loop().create_future()
        try:
            return await self._lease(key, limits)
        finally:
            del self._leasing[key]
            leasing.set_result(None)

    async def _lease(self, key: str, limits: Limits) -> timedelta | None:
        """A new lease of the bucket at `key`, its first token taken (None), or how long until
        the bucket holds one."""
        try:
            taken, wait_ms = await asyncio.wait_for(
                self._take(keys=[key], args=[limits.per_second, limits.burst, lease_size(limits)]),
                REDIS_SECONDS,
            )
        except (RedisError, OSError) as error:  # TimeoutError is an OSError
            metrics.UNCHARGED.inc()
            self._skip_redis_until = time.monotonic() + SKIP_REDIS_SECONDS
            if not self._failing:
                self._failing = True
                log.warning("rate limits are off until Redis answers again: %r", error)
            return None
        if self._failing:
            self._failing = False
            log.warning("rate limits are on again")
        if int(taken) >= 1:
            if int(taken) > 1:
                self._leases[key] = _Lease(int(taken) - 1, time.monotonic() + LEASE_SECONDS)
            return None
        wait = timedelta(milliseconds=int(wait_ms))
        self._empty[key] = time.monotonic() + wait.total_seconds()
        return wait

    def refusal(self, wait: timedelta, limits: Limits | None = None) -> Rejected:
        per_second, burst = (limits or self.limits).per_second, (limits or self.limits).burst
        return Rejected(
            "RATE_LIMITED",
            f"too many calls: at most {per_second:g} a second, in bursts of up to {burst}; "
            f"retry in {wait.total_seconds():.3f} s",
            Kind.RESOURCE_EXHAUSTED,
            {"limit_per_second": f"{per_second:g}", "burst": burst},
            retry_after=wait,
        )


class RateLimit(Admission):
    """Charges every call but health checks and reflection to its bucket (`bucket_key`), and
    ends it with RESOURCE_EXHAUSTED (reason RATE_LIMITED, with a RetryInfo) when the bucket is
    empty. `vouched` says which credentials the lobby has accepted lately (by default none:
    every credential is charged to its API key)."""

    def __init__(
        self,
        buckets: TokenBuckets,
        api_keys: ApiKeys | None = None,
        vouched: Callable[[str], bool] = _vouch_for_none,
    ) -> None:
        self._buckets = buckets
        self._api_keys = api_keys
        self._vouched = vouched

    async def admit(self, method: str, request: Any, context: Context) -> None:
        metadata = context.invocation_metadata()
        defaults = self._buckets.limits
        application = await self._application(api_key_from(metadata))
        key = bucket_key(
            metadata,
            context.peer(),
            application,
            self._vouched,
            defaults.trusted_proxies,
            defaults.proxy_token,
        )
        limits = defaults.for_application(application)
        if (wait := await self._buckets.take(key, limits)) is not None:
            metrics.RATE_LIMITED.inc()
            raise self._buckets.refusal(wait, limits)

    async def _application(self, api_key: str) -> ApiKey | None:
        """The caller's application, if it can be told quickly (its limits replace the
        defaults); a Redis that hangs must not hold every call up here."""
        if self._api_keys is None:
            return None
        try:
            return await asyncio.wait_for(self._api_keys.known(api_key), REDIS_SECONDS)
        except TimeoutError:
            return None
