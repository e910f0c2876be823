"""Game events: the facts that make up a game's log. The state is their fold (see evolve.py).

Each event is a frozen dataclass with a `TYPE` name and a `SCHEMA` version; payloads are plain
data (ints, strings, lists, dicts with string keys) so they serialise to msgpack and JSON.
Changing an event's fields means a new SCHEMA and an upcaster, never a rewrite of old logs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class Event:
    TYPE: ClassVar[str]
    SCHEMA: ClassVar[int] = 1

    def payload(self) -> dict[str, Any]:
        return {field.name: _plain(getattr(self, field.name)) for field in dataclasses.fields(self)}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


@dataclass(frozen=True, slots=True)
class SeatedPlayer:
    seat: int
    name: str


@dataclass(frozen=True, slots=True)
class GameCreated(Event):
    """Set-up (rulebook 2): who plays, with which options, and the bank."""

    TYPE: ClassVar[str] = "GameCreated"
    title: str
    players: tuple[SeatedPlayer, ...]
    beginner_game: bool
    bank: int


@dataclass(frozen=True, slots=True)
class PlayerOrderDrawn(Event):
    """Rulebook 2.L: the seats in play order; the first holds the priority deal."""

    TYPE: ClassVar[str] = "PlayerOrderDrawn"
    order: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class StartingCapitalDealt(Event):
    """Rulebook 2.K: each player receives `amount` from the bank."""

    TYPE: ClassVar[str] = "StartingCapitalDealt"
    amount: int


@dataclass(frozen=True, slots=True)
class PrivateOnOffer:
    company: str
    price: int


@dataclass(frozen=True, slots=True)
class PrivateAuctionStarted(Event):
    """Rulebook 5.2: the privates in column order, topmost first."""

    TYPE: ClassVar[str] = "PrivateAuctionStarted"
    offer: tuple[PrivateOnOffer, ...]


@dataclass(frozen=True, slots=True)
class Deal:
    seat: int
    company: str
    price: int


@dataclass(frozen=True, slots=True)
class PrivatesDealt(Event):
    """Beginner game (14.1): each player receives one private and pays its face value."""

    TYPE: ClassVar[str] = "PrivatesDealt"
    deal: tuple[Deal, ...]


@dataclass(frozen=True, slots=True)
class PrivateBought(Event):
    """A player bought the topmost private at its price, as their action."""

    TYPE: ClassVar[str] = "PrivateBought"
    seat: int
    company: str
    price: int


@dataclass(frozen=True, slots=True)
class BidPlaced(Event):
    """A reservation bid placed or raised on a private that is not topmost."""

    TYPE: ClassVar[str] = "BidPlaced"
    seat: int
    company: str
    price: int


@dataclass(frozen=True, slots=True)
class Passed(Event):
    """A player passed their turn."""

    TYPE: ClassVar[str] = "Passed"
    seat: int


@dataclass(frozen=True, slots=True)
class PrivateSold(Event):
    """A private that became topmost was sold to its only bidder or to a closed auction's
    winner; not a turn of the buyer."""

    TYPE: ClassVar[str] = "PrivateSold"
    seat: int
    company: str
    price: int


@dataclass(frozen=True, slots=True)
class ClosedAuctionStarted(Event):
    """Several players bid on the new topmost private: they alone bid for it, in `order`
    (clockwise from the left of the highest bidder)."""

    TYPE: ClassVar[str] = "ClosedAuctionStarted"
    company: str
    order: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ClosedAuctionBid(Event):
    TYPE: ClassVar[str] = "ClosedAuctionBid"
    seat: int
    company: str
    price: int


@dataclass(frozen=True, slots=True)
class ClosedAuctionPassed(Event):
    """The player leaves the closed auction; their bid is withdrawn."""

    TYPE: ClassVar[str] = "ClosedAuctionPassed"
    seat: int
    company: str


@dataclass(frozen=True, slots=True)
class PrivatePriceReduced(Event):
    """Every player passed and nobody owns a private: the topmost private's price drops."""

    TYPE: ClassVar[str] = "PrivatePriceReduced"
    company: str
    price: int


@dataclass(frozen=True, slots=True)
class Payment:
    seat: int
    company: str
    amount: int


@dataclass(frozen=True, slots=True)
class PrivateRevenuePaid(Event):
    """Private companies paid their revenue to their owners from the bank."""

    TYPE: ClassVar[str] = "PrivateRevenuePaid"
    payments: tuple[Payment, ...]


