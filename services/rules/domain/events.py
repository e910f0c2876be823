"""Game events: the facts that make up a game's log. The state is their fold (see evolve.py).

Each event is a frozen dataclass with a `TYPE` name and a `SCHEMA` version; payloads are plain
data (ints, strings, lists, dicts with string keys) so they serialise to msgpack and JSON.
Changing an event's fields means a new SCHEMA and an upcaster, never a rewrite of old logs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from services.rules.domain.records import from_plain, to_plain


@dataclass(frozen=True, slots=True)
class Event:
    TYPE: ClassVar[str]
    SCHEMA: ClassVar[int] = 1

    def payload(self) -> dict[str, Any]:
        plain: dict[str, Any] = to_plain(self)
        return plain


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
    #: Replays of old site logs: a run's stored revenue is taken as it is (docs/rules-notes.md).
    trust_submitted_revenue: bool = False
    #: Players may take back their last action (not in tournaments).
    undo_allowed: bool = False
    #: The title's rules profile the game is played under (profiles.toml; docs/rules-notes.md).
    rules_profile: str = "rulebook"


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
    """`amount` from the bank for `company`'s revenue, to a player (`seat`) or, when `seat` is
    0, to the corporation owning the private (`corporation`)."""

    seat: int
    company: str
    amount: int
    corporation: str = ""


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


@dataclass(frozen=True, slots=True)
class CorporationOperates(Event):
    """The corporation's operating turn begins (rulebook 8.1: stock price order)."""

    TYPE: ClassVar[str] = "CorporationOperates"
    corporation: str


@dataclass(frozen=True, slots=True)
class HomeTokenPlaced(Event):
    """Rulebook 7.4: at the start of its first operating round a corporation's home token goes
    on city `city` of its home hex. Schema 2 added `city` (titles with two cities on a hex)."""

    TYPE: ClassVar[str] = "HomeTokenPlaced"
    SCHEMA: ClassVar[int] = 2
    corporation: str
    hex: str
    city: int


@dataclass(frozen=True, slots=True)
class TileLaid(Event):
    """Rulebook 8.3: a tile laid or upgraded; `cost` is the terrain cost paid."""

    TYPE: ClassVar[str] = "TileLaid"
    corporation: str
    hex: str
    tile: str
    rotation: int
    cost: int
    #: A private company's ability that laid it, outside the track step (rulebook 15).
    ability: str = ""


@dataclass(frozen=True, slots=True)
class TokenPlaced(Event):
    """Rulebook 8.4: a station token on city `city` of `hex`, for `cost`."""

    TYPE: ClassVar[str] = "TokenPlaced"
    corporation: str
    hex: str
    city: int
    cost: int


@dataclass(frozen=True, slots=True)
class StepSkipped(Event):
    """The corporation did not lay track / place a token (`step`)."""

    TYPE: ClassVar[str] = "StepSkipped"
    corporation: str
    step: str


@dataclass(frozen=True, slots=True)
class TrainRun:
    train: str
    hexes: tuple[str, ...]
    revenue: int


@dataclass(frozen=True, slots=True)
class TrainsRan(Event):
    """Rulebook 8.5: the routes run and the revenue they earned (checked when submitted, so a
    replay never recomputes it)."""

    TYPE: ClassVar[str] = "TrainsRan"
    corporation: str
    routes: tuple[TrainRun, ...]
    revenue: int


@dataclass(frozen=True, slots=True)
class Dividend:
    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class DividendsPaid(Event):
    """Rulebook 8.6.1: `per_share` to each share held by a player; open-market shares pay
    `to_treasury`; the stock token moved right to `position`."""

    TYPE: ClassVar[str] = "DividendsPaid"
    corporation: str
    revenue: int
    per_share: int
    dividends: tuple[Dividend, ...]
    to_treasury: int
    position: tuple[int, int]


@dataclass(frozen=True, slots=True)
class EarningsWithheld(Event):
    """Rulebook 8.6: the earnings (maybe none) went to the treasury; the token moved left."""

    TYPE: ClassVar[str] = "EarningsWithheld"
    corporation: str
    amount: int
    position: tuple[int, int]


@dataclass(frozen=True, slots=True)
class TrainBought(Event):
    """Rulebook 8.7. `source` is "depot", "open_market" or the selling corporation's id.
    `exchanged`: the train given back for it (a Diesel exchange). `contribution`: what the
    president paid in a forced purchase (8.7.6)."""

    TYPE: ClassVar[str] = "TrainBought"
    corporation: str
    train: str
    source: str
    price: int
    exchanged: str = ""
    contribution: int = 0


@dataclass(frozen=True, slots=True)
class PhaseChanged(Event):
    TYPE: ClassVar[str] = "PhaseChanged"
    phase: str


@dataclass(frozen=True, slots=True)
class TrainsRusted(Event):
    """Rulebook 8.7.3: every train named `train` left the game."""

    TYPE: ClassVar[str] = "TrainsRusted"
    train: str


