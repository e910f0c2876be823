"""The event log on Redis Streams: one stream per aggregate (a game, a table), append-only.

The Redis adapter of the event-log port (`infra.eventlog.EventLog`, whose guarantees it keeps;
the types it takes and returns are the port's, imported here too). An event's version is its
1-based position in its stream, and it is also the stream entry id (`<version>-0`), so reading
"from version N" is a plain XRANGE and a stream can never hold a gap or a duplicate version.

Keys carry the aggregate id as a Redis Cluster hash tag (`game:{g-1}:events`), so everything of
one game lives in one slot and every write is a single-slot Lua script.

Redis replicates asynchronously: a master that dies right after an append may take it along. With
`Replication(replicas=N)` (`SHIKOKU_REDIS_WAIT_REPLICAS`), an append is acknowledged only once N
replicas have it (WAIT on the connection that wrote it); when they do not within the timeout,
the append raises NotReplicated (UNAVAILABLE to the caller), never a silent success, and a retry
with the same command id is answered from the log without writing twice (once a replica has it).

A master may have no replica left at all (its own replica was promoted when the master before it
died, or its replica is down). WAIT would then time out on every append; instead each master's
good replicas (in sync, acknowledging) are counted with INFO replication, kept a second and
counted again, so the store knows at once and follows `SHIKOKU_REDIS_NO_REPLICA`: `degrade` (the
default) accepts appends on the master's write alone and counts them, `refuse` refuses them with
UNAVAILABLE `NO_REPLICA` before anything is written (and the append script counts them itself
first, so that a count made before the replica was lost writes nothing either). When a replica
is back and in sync, the next count finds it and appends wait for it again.
"""

from __future__ import annotations

import asyncio
import re
import time
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal, cast

import msgpack
from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.cluster import PRIMARY
from redis.exceptions import RedisError, ResponseError

from infra.eventlog import COMMAND_ID_SECONDS, EVENTS_APPENDED, FOLLOW_BATCH, VERSION_CONFLICTS
from infra.eventlog import Appended as Appended
from infra.eventlog import NewEvent as NewEvent
from infra.eventlog import StoredEvent as StoredEvent
from infra.eventlog import StreamNote as StreamNote
from infra.eventlog import VersionConflict as VersionConflict
from infra.redis_metrics import SHARDS_WITHOUT_REPLICA, WRITES_WITHOUT_REPLICA
from kernel.rejection import Kind, Rejected

#: A replica counts as one that can confirm writes when it is in sync (`online`) and has
#: acknowledged within this many seconds (replicas acknowledge every second).
GOOD_REPLICA_LAG_SECONDS = 5

# Lua: the good replicas in the text of INFO replication (a replica's lag, in whole seconds of
# the server's clock, reads -1 just after an acknowledgement).
GOOD_REPLICAS_LUA = """
local function good_replicas(info)
  local good = 0
  local line = 'slave%d+:[^\\r\\n]*state=([%w_]+),[^\\r\\n]*lag=(%-?%d+)'
  for state, lag in string.gmatch(info, line) do
    if state == 'online' and tonumber(lag) <= GOOD_LAG then
      good = good + 1
    end
  end
  return good
end
""".replace("GOOD_LAG", str(GOOD_REPLICA_LAG_SECONDS))

# KEYS: the stream, the hash of command ids already applied (one slot: both carry the hash tag),
# and, when a note goes with the append in the script (one Redis server), the note's stream.
# ARGV: expected version, command id ('' for none), seconds to keep command ids, the command's
# fingerprint, the good replicas the master must have (0: not counted), the note's trim length
# and its number of field/value pairs N, those 2N strings, then one (type, schema version,
# payload, cause) quadruple per event; an empty cause is not stored. Returns {1, new version}
# when appended; {0, actual version} on a version conflict (nothing written); {2, first, last,
# fingerprint} when the command id was applied before (nothing written but the note); {3, good
# replicas} when the master has fewer good replicas than asked (nothing written).
_APPEND = (
    GOOD_REPLICAS_LUA
    + """
local function add_note()
  if #KEYS < 3 then
    return
  end
  local xadd = {'XADD', KEYS[3], 'MAXLEN', '~', ARGV[6], '*'}
  for i = 8, 7 + 2 * tonumber(ARGV[7]) do
    xadd[#xadd + 1] = ARGV[i]
  end
  redis.call(unpack(xadd))
end
local need = tonumber(ARGV[5])
if need > 0 then
  local good = good_replicas(redis.call('INFO', 'replication'))
  if good < need then
    return {3, good}
  end
end
local command = ARGV[2]
if command ~= '' then
  local done = redis.call('HGET', KEYS[2], command)
  if done then
    -- A write, so that WAIT on this connection covers the original append (replication is in
    -- order: a replica that has this has everything written before it).
    redis.call('EXPIRE', KEYS[2], tonumber(ARGV[3]))
    add_note()
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
for i = 8 + 2 * tonumber(ARGV[7]), #ARGV, 4 do
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
add_note()
return {1, version}
"""
)

