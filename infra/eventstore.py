"""The event log on Redis Streams: one stream per aggregate (a game, a table), append-only.

Every service that writes events uses this module. An event's version is its 1-based position
in its stream, and it is also the stream entry id (`<version>-0`), so reading "from version N"
is a plain XRANGE and a stream can never hold a gap or a duplicate version.

Keys carry the aggregate id as a Redis Cluster hash tag (`game:{g-1}:events`), so everything of
one game lives in one slot and every write is a single-slot Lua script.

Redis replicates asynchronously: a master that dies right after an append may take it along. With
`Replication(replicas=N)` (`SHIKOKU_REDIS_WAIT_REPLICAS`), an append is acknowledged only once N
replicas have it (WAIT on the connection that wrote it); when they do not within the timeout,
the append raises NotReplicated (UNAVAILABLE to the caller), never a silent success, and a retry
with the same command id is answered from the log without writing twice.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import msgpack
from prometheus_client import Counter
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

# KEYS: the stream, the hash of command ids already applied (one slot: both carry the hash tag).
# ARGV: expected version, command id ('' for none), seconds to keep command ids, the command's
# fingerprint, then one (type, schema version, payload, cause) quadruple per event; an empty
# cause is not stored. Returns {1, new version} when appended; {0, actual version} on a version
# conflict (nothing written); {2, first, last, fingerprint} when the command id was applied
# before (nothing written).
_APPEND = """
local command = ARGV[2]
if command ~= '' then
  local done = redis.call('HGET', KEYS[2], command)
  if done then
    -- A write, so that WAIT on this connection covers the original append (replication is in
    -- order: a replica that has this has everything written before it).
    redis.call('EXPIRE', KEYS[2], tonumber(ARGV[3]))
    local first, last, fingerprint = string.match(done, '^(%d+):(%d+):?(.*)$')
    return {2, tonumber(first), tonumber(last), fingerprint}
  end
end
local expected = tonumber(ARGV[1])
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local current = 0
if #last > 0 then
  current = tonumber(string.match(last[1][1], '^(%d+)'))
end
if current ~= expected then
  return {0, current}
end
local version = current
for i = 5, #ARGV, 4 do
  version = version + 1
  if ARGV[i + 3] == '' then
    redis.call('XADD', KEYS[1], version .. '-0', 't', ARGV[i], 'v', ARGV[i + 1], 'd', ARGV[i + 2])
  else
    redis.call('XADD', KEYS[1], version .. '-0', 't', ARGV[i], 'v', ARGV[i + 1], 'd', ARGV[i + 2],
      'c', ARGV[i + 3])
  end
