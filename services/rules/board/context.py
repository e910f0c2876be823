"""What the board rules need to know about the rest of the game, given by the engine."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Situation:
    """The game around the board: the phase, who holds the private companies, the variant."""

    phase: str
    #: Private companies that are open and not held by a corporation (held by players, or not
    #: yet sold): their icons restrict their hexes (8.3.1).
    privates_with_players: frozenset[str] = frozenset()
    #: Private companies held by a corporation: private company → corporation.
    privates_with_corporations: Mapping[str, str] = field(default_factory=dict)
    beginner: bool = False
    #: The 18xx.games engine's test of an upgrade (the rules profile switch of that name):
    #: besides connected, it must add track the corporation's walk reaches or change the value
    #: of a city the walk reaches (`new_track`).
    upgrade_must_use_new_track_or_change_city: bool = False


@dataclass(frozen=True, slots=True)
class Actor:
    """Who builds: the operating corporation (None for a player using a private company's
    ability), the cash it has to pay costs with, and the ability used, if any (by the private
    company's id)."""

    corporation: str | None
    cash: int
    ability: str | None = None
