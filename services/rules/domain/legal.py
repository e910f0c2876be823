"""The actions a seat may take now, with the ranges of their parameters (ListLegalActions)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PassOption:
    seat: int


@dataclass(frozen=True, slots=True)
class BuyOption:
    """Buy the topmost private `company` for `price`."""

    company: str
    price: int
    seat: int = 0


@dataclass(frozen=True, slots=True)
class BidRange:
    """Bid on `company`: min_price..max_price in multiples of step."""

    company: str
    min_price: int
    max_price: int
    step: int
    seat: int = 0


@dataclass(frozen=True, slots=True)
class StartOption:
    """Start `corporation` at one of `par_prices`."""

    corporation: str
    par_prices: tuple[int, ...]
    seat: int = 0


@dataclass(frozen=True, slots=True)
class BuyShareOption:
    corporation: str
    source: str
    price: int
    seat: int = 0


@dataclass(frozen=True, slots=True)
class SellOption:
    """Sell 1..max_count shares of `corporation` at `price` each."""

    corporation: str
    max_count: int
    price: int
    seat: int = 0


@dataclass(frozen=True, slots=True)
class LayTileOption:
    hex: str
    tile: str
    rotation: int
    cost: int
    seat: int = 0


@dataclass(frozen=True, slots=True)
class PrivateTileOption:
    """Lay `tile` on `hex` at `rotation` through `company`'s ability."""

    company: str
    hex: str
    tile: str
    rotation: int
    seat: int = 0


@dataclass(frozen=True, slots=True)
class ExchangeOption:
    """Close `company` for a share of `corporation`."""

    company: str
    corporation: str
    seat: int = 0


@dataclass(frozen=True, slots=True)
class PlaceTokenOption:
    hex: str
    city: int
    cost: int
    seat: int = 0


@dataclass(frozen=True, slots=True)
class RunRoutesOption:
    """Run `trains` (the corporation's) on routes; RoutesService.Optimize suggests the best."""

    corporation: str
    trains: tuple[str, ...]
    seat: int = 0


@dataclass(frozen=True, slots=True)
class DividendOption:
    """Pay out or withhold `revenue`."""

    corporation: str
    revenue: int
    seat: int = 0


@dataclass(frozen=True, slots=True)
class BuyTrainOption:
    """Buy `train` from `source` for min_price..max_price (giving back `exchange` if set);
    `contribution` is what the president adds in a forced purchase."""

    train: str
    source: str
    min_price: int
    max_price: int
    exchange: str = ""
    contribution: int = 0
    seat: int = 0


@dataclass(frozen=True, slots=True)
class DiscardOption:
    corporation: str
    train: str
    seat: int = 0


@dataclass(frozen=True, slots=True)
class CorporationPrivateOption:
    """The operating corporation may buy `company` from its owner for min_price..max_price."""

    company: str
    owner: int
    min_price: int
    max_price: int
    seat: int = 0


@dataclass(frozen=True, slots=True)
class BankruptcyOption:
    seat: int = 0


LegalAction = (
    PassOption
    | BuyOption
    | BidRange
    | StartOption
    | BuyShareOption
    | SellOption
    | LayTileOption
    | PrivateTileOption
    | ExchangeOption
    | PlaceTokenOption
    | RunRoutesOption
    | DividendOption
    | BuyTrainOption
    | DiscardOption
    | CorporationPrivateOption
    | BankruptcyOption
)