end
if command ~= '' then
  redis.call('HSET', KEYS[2], command, (current + 1) .. ':' .. version .. ':' .. ARGV[4])
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[3]))
end
return {1, version}
"""

# How long a command id is remembered after the game's last command: retries come within
# seconds; a day covers clients that reconnect much later.
COMMAND_ID_SECONDS = 24 * 3600


EVENTS_APPENDED = Counter(
    "shikoku_events_appended",
    "Events appended to the log, by kind of aggregate (game, table, ...) and event type",
    ["aggregate", "event"],
)
VERSION_CONFLICTS = Counter(
    "shikoku_version_conflicts",
    "Appends refused, writing nothing, because the stream had moved past the version decided "
    "on (another writer got there first), by kind of aggregate",
    ["aggregate"],
)

# Stream entries as redis-py returns them without response decoding.
Entries = list[tuple[bytes, dict[bytes, bytes]]]


@dataclass(frozen=True, slots=True)
class Replication:
    """How many replicas must confirm an event append before it is acknowledged, and how long
    to wait for them (`SHIKOKU_REDIS_WAIT_REPLICAS`, `SHIKOKU_REDIS_WAIT_MS`)."""

    replicas: int = 0
    timeout_ms: int = 1_000

    @classmethod
    def from_env(cls) -> Replication:
        return cls(
            int(os.environ.get("SHIKOKU_REDIS_WAIT_REPLICAS", "0")),
            int(os.environ.get("SHIKOKU_REDIS_WAIT_MS", "1000")),
        )


class VersionConflict(Exception):
    """The stream was not at the version the caller decided on; nothing was written."""

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        super().__init__(f"stream {stream} is at version {actual}, not {expected}")
        self.stream = stream
        self.expected = expected
        self.actual = actual


class NotReplicated(Exception):
    """The append is on the master but fewer replicas than required confirmed it in time: it is
    not acknowledged (a retry with the same command id finds it and waits again)."""

    def __init__(self, stream: str, wanted: int, confirmed: int) -> None:
        super().__init__(f"{stream}: {confirmed} of {wanted} replicas confirmed the append")
        self.stream = stream
        self.wanted = wanted
        self.confirmed = confirmed


@dataclass(frozen=True, slots=True)
class Appended:
    """Versions `first` to `last` hold the batch; `duplicate`: the command id had been applied
    before and these are the versions it wrote then (nothing was written now), for the command
    whose fingerprint was `fingerprint`."""

    first: int
    last: int
    duplicate: bool = False
    fingerprint: str = ""


@dataclass(frozen=True, slots=True)
class NewEvent:
    type: str
    schema_version: int
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class StoredEvent:
    version: int
    type: str
    schema_version: int
    payload: dict[str, Any]
    #: On the first event of each appended batch: what caused the batch (e.g. the command).
    cause: dict[str, Any] | None = None


def stream_key(kind: str, aggregate_id: str) -> str:
    """`game:{g-1}:events`: the braces make the id the Redis Cluster hash tag."""
    return f"{kind}:{{{aggregate_id}}}:events"


def _decode(entry_id: bytes, fields: Mapping[bytes, bytes]) -> StoredEvent:
    cause = fields.get(b"c")
    return StoredEvent(
        version=int(entry_id.split(b"-", 1)[0]),
        type=fields[b"t"].decode(),
        schema_version=int(fields[b"v"]),
        payload=msgpack.unpackb(fields[b"d"]),
        cause=msgpack.unpackb(cause) if cause else None,
    )


class EventStore:
    """Appends to and reads from the event streams of one kind of aggregate."""

    def __init__(
        self, redis: Redis | RedisCluster, kind: str, replication: Replication | None = None
    ) -> None:
        self._redis = redis
        self._kind = kind
        self._append = redis.register_script(_APPEND)
        self._replication = Replication.from_env() if replication is None else replication

    def key(self, aggregate_id: str) -> str:
        return stream_key(self._kind, aggregate_id)

    def commands_key(self, aggregate_id: str) -> str:
        """The hash of command ids already applied to the aggregate, in its slot."""
        return f"{self._kind}:{{{aggregate_id}}}:commands"

    async def append(
        self,
        aggregate_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        cause: Mapping[str, Any] | None = None,
    ) -> int:
        """Appends `events` atomically if the stream is at `expected_version`; returns the new
        version. Raises VersionConflict, writing nothing, otherwise. `cause` (what led to the
        batch, e.g. the command) is kept with the batch's first event."""
        appended = await self.append_once(aggregate_id, expected_version, events, cause)
        return appended.last

    async def append_once(
        self,
        aggregate_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        cause: Mapping[str, Any] | None = None,
        command_id: str = "",
        fingerprint: str = "",
    ) -> Appended:
        """As `append`, and a `command_id` already applied is not applied again: the versions
        it wrote then come back, marked duplicate (checked before the expected version), with
        the `fingerprint` (of the command, say) stored alongside the command id then."""
        args: list[Any] = [expected_version, command_id, COMMAND_ID_SECONDS, fingerprint]
        for index, event in enumerate(events):
            stored_cause = msgpack.packb(dict(cause)) if cause is not None and index == 0 else b""
            args += [
                event.type,
                event.schema_version,
                msgpack.packb(dict(event.payload)),
                stored_cause,
            ]
        key = self.key(aggregate_id)
        keys = [key, self.commands_key(aggregate_id)]
        if self._replication.replicas:
            reply = await self._append_replicated(keys, args)
        else:
            reply = await self._append(keys=keys, args=args)
        match reply:
            case [1, version]:
                for event in events:
                    EVENTS_APPENDED.labels(self._kind, event.type).inc()
                return Appended(int(version) - len(events) + 1, int(version))
            case [2, first, last, stored]:
                return Appended(int(first), int(last), duplicate=True, fingerprint=stored.decode())
            case [_, actual]:
                VERSION_CONFLICTS.labels(self._kind).inc()
                raise VersionConflict(key, expected_version, int(actual))
        raise RuntimeError(f"unexpected reply from the append script: {reply!r}")

    async def _append_replicated(self, keys: list[str], args: list[Any]) -> Any:
        """The append script, then WAIT, on one connection (a pipeline): WAIT counts the
        replicas that have this connection's writes."""
        wanted, timeout_ms = self._replication.replicas, self._replication.timeout_ms
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.eval(_APPEND, len(keys), *keys, *args)
            if isinstance(self._redis, RedisCluster):
                node = self._redis.get_node_from_key(keys[0])
                pipe.execute_command("WAIT", wanted, timeout_ms, target_nodes=node)
            else:
                pipe.execute_command("WAIT", wanted, timeout_ms)
            reply, confirmed = await pipe.execute()
        if int(confirmed) < wanted and reply[0] != 0:
            raise NotReplicated(keys[0], wanted, int(confirmed))
        return reply

    async def applied(self, aggregate_id: str, command_id: str) -> Appended | None:
        """The versions a command id wrote, if it has been applied (and not yet forgotten)."""
        done = cast(
            bytes | None, await self._redis.hget(self.commands_key(aggregate_id), command_id)
        )
        if done is None:
            return None
        first, last, *fingerprint = done.decode().split(":", 2)  # no fingerprint: stored earlier
        return Appended(int(first), int(last), duplicate=True, fingerprint="".join(fingerprint))

    async def version(self, aggregate_id: str) -> int:
        last = cast(Entries, await self._redis.xrevrange(self.key(aggregate_id), count=1))
        return int(last[0][0].split(b"-", 1)[0]) if last else 0

    async def read(
        self, aggregate_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[StoredEvent]:
        """Events with from_version <= version <= to_version (to the end if None)."""
        end = "+" if to_version is None else f"{to_version}-0"
        entries = cast(
            Entries,
            await self._redis.xrange(self.key(aggregate_id), f"{max(from_version, 1)}-0", end),
        )
        return [_decode(entry_id, fields) for entry_id, fields in entries]

    async def read_many(self, aggregate_ids: Sequence[str]) -> list[list[StoredEvent]]:
        """The whole logs of several aggregates, in one round trip."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for aggregate_id in aggregate_ids:
                pipe.xrange(self.key(aggregate_id))
            replies = cast(list[Entries], await pipe.execute())
        return [[_decode(entry_id, fields) for entry_id, fields in entries] for entries in replies]

    async def follow(
        self, aggregate_id: str, from_version: int = 1, block_ms: int = 5_000
    ) -> AsyncIterator[StoredEvent]:
        """Every event from `from_version` on, then each new one as it is appended; forever."""
        async for batch in self.follow_batches(aggregate_id, from_version, block_ms):
            for event in batch:
                yield event

    async def follow_batches(
        self, aggregate_id: str, from_version: int = 1, block_ms: int = 5_000
    ) -> AsyncIterator[list[StoredEvent]]:
        """Like `follow`, in the batches Redis returns: the events of one append arrive
        together unless a batch is cut at its size limit."""
        key = self.key(aggregate_id)
        last_id = f"{max(from_version, 1) - 1}-0"
        while True:
            reply = cast(
                list[tuple[bytes, Entries]],
                await self._redis.xread({key: last_id}, block=block_ms, count=500),
            )
            for _stream, entries in reply:
                batch = [_decode(entry_id, fields) for entry_id, fields in entries]
                if batch:
                    last_id = f"{batch[-1].version}-0"
                    yield batch
