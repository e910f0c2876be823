"""Games on the event store: load a game's state, decide a command, append its events.

The state is a cache of the fold of the stream. Reads rebuild it from the stream's tail on
every call, so several rules processes may serve the same game. A command is decided on the
state kept here without reading the log first: the append states the version the decision was
made on and is refused if another process got there first, and then (or when the kept state
refuses the command, which the log may no longer do) the command is decided again on the log's
tail. So an accepted command costs one round trip to Redis: the append script, which also
checks the command id and writes the game's change note.

The latest states and timelines are kept for the `cached_games` most recently used games
(`SHIKOKU_RULES_CACHED_GAMES`, default 2,000); a game pushed out is loaded again from its
snapshot and the stream's tail.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import msgpack
from cachetools import LRUCache

from infra.eventlog import (
    Appended,
    EventLog,
    NewEvent,
    StoredEvent,
    StreamNote,
    VersionConflict,
)
from kernel.rejection import Kind, Rejected, quoted
from services.rules.domain import undo
from services.rules.domain.commands import Command, Undo, command_to_plain
from services.rules.domain.decide import decide
from services.rules.domain.events import Event, Undone, event_from_payload
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from services.rules.domain.undo import Logged
from services.rules.shell import metrics
from services.rules.shell.snapshots import SnapshotStore

MAX_ATTEMPTS = 5
DEFAULT_CACHED_GAMES = 2_000
Prepare = Callable[[GameState, Command], Awaitable[Command]]
#: Told the game's id after each append that is acknowledged.
Changed = Callable[[str], None]
#: The note to write with each append of a game (the summaries' change note).
ChangeNote = Callable[[str], StreamNote]


@dataclasses.dataclass(frozen=True, slots=True)
class Moment:
    version: int
    at_ms: int
    actor: int | None
    acting_after: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Loaded:
    version: int
    state: GameState
    #: When the last batch was accepted (its command's `at_ms`), if known without reading
    #: further back in the log; 0 if not.
    at_ms: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class Executed:
    """A command's events as stored, and the state after them when this process knows it
    without reading the log (None after an undo, or for a command id applied before)."""

    events: list[StoredEvent]
    after: Loaded | None


@dataclasses.dataclass(frozen=True, slots=True)
class _Timeline:
    """A game's timeline as far as `version` of its log, and the state there, to go on from."""

    version: int
    state: GameState
    moments: tuple[Moment, ...]


def to_new_event(event: Event) -> NewEvent:
    return NewEvent(type=event.TYPE, schema_version=event.SCHEMA, payload=event.payload())


def command_fingerprint(command: Command) -> str:
    """Tells commands apart: a command id sent again with another command is a client's bug."""
    packed = msgpack.packb(command_to_plain(command))
    return hashlib.sha256(packed).hexdigest()[:16]


def _last_at_ms(logged: Sequence[StoredEvent | Logged]) -> int:
    """When the last batch of `logged` that holds its cause was accepted (0: none does)."""
    for entry in reversed(logged):
        if entry.cause is not None:
            return int(entry.cause.get("at_ms", 0))
    return 0


def to_domain(stored: StoredEvent) -> Event:
    return event_from_payload(stored.type, stored.schema_version, stored.payload)


