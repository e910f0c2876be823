"""How much of a game a spectator kept N actions behind may see.

Every action (a command, including the opening set-up) is stored as one batch of events whose
first event carries the batch's cause. A spectator N actions behind sees the log up to just
before the N-th latest action after the set-up; once the game has ended, all of it.
"""

from __future__ import annotations

from collections.abc import Iterable

from infra.eventstore import StoredEvent
from services.rules.domain.events import GameEnded


class SpectatorView:
    """Follows a game's log event by event; `visible` is the last version a spectator
    `delay_actions` behind may see."""

    def __init__(self, delay_actions: int) -> None:
        self._delay = delay_actions
        self._action_starts: list[int] = []
        self._last = 0
        self._ended = False

    def see(self, event: StoredEvent) -> None:
        if event.version <= self._last:
            return  # seen already (two reads brought the same view up to date at once)
        if event.cause is not None and event.version > 1:
            self._action_starts.append(event.version)
        self._ended = self._ended or event.type == GameEnded.TYPE
        self._last = event.version

    def see_all(self, events: Iterable[StoredEvent]) -> SpectatorView:
        for event in events:
            self.see(event)
        return self

    @property
    def visible(self) -> int:
        if self._ended or self._delay == 0 or not self._action_starts:
            return self._last
        held_back = self._action_starts[-min(self._delay, len(self._action_starts))]
        return held_back - 1

    @property
    def latest(self) -> int:
        return self._last
