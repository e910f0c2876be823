"""Taking back an action: an Undone event revokes the events of the last command, and the state
is the fold of the events that still count. The log itself is never rewritten."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernel.rejection import Rejected
from services.rules.domain import events as ev
from services.rules.domain.commands import Undo
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState


@dataclass(frozen=True, slots=True)
class Logged:
    """An event as stored: its version, and the command that caused its batch (first event)."""

    version: int
    event: ev.Event
    cause: Mapping[str, Any] | None = None


def effective(log: Sequence[Logged]) -> list[Logged]:
    """The events that still count: without Undone markers and the events they revoke."""
    revoked: set[int] = set()
    for logged in log:
        if isinstance(logged.event, ev.Undone):
            revoked.add(logged.version)
            revoked.update(range(logged.event.first, logged.event.last + 1))
    return [logged for logged in log if logged.version not in revoked]


def state_of(log: Sequence[Logged]) -> GameState:
    return fold(logged.event for logged in effective(log))


def has_undo(log: Sequence[Logged]) -> bool:
    return any(isinstance(logged.event, ev.Undone) for logged in log)


def decide_undo(state: GameState, log: Sequence[Logged], command: Undo) -> list[ev.Event]:
    """The last command that still counts is revoked, if the game allows undo and that command
    was this seat's."""
    if not state.undo_allowed:
        raise Rejected("UNDO_NOT_ALLOWED", "this table does not allow undo")
    if state.result is not None:
        raise Rejected("GAME_OVER", "the game has ended")
    counting = effective(log)
    starts = [i for i, logged in enumerate(counting) if logged.cause is not None]
    if not starts:
        raise Rejected("NOTHING_TO_UNDO", "nothing has been done yet")
    start = starts[-1]
    cause = counting[start].cause or {}
    if cause.get("type") == "CreateGame" or cause.get("seat") != command.seat:
        raise Rejected(
            "NOT_YOUR_ACTION",
            "only the player who took the last action may undo it",
            details={"seat": command.seat},
        )
    return [ev.Undone(command.seat, counting[start].version, counting[-1].version)]