# Stream entries as redis-py returns them without response decoding.
Entries = list[tuple[bytes, dict[bytes, bytes]]]


NoReplicaPolicy = Literal["degrade", "refuse"]
NO_REPLICA_POLICIES: tuple[NoReplicaPolicy, ...] = ("degrade", "refuse")


@dataclass(frozen=True, slots=True)
class Replication:
    """How many replicas must confirm an event append before it is acknowledged, how long to
    wait for them, and what a master with fewer good replicas than that does with an append
    (`SHIKOKU_REDIS_WAIT_REPLICAS`, `SHIKOKU_REDIS_WAIT_MS`, `SHIKOKU_REDIS_NO_REPLICA`):
    `degrade` accepts it on the master's write (and the replicas it has), `refuse` refuses it
    with NO_REPLICA, writing nothing. A process reads them with its settings
    (infra.process_settings.RedisSettings)."""

    replicas: int = 0
    timeout_ms: int = 1_000
    no_replica: NoReplicaPolicy = "degrade"

    def __post_init__(self) -> None:
        if self.no_replica not in NO_REPLICA_POLICIES:
            raise ValueError(f"no_replica is one of {NO_REPLICA_POLICIES}, not {self.no_replica!r}")


class NotReplicated(RedisError):
    """The append is on the master but fewer replicas than required confirmed it in time: it is
    not acknowledged (a retry with the same command id finds it and waits again). A RedisError,
    as what background work retries on a failing Redis (the lobby's keepers) must retry."""

    def __init__(self, stream: str, wanted: int, confirmed: int) -> None:
        super().__init__(f"{stream}: {confirmed} of {wanted} replicas confirmed the append")
        self.stream = stream
        self.wanted = wanted
        self.confirmed = confirmed


class NoReplica(Rejected, RedisError):
    """Under the `refuse` policy, the stream's master has fewer good replicas than an append
    must be confirmed by: UNAVAILABLE `NO_REPLICA`, at once. `written`: the append reached the
    master before its replica was lost (it is not acknowledged; a retry with the same command id
    is answered from the log once a replica has it); otherwise nothing was written. A Rejected
    for the callers, and a RedisError (as Redis's own NOREPLICAS would be) for background work."""

    def __init__(self, stream: str, wanted: int, replicas: int, written: bool = False) -> None:
        what = "the write may be on the master alone" if written else "nothing was written"
        super().__init__(
            "NO_REPLICA",
            f"the game store's shard has {replicas} of the {wanted} replicas a write must reach, "
            f"and refuses writes until one is back ({what}); retry with the same command id",
            Kind.UNAVAILABLE,
            {"replicas": replicas, "wanted": wanted},
            retry_after=timedelta(seconds=RECOUNT_SECONDS),
        )
        self.stream = stream
        self.written = written


#: How Redis refuses a WAIT sent to a replica (a pipeline on a slot map older than a failover).
WAIT_ON_REPLICA = "WAIT cannot be used with replica"
#: How long a count of a master's good replicas is used before the next append to it counts
#: them again.
RECOUNT_SECONDS = 1.0
#: How long a count stays in `shikoku_redis_shards_without_replica` when no append to that
#: master makes it again.
REPORTED_SECONDS = 5.0
_SLAVE_LINE = re.compile(r"^slave\d+$")


@dataclass(frozen=True, slots=True)
class _Count:
    replicas: int
    at: float


