"""Games on the event store: load a game's state, decide a command, append its events.

The state is a cache of the fold of the stream: it is rebuilt from the stream's tail on every
call, so several rules processes may serve the same game. The append states the version the
decision was made on; if another process got there first, the command is decided again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from services.rules.domain.commands import Command, command_to_plain
from services.rules.domain.decide import decide
from services.rules.domain.events import Event, event_from_payload
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from shikoku.eventstore import EventStore, NewEvent, StoredEvent, VersionConflict
from shikoku.rejection import Kind, Rejected

MAX_ATTEMPTS = 5
Prepare = Callable[[GameState, Command], Awaitable[Command]]


@dataclasses.dataclass(frozen=True, slots=True)
class Loaded:
    version: int
    state: GameState


def to_new_event(event: Event) -> NewEvent:
    return NewEvent(type=event.TYPE, schema_version=event.SCHEMA, payload=event.payload())


def to_domain(stored: StoredEvent) -> Event:
    return event_from_payload(stored.type, stored.schema_version, stored.payload)


class GameRepository:
    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._latest: dict[str, Loaded] = {}

    async def load(self, game_id: str, version: int | None = None) -> Loaded:
        """The state after `version` events (the latest if None). NOT_FOUND if no such game."""
        if version is not None:
            events = await self._store.read(game_id, 1, version)
            loaded = Loaded(len(events), fold(map(to_domain, events)))
            if not events or loaded.version < version:
                raise self._not_found(game_id, version)
            return loaded
        cached = self._latest.get(game_id, Loaded(0, GameState()))
        tail = await self._store.read(game_id, cached.version + 1)
        loaded = Loaded(cached.version + len(tail), fold(map(to_domain, tail), cached.state))
        if loaded.version == 0:
            raise self._not_found(game_id)
        self._latest[game_id] = loaded
        return loaded

    async def execute(
        self, game_id: str, command: Command, prepare: Prepare | None = None
    ) -> list[StoredEvent]:
        """Decides `command` on the latest state and stores its events; returns them stored.
        `prepare` may complete the command from the state first (e.g. compute route revenue)."""
        for _attempt in range(MAX_ATTEMPTS):
            try:
                loaded = await self.load(game_id)
            except Rejected:
                loaded = Loaded(0, GameState())
            ready = await prepare(loaded.state, command) if prepare else command
            events = decide(loaded.state, ready)
            cause = command_to_plain(ready)
            try:
                version = await self._store.append(
                    game_id, loaded.version, [to_new_event(e) for e in events], cause
                )
            except VersionConflict:
                continue
            first = version - len(events) + 1
            self._latest[game_id] = Loaded(version, fold(events, loaded.state))
            return [
                StoredEvent(first + i, e.TYPE, e.SCHEMA, e.payload(), cause if i == 0 else None)
                for i, e in enumerate(events)
            ]
        raise Rejected(
            "CONTENDED",
            f"game {game_id} changed {MAX_ATTEMPTS} times while deciding; try again",
            Kind.FAILED_PRECONDITION,
        )

    @staticmethod
    def _not_found(game_id: str, version: int | None = None) -> Rejected:
        where = f" at version {version}" if version else ""
        return Rejected(
            "GAME_NOT_FOUND", f"no game {game_id}{where}", Kind.NOT_FOUND, {"game_id": game_id}
        )
