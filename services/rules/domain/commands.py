"""Commands: what a player (or the lobby, for set-up) asks the game to do. decide() turns a
command into events or a rejection."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.rules.domain.events import SeatedPlayer, TrainRun
from services.rules.domain.records import from_plain, to_plain


@dataclass(frozen=True, slots=True)
class CreateGame:
    """Set up a game. `seed` is drawn once by the caller; every random choice of the set-up
    (player order, the beginner game's deal) follows from it and is recorded in the events."""

    players: tuple[SeatedPlayer, ...]
    seed: int
    beginner_game: bool = False
    fixed_seat_order: bool = False
    title: str = "1889"
    trust_submitted_revenue: bool = False
    undo_allowed: bool = False
    #: Which of the title's rules profiles the table plays under: "rulebook" (our default) or
    #: "18xx.games" (the site's departures from the rulebook, see docs/rules-notes.md).
    rules_profile: str = "rulebook"


@dataclass(frozen=True, slots=True)
class EndGame:
    """The players agree to stop here (through the table's host): the game ends now and is
    scored as it stands (rulebook 13: ending early by agreement)."""


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


@dataclass(frozen=True, slots=True)
class StartCorporation:
    """Buy a corporation's president's certificate, setting its par price (rulebook 7.2.1)."""

    seat: int
    corporation: str
    par: int


@dataclass(frozen=True, slots=True)
class BuyShare:
    """Buy one 10% share from "initial_offering" or "open_market" (7.2.2, 7.2.3)."""

    seat: int
    corporation: str
    source: str


@dataclass(frozen=True, slots=True)
class SellShares:
    seat: int
    corporation: str
    count: int


@dataclass(frozen=True, slots=True)
class LayTile:
    """Rulebook 8.3: lay or upgrade a tile (`tile` by its number, e.g. "57")."""

    seat: int
    hex: str
    tile: str
    rotation: int


@dataclass(frozen=True, slots=True)
class LayPrivateTile:
    """A tile laid through a private company's ability (the MF's port tile, rulebook 15), by
    the player who owns it, even when it is not their turn."""

    seat: int
    company: str
    hex: str
    tile: str
    rotation: int


@dataclass(frozen=True, slots=True)
class ExchangePrivate:
    """The owner closes the private for a share it may be exchanged for (the DR for an IR
    share, rulebook 15), even when it is not their turn."""

    seat: int
    company: str


@dataclass(frozen=True, slots=True)
class PlaceToken:
    """Rulebook 8.4: a station token on city `city` (0 for the only one) of `hex`."""

    seat: int
    hex: str
    city: int = 0


@dataclass(frozen=True, slots=True)
class RouteSubmission:
    """One train's route as a player submits it: the hexes visited in order, or one hex
    sequence per piece between revenue centres (the site's newer `connections` form).
    `revenue` is what an imported log claims; it counts only in games that trust it."""

    train: str
    hexes: tuple[str, ...] = ()
    connections: tuple[tuple[str, ...], ...] = ()
    revenue: int = 0


@dataclass(frozen=True, slots=True)
class RunRoutes:
    """Rulebook 8.5: the operating corporation's routes. The rules service has them checked
    (and their revenue computed) by the routes service before deciding, and puts the result in
    `priced`, so that the events record what was earned."""

    seat: int
    routes: tuple[RouteSubmission, ...]
    priced: tuple[TrainRun, ...] | None = None


@dataclass(frozen=True, slots=True)
class PayDividends:
    """Rulebook 8.6: `payout` True pays the earnings to shareholders, False withholds them."""

    seat: int
    payout: bool


@dataclass(frozen=True, slots=True)
class BuyTrain:
    """Rulebook 8.7: buy `train` from "depot", "open_market" or another corporation (its id)
    for `price`; `exchange` names a train given back for a Diesel."""

    seat: int
    train: str
    source: str
    price: int
    exchange: str = ""


@dataclass(frozen=True, slots=True)
class DiscardTrain:
    seat: int
    corporation: str
    train: str


@dataclass(frozen=True, slots=True)
class BuyPrivateForCorporation:
    """Rulebook 8.8: the operating corporation buys a private from a player."""

    seat: int
    company: str
    price: int


@dataclass(frozen=True, slots=True)
class DeclareBankruptcy:
    seat: int


@dataclass(frozen=True, slots=True)
class Undo:
    """Take back this seat's last action, if the table allows undo and nothing came after it."""

    seat: int


PlayerCommand = (
    BuyPrivate
    | PlaceBid
    | Pass
    | StartCorporation
    | BuyShare
    | SellShares
    | LayTile
    | LayPrivateTile
    | ExchangePrivate
    | PlaceToken
    | RunRoutes
    | PayDividends
    | BuyTrain
    | DiscardTrain
    | BuyPrivateForCorporation
    | DeclareBankruptcy
)
Command = CreateGame | EndGame | Undo | PlayerCommand


COMMAND_TYPES: dict[str, type[Command]] = {
    cls.__name__: cls
    for cls in (
        CreateGame,
        EndGame,
        BuyPrivate,
        PlaceBid,
        Pass,
        StartCorporation,
        BuyShare,
        SellShares,
        LayTile,
        LayPrivateTile,
        ExchangePrivate,
        PlaceToken,
        RunRoutes,
        PayDividends,
        BuyTrain,
        DiscardTrain,
        BuyPrivateForCorporation,
        DeclareBankruptcy,
        Undo,
    )
}


def command_to_plain(command: Command) -> dict[str, Any]:
    """The command as stored with the events it caused (the game's audit trail)."""
    return {"type": type(command).__name__, **to_plain(command)}


def command_from_plain(data: Mapping[str, Any]) -> Command:
    fields = {key: value for key, value in data.items() if key != "type"}
    return from_plain(COMMAND_TYPES[str(data["type"])], fields)
