"""Leases: background work that one replica at a time should do (clock keeping, tournament
results), shared by every replica of a service through one Redis key.

The holder renews its lease on each pass; when it dies, the lease lapses after `ttl_ms` and the
next replica to try takes it over. A lease saves doubled work; the work itself stays safe to run
twice (its writes are version-checked appends), so a holder that stalls past its lease and
overlaps with the next one writes nothing twice.
"""

from __future__ import annotations

from redis.asyncio import Redis

# Take the lease if it is free, or keep it if it is ours; 1 when held.
_ACQUIRE = """
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def lease_key(name: str) -> str:
    return f"lease:{{{name}}}"


class Lease:
    def __init__(self, redis: Redis, name: str, holder: str, ttl_ms: int = 5_000) -> None:
        self.key = lease_key(name)
        self.holder = holder
        self.ttl_ms = ttl_ms
        self._acquire = redis.register_script(_ACQUIRE)
        self._release = redis.register_script(_RELEASE)

    async def hold(self) -> bool:
        """True while this replica holds the lease (taken or renewed now for `ttl_ms`)."""
        return bool(await self._acquire(keys=[self.key], args=[self.holder, self.ttl_ms]))

    async def release(self) -> None:
        """Gives the lease up at once (on a clean stop), so another replica need not wait."""
        await self._release(keys=[self.key], args=[self.holder])