class ReplicaCounts:
    """The good replicas of each master the store writes to, as INFO replication last showed
    them (or the append script counted them), counted again once the count is
    `RECOUNT_SECONDS` old or a WAIT came back short. One count of a master is made at a time."""

    def __init__(self, redis: Redis | RedisCluster, wanted: int) -> None:
        self._redis = redis
        self.wanted = wanted
        self._counts: dict[str, _Count] = {}
        self._counting: dict[str, asyncio.Task[int]] = {}
        _ALL_COUNTS.add(self)

    async def replicas(self, node: ClusterNode | None, fresh: bool = False) -> int:
        """The master's good replicas: the last count while it is under `RECOUNT_SECONDS` old
        (and not `fresh`), else a new one (one INFO, shared by the appends that ask meanwhile).
        Masters last found short are counted again in the background meanwhile, so that one
        this process rarely writes to leaves the gauge when its replica is back."""
        name = "" if node is None else node.name
        self._recount_short(name)
        count = self._counts.get(name)
        if count is None or fresh or time.monotonic() - count.at >= RECOUNT_SECONDS:
            return await asyncio.shield(self._start(name, node))
        return count.replicas

    def note(self, node: ClusterNode | None, replicas: int) -> None:
        """What the append script counted on the master itself."""
        self._counts["" if node is None else node.name] = _Count(replicas, time.monotonic())

    def without_replica(self, now: float) -> set[str]:
        """The masters last counted, within `REPORTED_SECONDS`, with fewer than wanted."""
        return {
            name
            for name, count in list(self._counts.items())
            if count.replicas < self.wanted and now - count.at < REPORTED_SECONDS
        }

    def _recount_short(self, besides: str) -> None:
        now = time.monotonic()
        for name, count in list(self._counts.items()):
            if (
                name == besides
                or name in self._counting
                or count.replicas >= self.wanted
                or now - count.at < RECOUNT_SECONDS
            ):
                continue
            if not name:  # one Redis server
                self._start(name, None)
                continue
            node = cast(RedisCluster, self._redis).get_node(node_name=name)
            if node is None or node.server_type != PRIMARY:  # no longer a master of the cluster
                del self._counts[name]
            else:
                self._start(name, node)

    def _start(self, name: str, node: ClusterNode | None) -> asyncio.Task[int]:
        task = self._counting.get(name)
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            task = self._counting[name] = asyncio.create_task(self._counted(name, node))
            # Retrieved, so that a count whose every waiter was cancelled logs no warning.
            task.add_done_callback(lambda done: done.cancelled() or done.exception())
        return task

    async def _counted(self, name: str, node: ClusterNode | None) -> int:
        try:
            if node is None:
                info = await self._redis.execute_command("INFO", "replication")
            else:
                info = await self._redis.execute_command("INFO", "replication", target_nodes=node)
            info = cast(Mapping[str, Any], info)
            if info.get("role") != "master":
                # A slot map not yet refreshed after a failover: no count, and appends go on
                # as with replicas (their WAIT meets the stale map as before).
                self._counts.pop(name, None)
                return self.wanted
            replicas = good_replicas(info)
            self._counts[name] = _Count(replicas, time.monotonic())
            return replicas
        except Exception:
            self._counts.pop(name, None)  # not known any more: the next append counts again
            raise
        finally:
            if self._counting.get(name) is asyncio.current_task():
                del self._counting[name]


def good_replicas(info: Mapping[str, Any]) -> int:
    """The replicas in an INFO replication reply (as redis-py parses it) that are in sync and
    acknowledged within `GOOD_REPLICA_LAG_SECONDS`: the ones that can confirm a write now."""
    return sum(
        1
        for key, value in info.items()
        if _SLAVE_LINE.match(str(key))
        and isinstance(value, Mapping)
        and value.get("state") == "online"
        and int(value.get("lag", 0)) <= GOOD_REPLICA_LAG_SECONDS
    )


_ALL_COUNTS: weakref.WeakSet[ReplicaCounts] = weakref.WeakSet()


def _shards_without_replica() -> float:
    """For the gauge, when scraped: masters some store of this process last found short."""
    now = time.monotonic()
    found: set[str] = set()
    for counts in list(_ALL_COUNTS):
        found |= counts.without_replica(now)
    return float(len(found))


SHARDS_WITHOUT_REPLICA.set_function(_shards_without_replica)


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