class GameRepository:
    def __init__(
        self,
        store: EventLog,
        snapshots: SnapshotStore | None = None,
        changed: Changed | None = None,
        cached_games: int = DEFAULT_CACHED_GAMES,
        change_note: ChangeNote | None = None,
    ) -> None:
        self._store = store
        self._snapshots = snapshots
        self._changed = changed
        self._change_note = change_note
        self._latest: LRUCache[str, Loaded] = LRUCache(cached_games)
        self._timelines: LRUCache[str, _Timeline] = LRUCache(cached_games)

    @property
    def cached_games(self) -> int:
        """How many games' latest states this process keeps now."""
        return len(self._latest)

    @property
    def cached_timelines(self) -> int:
        return len(self._timelines)

    async def log(
        self, game_id: str, to_version: int | None = None, from_version: int = 1
    ) -> list[Logged]:
        return [
            Logged(stored.version, to_domain(stored), stored.cause)
            for stored in await self._store.read(game_id, from_version, to_version)
        ]

    async def load(self, game_id: str, version: int | None = None) -> Loaded:
        """The state after `version` events (the latest if None). NOT_FOUND if no such game."""
        latest = self._latest.get(game_id)
        if version is not None and latest is not None and latest.version == version:
            return latest  # watchers ask for the state after what was just written
        if version is not None:
            log = await self.log(game_id, version)
            if len(log) < version or not log:
                raise self._not_found(game_id, version)
            return Loaded(len(log), undo.state_of(log), _last_at_ms(log))
        cached = self._latest.get(game_id) or await self._from_snapshot(game_id)
        return await self._extended(
            game_id, cached, await self._store.read(game_id, cached.version + 1)
        )

    async def load_latest(self, game_ids: Sequence[str]) -> list[Loaded]:
        """The latest states of several games, their logs' tails read in one round trip.
        NOT_FOUND if one of them is no game."""
        cached = [self._latest.get(g) or await self._from_snapshot(g) for g in game_ids]
        tails = await self._store.read_many(game_ids, [c.version + 1 for c in cached])
        return [
            await self._extended(game_id, kept, tail)
            for game_id, kept, tail in zip(game_ids, cached, tails, strict=True)
        ]

    async def _extended(self, game_id: str, cached: Loaded, stored: list[StoredEvent]) -> Loaded:
        """`cached` with the log's `stored` events after it (the whole log again after an
        undo), kept as the latest."""
        tail = [to_domain(event) for event in stored]
        if any(isinstance(event, Undone) for event in tail):
            log = await self.log(game_id)
            loaded = Loaded(len(log), undo.state_of(log), _last_at_ms(log))
        else:
            at_ms = _last_at_ms(stored) or cached.at_ms
            loaded = Loaded(cached.version + len(tail), fold(tail, cached.state), at_ms)
        if loaded.version == 0:
            raise self._not_found(game_id)
        self._latest[game_id] = loaded
        return loaded

    async def timeline(self, game_id: str) -> list[Moment]:
        """Each command that still counts: when it was accepted, who submitted it and who
        must act after it (for clocks, which are derived from the log). Kept between calls and
        extended with the new events only, unless an undo changed what counts."""
        known = self._timelines.get(game_id)
        tail = await self.log(game_id, from_version=known.version + 1) if known else []
        if known is None or undo.has_undo(tail):
            log = await self.log(game_id)
            if not log:
                raise self._not_found(game_id)
            known, tail = _Timeline(0, GameState(), ()), undo.effective(log)
            last = log[-1].version
        else:
            last = tail[-1].version if tail else known.version
        state, moments = known.state, list(known.moments)
        cause: Mapping[str, Any] = {}  # a tail starts a batch, whose first event has the cause
        for index, logged in enumerate(tail):
            cause = logged.cause if logged.cause is not None else cause
            state = fold([logged.event], state)
            if index + 1 == len(tail) or tail[index + 1].cause is not None:
                seat = cause.get("seat")
                moments.append(
                    Moment(
                        version=logged.version,
                        at_ms=int(cause.get("at_ms", 0)),
                        actor=seat if isinstance(seat, int) else None,
                        acting_after=state.acting_seats,
                    )
                )
        self._timelines[game_id] = _Timeline(last, state, tuple(moments))
        return moments

    async def _from_snapshot(self, game_id: str) -> Loaded:
        snapshot = await self._snapshots.load(game_id) if self._snapshots else None
        if snapshot is None:
            return Loaded(0, GameState())
        return Loaded(snapshot.version, snapshot.state)

    async def _replayed(
        self, game_id: str, command_id: str, fingerprint: str, done: Appended
    ) -> Executed:
        """The events a command id wrote before, if it was sent with this same command."""
        if done.fingerprint and done.fingerprint != fingerprint:
            raise Rejected(
                "COMMAND_ID_REUSED",
                f"command_id {quoted(command_id)!r} was already used for a different command",
                Kind.INVALID_ARGUMENT,
                {"field": "command_id", "first_version": done.first},
            )
        return Executed(await self._store.read(game_id, done.first, done.last), None)

    async def _loaded_or_new(self, game_id: str) -> Loaded:
        try:
            return await self.load(game_id)
        except Rejected:
            return Loaded(0, GameState())

    async def execute(
        self,
        game_id: str,
        command: Command,
        prepare: Prepare | None = None,
        command_id: str = "",
    ) -> Executed:
        """Decides `command` on the latest state and stores its events; returns them stored.
        `prepare` may complete the command from the state first (e.g. compute route revenue).
        A `command_id` already applied is answered with the events it caused then, and
        nothing is decided or written again."""
        fingerprint = command_fingerprint(command) if command_id else ""
        kind = type(command).__name__
        note = self._change_note(game_id) if self._change_note else None
        # The state kept here, unchecked: the append's version check is the check.
        kept: Loaded | None = self._latest.get(game_id)
        for attempt in range(MAX_ATTEMPTS):
            loaded = kept or await self._loaded_or_new(game_id)
            try:
                ready = await prepare(loaded.state, command) if prepare else command
                if isinstance(ready, Undo):
                    log = await self.log(game_id, loaded.version)
                    events = undo.decide_undo(loaded.state, log, ready)
                else:
                    events = decide(loaded.state, ready)
            except Rejected as rejection:
                if kept is not None and rejection.kind is not Kind.UNAVAILABLE:
                    kept = None  # refused on a state the log may have left: decide on the log
                    continue
                # Refused on a state that the same command id, sent before or concurrently,
                # may have changed: its outcome was decided there, and every caller gets that.
                if command_id and (done := await self._store.applied(game_id, command_id)):
                    metrics.COMMANDS.labels(kind, "duplicate").inc()
                    return await self._replayed(game_id, command_id, fingerprint, done)
                metrics.COMMANDS.labels(kind, "rejected").inc()
                metrics.REJECTIONS.labels(rejection.reason).inc()
                raise
            kept = None
            cause = {**command_to_plain(ready), "at_ms": int(time.time() * 1000)}
            try:
                appended = await self._store.append_once(
                    game_id,
                    loaded.version,
                    [to_new_event(e) for e in events],
                    cause,
                    command_id,
                    fingerprint,
                    note,
                )
            except VersionConflict as conflict:
                if conflict.actual < loaded.version:
                    # The log is shorter than the state kept here: writes that were never
                    # acknowledged were lost in a failover. Rebuild from the log.
                    self._latest.pop(game_id, None)
                if attempt + 1 < MAX_ATTEMPTS:
                    metrics.RETRIES.inc()
                continue
            if self._changed is not None:
                self._changed(game_id)
            if appended.duplicate:  # applied before (a retry), or by a race won just now
                metrics.COMMANDS.labels(kind, "duplicate").inc()
                return await self._replayed(game_id, command_id, fingerprint, appended)
            metrics.COMMANDS.labels(kind, "accepted").inc()
            first, version = appended.first, appended.last
            after: Loaded | None = None
            if isinstance(ready, Undo):
                self._latest.pop(game_id, None)  # rebuilt from the log on the next load
            else:
                after = Loaded(version, fold(events, loaded.state), cause["at_ms"])
                self._latest[game_id] = after
                if self._snapshots and self._snapshots.due(loaded.version, version):
                    await self._snapshots.save(game_id, version, after.state)
            stored = [
                StoredEvent(first + i, e.TYPE, e.SCHEMA, e.payload(), cause if i == 0 else None)
                for i, e in enumerate(events)
            ]
            return Executed(stored, after)
        metrics.CONTENDED.inc()
        raise Rejected(
            "CONTENDED",
            f"game {game_id} changed {MAX_ATTEMPTS} times while deciding; try again",
            Kind.ABORTED,
        )

    @staticmethod
    def _not_found(game_id: str, version: int | None = None) -> Rejected:
        where = f" at version {version}" if version else ""
        return Rejected(
            "GAME_NOT_FOUND",
            f"no game {quoted(game_id)}{where}",
            Kind.NOT_FOUND,
            {"game_id": quoted(game_id)},
        )
