"""API keys: which client application is calling.

Every public call carries the application's key in `x-api-key` metadata, besides the player's
own credential (if any). The operator issues and revokes keys with `shikoku api-key`. A key is
`<key id>.<secret>`; Redis keeps, per key id, the application's name and the secret's hash, so
a leaked database does not leak usable keys. A key identifies an application, it does not stand
for a person: a browser page's key is public.

A gateway remembers a key it has checked for `REMEMBER_SECONDS`. A revocation is announced on
the Redis channel `REVOCATIONS` (plain PUBLISH, which a Redis Cluster passes to every node), and
every gateway following it (`ApiKeys.follow_revocations`) forgets the key at once. A gateway
that may have missed announcements, because its subscription was lost and made again, forgets
every key it remembers; one that has lost it without noticing still forgets each key
`REMEMBER_SECONDS` after checking it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar, cast

from cachetools import TTLCache
from redis.asyncio import Redis
from redis.exceptions import RedisError

from infra.announcements import QUIET_SECONDS, announce, follow
from infra.config import connect_redis
from kernel.rejection import Kind, Rejected

API_KEY_HEADER = "x-api-key"
KEY_PREFIX = "k-"
SEPARATOR = "."
# Every key record and the index share the hash tag {api-keys}: issuing one is a single-slot
# transaction, and listing them all reads one slot (API keys are few).
INDEX = "{api-keys}:index"
_T = TypeVar("_T")

# A gateway remembers a checked key this long: the backstop for a revocation whose announcement
# it missed (announced ones reach every following gateway at once).
REMEMBER_SECONDS = 10.0
#: Most keys a gateway remembers (the least recently used go first).
KEYS_REMEMBERED = 10_000
#: The channel `revoke` announces a revoked key's id on. In the slot of the keys' records, so
#: that a sharded channel could replace it without moving anything.
REVOCATIONS = "{api-keys}:revoked"

MISSING = Rejected(
    "MISSING_API_KEY",
    f"every call needs the client application's key in `{API_KEY_HEADER}` metadata",
    Kind.UNAUTHENTICATED,
)
INVALID = Rejected("INVALID_API_KEY", "the API key is not valid", Kind.UNAUTHENTICATED)
REVOKED = Rejected("API_KEY_REVOKED", "the API key was revoked", Kind.UNAUTHENTICATED)


@dataclass(frozen=True, slots=True)
class ApiKey:
    """An application's key. `per_second` and `burst`, when set, are the rate limits for its
    callers in place of the gateway's defaults (a bot playing at machine speed needs more)."""

    key_id: str
    name: str
    created_at_ms: int
    revoked: bool
    per_second: float | None = None
    burst: int | None = None
    #: Whether its users may register as tournament hosts (an operator's decision per key).
    hosts: bool = False