def _end_if_cancelled() -> None:
    """Ends a follow whose task was cancelled although its read returned: redis-py can swallow
    a cancellation that lands as a blocking read ends (redis/redis-py#2028), and a follow that
    went on reading would keep its connection, and its caller waiting on it, for good."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class EventStore:
    """Appends to and reads from the event streams of one kind of aggregate, in Redis: an
    `infra.eventlog.EventLog`."""

    def __init__(
        self, redis: Redis | RedisCluster, kind: str, replication: Replication | None = None
    ) -> None:
        self._redis = redis
        self._kind = kind
        self._append = redis.register_script(_APPEND)
        # None: appends wait for no replica (a process's settings say how many: RedisSettings).
        self._replication = Replication() if replication is None else replication
        self._counts = ReplicaCounts(redis, self._replication.replicas)

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
        note: StreamNote | None = None,
    ) -> Appended:
        """As `append`, and a `command_id` already applied is not applied again: the versions
        it wrote then come back, marked duplicate (checked before the expected version), with
        the `fingerprint` (of the command, say) stored alongside the command id then. `note`
        goes with it in the same round trip: written by the script on one Redis server, in the
        same pipeline after it on a cluster (its stream is in another slot), where it is also
        written when the append conflicts."""
        # ARGV[5], the good replicas the script must find, is set by _append_replicated.
        args: list[Any] = [expected_version, command_id, COMMAND_ID_SECONDS, fingerprint, 0]
        args += [0, 0] if note is None else [note.kept, len(note.fields)]
        for field, value in note.fields.items() if note is not None else ():
            args += [field, value]
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
        apart = note if isinstance(self._redis, RedisCluster) else None
        if note is not None and apart is None:
            keys.append(note.stream)
        if self._replication.replicas:
            reply = await self._append_replicated(keys, args, apart)
        else:
            reply = await self._unconfirmed(keys, args, apart)
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

    async def _unconfirmed(self, keys: list[str], args: list[Any], apart: StreamNote | None) -> Any:
        """The append script's reply, with no replica waited for: the script alone (one
        EVALSHA), or with the note it cannot write in one pipeline."""
        if apart is None:
            return await self._append(keys=keys, args=args)
        reply, _ = await self._pipelined(keys, args, apart)
        return reply

    async def _pipelined(
        self,
        keys: list[str],
        args: list[Any],
        apart: StreamNote | None,
        wait: tuple[ClusterNode | None, int] | None = None,
    ) -> tuple[Any, int]:
        """The append script, the note that could not go in it, and WAIT for `wait`'s replicas
        of its master, in one pipeline (one round trip to each node it touches): the script's
        reply and the replicas WAIT counted (0 without WAIT)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.eval(_APPEND, len(keys), *keys, *args)
            if wait is not None:
                self._wait(pipe, *wait)
            if apart is not None:
                fields: dict[Any, Any] = dict(apart.fields)
                pipe.xadd(apart.stream, fields, maxlen=apart.kept, approximate=True)
            try:
                replies = await pipe.execute()
            except ResponseError as error:
                if wait is None or WAIT_ON_REPLICA not in str(error):
                    raise
                # A slot map from before a failover: the append went to the new master, the
                # WAIT to the old one, now its replica. Not confirmed, so not acknowledged:
                # a retry with the same command id finds it and waits again.
                raise NotReplicated(keys[0], self._replication.replicas, 0) from error
        return replies[0], int(replies[1]) if wait is not None else 0

    async def _append_replicated(
        self, keys: list[str], args: list[Any], apart: StreamNote | None
    ) -> Any:
        """The append script, then WAIT, on one connection (a pipeline): WAIT counts the
        replicas that have this connection's writes. A master known to have fewer good
        replicas than wanted is written to without WAIT (`degrade`) or not at all (`refuse`)."""
        wanted, refuse = self._replication.replicas, self._replication.no_replica == "refuse"
        node = self._node(keys[0])
        replicas = await self._counts.replicas(node)
        if replicas < wanted:
            if refuse:
                WRITES_WITHOUT_REPLICA.labels("refused").inc()
                raise NoReplica(keys[0], wanted, replicas)
            if replicas == 0:
                reply = await self._unconfirmed(keys, args, apart)
                if reply[0] != 0:
                    WRITES_WITHOUT_REPLICA.labels("degraded").inc()
                return reply
        # Under `refuse` the script counts the replicas itself before it writes anything.
        target = min(wanted, replicas)
        args[4] = wanted if refuse else 0
        reply, confirmed = await self._pipelined(keys, args, apart, (node, target))
        if reply[0] == 3:  # refused by the script: nothing written
            self._counts.note(node, int(reply[1]))
            WRITES_WITHOUT_REPLICA.labels("refused").inc()
            raise NoReplica(keys[0], wanted, int(reply[1]))
        if reply[0] != 0:
            await self._confirmed(keys[0], node, target, confirmed)
        return reply

    async def _confirmed(
        self, key: str, node: ClusterNode | None, target: int, confirmed: int
    ) -> None:
        """Whether a write that `confirmed` replicas have, of the `target` waited for, may be
        acknowledged: yes when enough did; when they did not, the master's replicas are counted
        again, and if they are still there (lagging) it is NotReplicated, and if they are gone
        the policy decides (the write is on the master: `refuse` leaves it unacknowledged)."""
        wanted = self._replication.replicas
        if confirmed >= target:
            if target < wanted:
                WRITES_WITHOUT_REPLICA.labels("degraded").inc()
            return
        replicas = await self._counts.replicas(node, fresh=True)
        if replicas >= target:
            raise NotReplicated(key, wanted, confirmed)
        if self._replication.no_replica == "refuse":
            WRITES_WITHOUT_REPLICA.labels("refused").inc()
            raise NoReplica(key, wanted, replicas, written=True)
        WRITES_WITHOUT_REPLICA.labels("degraded").inc()

    def _node(self, key: str) -> ClusterNode | None:
        """The master that serves `key` (None for one Redis server)."""
        if isinstance(self._redis, RedisCluster):
            return self._redis.get_node_from_key(key)
        return None

    def _wait(self, pipe: Any, node: ClusterNode | None, replicas: int) -> None:
        if node is None:
            pipe.execute_command("WAIT", replicas, self._replication.timeout_ms)
        else:
            pipe.execute_command("WAIT", replicas, self._replication.timeout_ms, target_nodes=node)

    async def _replicated(self, commands_key: str) -> None:
        """Makes sure what a command id wrote is on the replicas before it is answered as
        applied: a write that came back NotReplicated (or NO_REPLICA) is on the master alone,
        and its retry must not be acknowledged before the append itself would have been. A
        write to the command ids' hash, then WAIT (replication is in order, so a replica that
        has it has the original append); the same policy when the master has no replica."""
        wanted = self._replication.replicas
        node = self._node(commands_key)
        replicas = await self._counts.replicas(node)
        if replicas < wanted and self._replication.no_replica == "refuse":
            WRITES_WITHOUT_REPLICA.labels("refused").inc()
            raise NoReplica(commands_key, wanted, replicas)
        target = min(wanted, replicas)
        if target == 0:  # `degrade`, and no replica to wait for
            await self._confirmed(commands_key, node, 0, 0)
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.expire(commands_key, COMMAND_ID_SECONDS)
            self._wait(pipe, node, target)
            _expired, confirmed = await pipe.execute()
        await self._confirmed(commands_key, node, target, int(confirmed))

    async def applied(self, aggregate_id: str, command_id: str) -> Appended | None:
        """The versions a command id wrote, if it has been applied (and not yet forgotten)."""
        done = cast(
            bytes | None, await self._redis.hget(self.commands_key(aggregate_id), command_id)
        )
        if done is None:
            return None
        if self._replication.replicas:
            await self._replicated(self.commands_key(aggregate_id))
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

    async def read_many(
        self, aggregate_ids: Sequence[str], from_versions: Sequence[int] = ()
    ) -> list[list[StoredEvent]]:
        """The logs of several aggregates, each whole or from its `from_versions` entry on, in
        one round trip."""
        starts = from_versions or [1] * len(aggregate_ids)
        async with self._redis.pipeline(transaction=False) as pipe:
            for aggregate_id, start in zip(aggregate_ids, starts, strict=True):
                pipe.xrange(self.key(aggregate_id), f"{max(start, 1)}-0")
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
                await self._redis.xread({key: last_id}, block=block_ms, count=FOLLOW_BATCH),
            )
            _end_if_cancelled()
            for _stream, entries in reply:
                batch = [_decode(entry_id, fields) for entry_id, fields in entries]
                if batch:
                    last_id = f"{batch[-1].version}-0"
                    yield batch
