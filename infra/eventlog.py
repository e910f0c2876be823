"""The event log as a port: what the services and the gateway ask of a log of events, one stream
per aggregate (a game, a table, a player), and an implementation of it in memory.

`EventLog` is the port. Its guarantees, which every adapter keeps:

- An event's version is its 1-based position in its stream: no gaps, no duplicates.
- An append states the version it was decided on and is written whole only if the stream is
  still there; otherwise it raises VersionConflict and writes nothing.
- A non-empty command id is applied at most once per aggregate: appended again (whatever the
  expected version) it writes nothing and answers with the versions it wrote the first time,
  marked duplicate, with the fingerprint stored then. Command ids are remembered
  `COMMAND_ID_SECONDS` after the aggregate's last command.
- A batch's cause is kept on its first event; payloads and causes come back as msgpack carries
  them (a tuple comes back a list), never as the caller's own objects.
- An append may carry a `StreamNote`: an entry for another stream (a change note), written
  with it in the same round trip when the append writes or finds its command id applied, never
  when it conflicts; a note may be written more than once, so what follows notes takes them as
  hints.
- `follow_batches` yields what is in the stream from a version on, then each new batch as it is
  appended (at most `FOLLOW_BATCH` events at a time), until the caller stops.

The adapters: `infra.eventstore.EventStore` (Redis Streams, one server or a Redis Cluster, with
the replication policies that only a replicated store has) and `MemoryEventLog` below (one
process, one event loop: for tests and single-process runs; it forgets everything on exit).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgpack
from prometheus_client import Counter

# How long a command id is remembered after the aggregate's last command: retries come within
# seconds; a day covers clients that reconnect much later.
COMMAND_ID_SECONDS = 24 * 3600
#: The most events `follow_batches` yields at once.
FOLLOW_BATCH = 500

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


@dataclass(frozen=True, slots=True)
class StreamNote:
    """An entry to add to `stream` along with an append (trimmed to about `kept` entries)."""

    stream: str
    fields: Mapping[str, str]
    kept: int


class VersionConflict(Exception):
    """The stream was not at the version the caller decided on; nothing was written."""

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        super().__init__(f"stream {stream} is at version {actual}, not {expected}")
        self.stream = stream
        self.expected = expected
        self.actual = actual


class EventLog(Protocol):
    """The event streams of one kind of aggregate (see the module's docstring for the
    guarantees)."""

    async def append(
        self,
        aggregate_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        cause: Mapping[str, Any] | None = None,
    ) -> int:
        """Appends `events` atomically if the stream is at `expected_version`; returns the new
        version. Raises VersionConflict, writing nothing, otherwise."""
        ...

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
        """As `append`, and a `command_id` already applied is not applied again (checked
        before the expected version): the versions it wrote then come back, duplicate. `note`
        is added to its stream when the batch is written or found applied."""
        ...

    async def applied(self, aggregate_id: str, command_id: str) -> Appended | None:
        """The versions a command id wrote, if it has been applied (and not yet forgotten)."""
        ...

    async def version(self, aggregate_id: str) -> int:
        """The stream's last version (0: no event)."""
        ...

    async def read(
        self, aggregate_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[StoredEvent]:
        """Events with from_version <= version <= to_version (to the end if None)."""
        ...

    async def read_many(
        self, aggregate_ids: Sequence[str], from_versions: Sequence[int] = ()
    ) -> list[list[StoredEvent]]:
        """The logs of several aggregates, in the order asked: each whole, or from its
        `from_versions` entry on when given."""
        ...

    def follow(
        self, aggregate_id: str, from_version: int = 1, block_ms: int = 5_000
    ) -> AsyncIterator[StoredEvent]:
        """Every event from `from_version` on, then each new one as it is appended; forever."""
        ...

    def follow_batches(
        self, aggregate_id: str, from_version: int = 1, block_ms: int = 5_000
    ) -> AsyncIterator[list[StoredEvent]]:
        """As `follow`, a batch at a time: the events of one append arrive together unless a
        batch is cut at `FOLLOW_BATCH`. `block_ms`: how long one wait for news may last before
        the adapter looks again (Redis's XREAD block; no meaning in memory)."""
        ...


def pack(value: Mapping[str, Any]) -> bytes:
    packed: bytes = msgpack.packb(dict(value))
    return packed


def unpack(packed: bytes) -> dict[str, Any]:
    value: dict[str, Any] = msgpack.unpackb(packed)
    return value


@dataclass(frozen=True, slots=True)
class _Entry:
    type: str
    schema_version: int
    payload: bytes
    cause: bytes  # b"": none


@dataclass(slots=True)
class _Commands:
    """An aggregate's applied command ids: (first, last, fingerprint), and when they were last
    written (the whole set is forgotten `COMMAND_ID_SECONDS` after that, as Redis expires it)."""

    done: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    touched: float = 0.0


class MemoryEventLog:
    """The event log of one kind of aggregate in this process's memory, for one event loop.

    Every operation first lets the event loop run others (as a round trip to Redis would), then
    does its work without awaiting, so that an append's check and write are one atomic step.
    Events are kept msgpack-packed, as Redis keeps them. Followers wait on a future each, which
    the next append to their stream completes."""

    def __init__(
        self,
        kind: str,
        clock: Callable[[], float] = time.monotonic,
        command_id_seconds: float = COMMAND_ID_SECONDS,
    ) -> None:
        self._kind = kind
        self._clock = clock
        self._command_id_seconds = command_id_seconds
        self._streams: dict[str, list[_Entry]] = {}
        self._commands: dict[str, _Commands] = {}
        self._waiters: dict[str, set[asyncio.Future[None]]] = {}
        #: The notes appends carried, by stream (nothing follows them in memory).
        self.notes: dict[str, list[dict[str, str]]] = {}

    def _stream_name(self, aggregate_id: str) -> str:
        return f"{self._kind}:{aggregate_id}"

    def _done(self, aggregate_id: str) -> _Commands | None:
        commands = self._commands.get(aggregate_id)
        if commands is not None and self._clock() - commands.touched >= self._command_id_seconds:
            del self._commands[aggregate_id]
            return None
        return commands

    async def append(
        self,
        aggregate_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        cause: Mapping[str, Any] | None = None,
    ) -> int:
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
        # Packed before the atomic step, so that a payload msgpack cannot carry writes nothing.
        entries = [
            _Entry(
                event.type,
                event.schema_version,
                pack(event.payload),
                pack(cause) if cause is not None and index == 0 else b"",
            )
            for index, event in enumerate(events)
        ]
        await asyncio.sleep(0)
        # From here on, no await: the check and the write are one step.
        if command_id and (commands := self._done(aggregate_id)):
            done = commands.done.get(command_id)
            if done is not None:
                commands.touched = self._clock()
                self._add(note)
                return Appended(done[0], done[1], duplicate=True, fingerprint=done[2])
        stream = self._streams.get(aggregate_id, [])
        current = len(stream)
        if current != expected_version:
            VERSION_CONFLICTS.labels(self._kind).inc()
            raise VersionConflict(self._stream_name(aggregate_id), expected_version, current)
        if entries:
            self._streams[aggregate_id] = stream + entries
        version = current + len(entries)
        if command_id:
            commands = self._done(aggregate_id) or self._commands.setdefault(
                aggregate_id, _Commands()
            )
            commands.done[command_id] = (current + 1, version, fingerprint)
            commands.touched = self._clock()
        self._add(note)
        for event in events:
            EVENTS_APPENDED.labels(self._kind, event.type).inc()
        if entries:
            for waiter in self._waiters.pop(aggregate_id, set()):
                if not waiter.done():
                    waiter.set_result(None)
        return Appended(current + 1, version)

    def _add(self, note: StreamNote | None) -> None:
        if note is not None:
            kept = self.notes.setdefault(note.stream, [])
            kept.append(dict(note.fields))
            del kept[: max(len(kept) - note.kept, 0)]

    async def applied(self, aggregate_id: str, command_id: str) -> Appended | None:
        await asyncio.sleep(0)
        commands = self._done(aggregate_id)
        done = commands.done.get(command_id) if commands else None
        if done is None:
            return None
        return Appended(done[0], done[1], duplicate=True, fingerprint=done[2])

    async def version(self, aggregate_id: str) -> int:
        await asyncio.sleep(0)
        return len(self._streams.get(aggregate_id, ()))

    async def read(
        self, aggregate_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[StoredEvent]:
        await asyncio.sleep(0)
        return self._read(aggregate_id, from_version, to_version)

    async def read_many(
        self, aggregate_ids: Sequence[str], from_versions: Sequence[int] = ()
    ) -> list[list[StoredEvent]]:
        await asyncio.sleep(0)
        starts = from_versions or [1] * len(aggregate_ids)
        return [self._read(a, start, None) for a, start in zip(aggregate_ids, starts, strict=True)]

    def _read(
        self, aggregate_id: str, from_version: int, to_version: int | None
    ) -> list[StoredEvent]:
        stream = self._streams.get(aggregate_id, [])
        start = max(from_version, 1) - 1
        end = len(stream) if to_version is None else max(to_version, 0)
        return [_decode(start + n + 1, entry) for n, entry in enumerate(stream[start:end])]

    async def follow(
        self, aggregate_id: str, from_version: int = 1, block_ms: int = 5_000
    ) -> AsyncIterator[StoredEvent]:
        async for batch in self.follow_batches(aggregate_id, from_version, block_ms):
            for event in batch:
                yield event

    async def follow_batches(
        self, aggregate_id: str, from_version: int = 1, block_ms: int = 5_000
    ) -> AsyncIterator[list[StoredEvent]]:
        seen = max(from_version, 1) - 1
        while True:
            await asyncio.sleep(0)
            if len(self._streams.get(aggregate_id, ())) > seen:
                batch = self._read(aggregate_id, seen + 1, seen + FOLLOW_BATCH)
                seen = batch[-1].version
                yield batch
                continue
            waiter = asyncio.get_running_loop().create_future()
            waiters = self._waiters.setdefault(aggregate_id, set())
            waiters.add(waiter)
            try:
                await waiter
            finally:
                waiters.discard(waiter)
                if not waiters and self._waiters.get(aggregate_id) is waiters:
                    del self._waiters[aggregate_id]


def _decode(version: int, entry: _Entry) -> StoredEvent:
    return StoredEvent(
        version=version,
        type=entry.type,
        schema_version=entry.schema_version,
        payload=unpack(entry.payload),
        cause=unpack(entry.cause) if entry.cause else None,
    )