def _record(key_id: str) -> str:
    return f"{{api-keys}}:key:{key_id}"


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def api_key_from(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    for key, value in metadata or ():
        if key.lower() == API_KEY_HEADER and isinstance(value, str):
            return value.strip()
    return ""


class ApiKeys:
    def __init__(self, redis: Redis, remember_seconds: float = REMEMBER_SECONDS) -> None:
        self._redis = redis
        self._checked: TTLCache[str, ApiKey] | None = (
            TTLCache(KEYS_REMEMBERED, remember_seconds) if remember_seconds > 0 else None
        )
        # Grows with every key forgotten: a check that read a record before then does not
        # remember what it read (it may be from before the revocation).
        self._forgotten = 0
        #: Whether a subscription to REVOCATIONS is in place now.
        self.following = False

    @property
    def remembered(self) -> int:
        """Keys checked lately, answered without Redis."""
        return len(self._checked) if self._checked is not None else 0

    def forget(self, key_id: str) -> None:
        """Forgets the key `key_id` (every key string of it that was remembered)."""
        self._forgotten += 1
        if self._checked is not None:
            prefix = key_id + SEPARATOR
            for api_key in [key for key in self._checked if key.startswith(prefix)]:
                self._checked.pop(api_key, None)

    def forget_all(self) -> None:
        self._forgotten += 1
        if self._checked is not None:
            self._checked.clear()

    def heard(self, key_id: str) -> None:
        """A revocation announced (`infra.announcements.follow`)."""
        self.forget(key_id)

    def missed(self) -> None:
        """A (re)subscription: revocations announced while there was none were missed."""
        self.forget_all()

    async def follow_revocations(self, quiet_seconds: float = QUIET_SECONDS) -> None:
        """Forgets each key whose revocation is announced, for as long as it runs (until
        cancelled); every (re)subscription forgets every key (`infra.announcements.follow`)."""
        await follow(self._redis, REVOCATIONS, self, "API key revocations", quiet_seconds)

    async def issue(
        self,
        name: str,
        per_second: float | None = None,
        burst: int | None = None,
        hosts: bool = False,
    ) -> tuple[ApiKey, str]:
        """A new key for the application `name` (with rate limits of its own, when given): its
        record, and the key itself (shown once)."""
        if not name.strip():
            raise Rejected("MISSING_NAME", "an API key needs the application's name")
        if (per_second is not None and per_second < 0) or (burst is not None and burst < 1):
            raise Rejected("INVALID_LIMITS", "a key's rate is >= 0 a second and its burst >= 1")
        key_id = f"{KEY_PREFIX}{secrets.token_hex(6)}"
        secret = secrets.token_urlsafe(24)
        created_at_ms = int(time.time() * 1000)
        issued = ApiKey(key_id, name.strip(), created_at_ms, False, per_second, burst, hosts)
        fields: dict[str, str | int | float] = {
            "name": issued.name,
            "secret_hash": _digest(secret),
            "created_at_ms": issued.created_at_ms,
            "revoked": 0,
        }
        if per_second is not None:
            fields["per_second"] = per_second
        if burst is not None:
            fields["burst"] = burst
        if hosts:
            fields["hosts"] = 1
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(_record(key_id), mapping=fields)  # type: ignore[arg-type]
            pipe.sadd(INDEX, key_id)
            await pipe.execute()
        return issued, f"{key_id}{SEPARATOR}{secret}"

    async def revoke(self, key_id: str) -> ApiKey:
        """Marks the key revoked, then announces it to the gateways. Should the announcement
        fail, the key is revoked all the same: gateways refuse it once they forget it."""
        found = await self._load(key_id)
        if found is None:
            raise Rejected("API_KEY_NOT_FOUND", f"no API key {key_id}", Kind.NOT_FOUND)
        await self._redis.hset(_record(key_id), "revoked", 1)
        self.forget(key_id)
        # Should the announcement fail, gateways refuse the key within REMEMBER_SECONDS.
        await announce(self._redis, REVOCATIONS, key_id)
        return dataclasses.replace(found, revoked=True)

    async def all(self) -> list[ApiKey]:
        members = cast(set[bytes], await self._redis.smembers(INDEX))
        ids = sorted(member.decode() for member in members)
        return [key for key_id in ids if (key := await self._load(key_id)) is not None]

    async def check(self, api_key: str) -> ApiKey:
        """The application `api_key` belongs to; refuses a missing, unknown or revoked key."""
        if not api_key:
            raise MISSING
        if self._checked is not None and (remembered := self._checked.get(api_key)) is not None:
            return remembered
        key_id, separator, secret = api_key.partition(SEPARATOR)
        if not separator or not key_id.startswith(KEY_PREFIX):
            raise INVALID
        forgotten = self._forgotten
        fields = cast(dict[bytes, bytes], await self._redis.hgetall(_record(key_id)))
        stored_hash = fields.get(b"secret_hash", b"").decode()
        if not stored_hash or not secrets.compare_digest(stored_hash, _digest(secret)):
            raise INVALID
        found = _parse(key_id, fields)
        if found.revoked:
            raise REVOKED
        if self._checked is not None and forgotten == self._forgotten:
            self._checked[api_key] = found
        return found

    async def known(self, api_key: str) -> ApiKey | None:
        """The application `api_key` belongs to, or None when it is missing, unknown, revoked
        or cannot be checked now: for deciding how to treat a call, never for letting it in."""
        try:
            return await self.check(api_key)
        except (Rejected, RedisError, OSError):
            return None

    async def _load(self, key_id: str) -> ApiKey | None:
        fields = cast(dict[bytes, bytes], await self._redis.hgetall(_record(key_id)))
        return _parse(key_id, fields) if fields else None


def _parse(key_id: str, fields: dict[bytes, bytes]) -> ApiKey:
    return ApiKey(
        key_id=key_id,
        name=fields[b"name"].decode(),
        created_at_ms=int(fields[b"created_at_ms"]),
        revoked=fields.get(b"revoked") == b"1",
        per_second=float(fields[b"per_second"]) if b"per_second" in fields else None,
        burst=int(fields[b"burst"]) if b"burst" in fields else None,
        hosts=fields.get(b"hosts") == b"1",
    )


async def _with_keys(redis_url: str, job: Callable[[ApiKeys], Awaitable[_T]]) -> _T:
    redis = await connect_redis("shikoku api-key", redis_url)
    try:
        return await job(ApiKeys(redis))
    finally:
        await redis.aclose()


def issue_api_key(redis_url: str, name: str, hosts: bool = False) -> str:
    """A new key for the application `name`, for programs that are not themselves async."""

    async def issue(keys: ApiKeys) -> str:
        return (await keys.issue(name, hosts=hosts))[1]

    return asyncio.run(_with_keys(redis_url, issue))


def api_key_command(
    redis_url: str,
    action: str,
    argument: str,
    per_second: float | None = None,
    burst: int | None = None,
    hosts: bool = False,
) -> int:
    """`shikoku api-key create NAME [--per-second N --burst N] [--hosts] | list | revoke
    KEY_ID`."""

    async def create(keys: ApiKeys) -> None:
        issued, key = await keys.issue(argument, per_second, burst, hosts)
        print(f"{issued.key_id}\t{issued.name}")
        print(key)

    async def list_all(keys: ApiKeys) -> None:
        for found in await keys.all():
            rate = "default" if found.per_second is None else f"{found.per_second:g}"
            burst = "default" if found.burst is None else str(found.burst)
            limits = f"{rate}/s, burst {burst}"
            state = "revoked" if found.revoked else "active"
            scope = "players and hosts" if found.hosts else "players"
            print(f"{found.key_id}\t{found.name}\t{state}\t{limits}\t{scope}")

    async def revoke(keys: ApiKeys) -> None:
        revoked = await keys.revoke(argument)
        print(f"{revoked.key_id}\t{revoked.name}\trevoked")

    jobs = {"create": create, "list": list_all, "revoke": revoke}
    try:
        asyncio.run(_with_keys(redis_url, jobs[action]))
    except Rejected as rejection:
        print(f"shikoku api-key: {rejection.message}", file=sys.stderr)
        return 1
    return 0
