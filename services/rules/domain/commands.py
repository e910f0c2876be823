"""Commands: what a player (or the lobby, for set-up) asks the game to do. decide() turns a
command into events or a rejection."""

from __future__ import annotations

from dataclasses import dataclass

from services.rules.domain.events import SeatedPlayer


@dataclass(frozen=True, slots=True)
class CreateGame:
    """Set up a game. `seed` is drawn once by the caller; every random choice of the set-up
    (player order, the beginner game's deal) follows from it and is recorded in the events."""

    players: tuple[SeatedPlayer, ...]
    seed: int
    beginner_game: bool = False
    fixed_seat_order: bool = False
    title: str = "1889"


@dataclass(frozen=True, slots=True)
class BuyPrivate:
    seat: int
    company: str


@dataclass(frozen=True, slots=True)
class PlaceBid:
    seat: int
    company: str
    price: int


@dataclass(frozen=True, slots=True)
class Pass:
    seat: int


PlayerCommand = BuyPrivate | PlaceBid | Pass
Command = CreateGame | PlayerCommand