@dataclass(frozen=True, slots=True)
class StockRoundStarted(Event):
    """A stock round begins; `priority` holds the priority deal and acts first."""

    TYPE: ClassVar[str] = "StockRoundStarted"
    number: int
    priority: int


@dataclass(frozen=True, slots=True)
class CorporationStarted(Event):
    """Rulebook 7.2.1: the player bought the president's certificate at twice `par`; the stock
    token enters the market at `position`."""

    TYPE: ClassVar[str] = "CorporationStarted"
    seat: int
    corporation: str
    par: int
    position: tuple[int, int]


@dataclass(frozen=True, slots=True)
class ShareBought(Event):
    """One 10% share, from the initial offering (`source` "initial_offering") at par or from the
    open market ("open_market") at the market price."""

    TYPE: ClassVar[str] = "ShareBought"
    seat: int
    corporation: str
    source: str
    price: int


@dataclass(frozen=True, slots=True)
class SharesSold(Event):
    """`count` shares sold to the open market at `price` each; the token moved to `position`."""

    TYPE: ClassVar[str] = "SharesSold"
    seat: int
    corporation: str
    count: int
    price: int
    position: tuple[int, int]


@dataclass(frozen=True, slots=True)
class PresidencyChanged(Event):
    """Rulebook 7.5: the president's certificate changed hands for two 10% shares."""

    TYPE: ClassVar[str] = "PresidencyChanged"
    corporation: str
    seat: int
    previous: int


@dataclass(frozen=True, slots=True)
class CorporationFloated(Event):
    """Rulebook 7.4: half the shares are sold; the treasury receives `capital` (10x par)."""

    TYPE: ClassVar[str] = "CorporationFloated"
    corporation: str
    capital: int


@dataclass(frozen=True, slots=True)
class TurnEnded(Event):
    """The player who bought and/or sold this turn is done (or can do nothing more)."""

    TYPE: ClassVar[str] = "TurnEnded"
    seat: int


@dataclass(frozen=True, slots=True)
class SoldOutPriceRaised(Event):
    """Rulebook 7.7.2: at the end of the stock round a sold-out corporation's token moved up."""

    TYPE: ClassVar[str] = "SoldOutPriceRaised"
    corporation: str
    position: tuple[int, int]


@dataclass(frozen=True, slots=True)
class StockRoundEnded(Event):
    """Everyone passed in a row: `priority` holds the priority deal (7.7.1)."""

    TYPE: ClassVar[str] = "StockRoundEnded"
    priority: int


@dataclass(frozen=True, slots=True)
class OperatingRoundStarted(Event):
    TYPE: ClassVar[str] = "OperatingRoundStarted"
    number: int
    of: int


EVENT_TYPES: dict[str, type[Event]] = {
    cls.TYPE: cls
    for cls in (
        GameCreated,
        PlayerOrderDrawn,
        StartingCapitalDealt,
        PrivateAuctionStarted,
        PrivatesDealt,
        PrivateBought,
        BidPlaced,
        Passed,
        PrivateSold,
        ClosedAuctionStarted,
        ClosedAuctionBid,
        ClosedAuctionPassed,
        PrivatePriceReduced,
        PrivateRevenuePaid,
        StockRoundStarted,
        CorporationStarted,
        ShareBought,
        SharesSold,
        PresidencyChanged,
        CorporationFloated,
        TurnEnded,
        SoldOutPriceRaised,
        StockRoundEnded,
        OperatingRoundStarted,
    )
}

_NESTED: dict[tuple[str, str], type[Any]] = {
    ("GameCreated", "players"): SeatedPlayer,
    ("PrivateAuctionStarted", "offer"): PrivateOnOffer,
    ("PrivateRevenuePaid", "payments"): Payment,
    ("PrivatesDealt", "deal"): Deal,
}


def event_from_payload(type_name: str, schema: int, payload: Mapping[str, Any]) -> Event:
    """Rebuilds an event from its stored form."""
    cls = EVENT_TYPES[type_name]
    if schema != cls.SCHEMA:
        raise ValueError(f"{type_name} schema {schema} has no upcaster to {cls.SCHEMA}")
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        raw = payload[field.name]
        nested = _NESTED.get((type_name, field.name))
        if nested is not None:
            values[field.name] = tuple(nested(**item) for item in raw)
        elif isinstance(raw, list):
            values[field.name] = tuple(raw)
        else:
            values[field.name] = raw
    return cls(**values)