@dataclass(frozen=True, slots=True)
class PrivatesClosed(Event):
    TYPE: ClassVar[str] = "PrivatesClosed"
    companies: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TrainsOverLimit(Event):
    """After a phase change these corporations hold more trains than the limit and must discard,
    in this order (8.7.4)."""

    TYPE: ClassVar[str] = "TrainsOverLimit"
    corporations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TrainDiscarded(Event):
    """Rulebook 8.7.4: a train over the limit went to the open market."""

    TYPE: ClassVar[str] = "TrainDiscarded"
    corporation: str
    train: str


@dataclass(frozen=True, slots=True)
class PrivateSoldToCorporation(Event):
    """Rulebook 8.8: a corporation bought a private from the player `seat`."""

    TYPE: ClassVar[str] = "PrivateSoldToCorporation"
    corporation: str
    company: str
    seat: int
    price: int


@dataclass(frozen=True, slots=True)
class AbilityOffered(Event):
    """Rulebook 15 (ER): the seller of `company` may now lay a tile through its ability, for
    `corporation`, before the corporation's turn goes on."""

    TYPE: ClassVar[str] = "AbilityOffered"
    company: str
    seat: int
    corporation: str


@dataclass(frozen=True, slots=True)
class PrivateExchanged(Event):
    """The owner closed `company` and took a share of `corporation` from the initial
    offering."""

    TYPE: ClassVar[str] = "PrivateExchanged"
    seat: int
    company: str
    corporation: str


@dataclass(frozen=True, slots=True)
class AbilityDeclined(Event):
    TYPE: ClassVar[str] = "AbilityDeclined"
    company: str
    seat: int


@dataclass(frozen=True, slots=True)
class OperatingTurnEnded(Event):
    TYPE: ClassVar[str] = "OperatingTurnEnded"
    corporation: str


@dataclass(frozen=True, slots=True)
class OperatingRoundEnded(Event):
    TYPE: ClassVar[str] = "OperatingRoundEnded"
    number: int


@dataclass(frozen=True, slots=True)
class BankBroken(Event):
    """Rulebook 10.2: the bank ran out; it is unlimited from now on and the game will end."""

    TYPE: ClassVar[str] = "BankBroken"


@dataclass(frozen=True, slots=True)
class PlayerBankrupt(Event):
    """Rulebook 8.7.6: the president could not raise the money for a train; their cash went to
    the corporation, or to the bank when `to_bank` (the `bankrupt_cash_to_bank` switch)."""

    TYPE: ClassVar[str] = "PlayerBankrupt"
    seat: int
    corporation: str
    cash: int
    to_bank: bool = False


@dataclass(frozen=True, slots=True)
class Undone(Event):
    """The events of versions `first` to `last` (one command's) no longer count: the log stays
    append-only, and the state is the fold of the events that still count."""

    TYPE: ClassVar[str] = "Undone"
    seat: int
    first: int
    last: int


@dataclass(frozen=True, slots=True)
class PlayerNetWorth:
    seat: int
    net_worth: int


@dataclass(frozen=True, slots=True)
class GameEnded(Event):
    """Rulebook 10: the game is over; `reason` is "bankrupt", "bank" or "ended"."""

    TYPE: ClassVar[str] = "GameEnded"
    reason: str
    net_worths: tuple[PlayerNetWorth, ...]


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
        CorporationOperates,
        HomeTokenPlaced,
        TileLaid,
        TokenPlaced,
        StepSkipped,
        TrainsRan,
        DividendsPaid,
        EarningsWithheld,
        TrainBought,
        PhaseChanged,
        TrainsRusted,
        PrivatesClosed,
        TrainsOverLimit,
        TrainDiscarded,
        PrivateSoldToCorporation,
        AbilityOffered,
        AbilityDeclined,
        PrivateExchanged,
        OperatingTurnEnded,
        OperatingRoundEnded,
        BankBroken,
        PlayerBankrupt,
        GameEnded,
        Undone,
    )
}


# Upcasters turn a stored payload of (type, schema) into the payload of schema + 1. Old events
# are upcast as they are read, never rewritten.
UPCASTERS: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {
    # 1889 has one city per hex: the home token went on city 0.
    ("HomeTokenPlaced", 1): lambda payload: {**payload, "city": 0},
}


def event_from_payload(type_name: str, schema: int, payload: Mapping[str, Any]) -> Event:
    """Rebuilds an event from its stored form, upcasting older schemas step by step."""
    cls = EVENT_TYPES[type_name]
    if schema > cls.SCHEMA:
        raise ValueError(f"{type_name} schema {schema} is newer than this code ({cls.SCHEMA})")
    data = dict(payload)
    while schema < cls.SCHEMA:
        upcast = UPCASTERS.get((type_name, schema))
        if upcast is None:
            raise ValueError(f"{type_name} schema {schema} has no upcaster to {schema + 1}")
        data, schema = upcast(data), schema + 1
    return from_plain(cls, data)
