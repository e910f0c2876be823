"""The actions a seat may take now, with the ranges of their parameters (ListLegalActions)."""

from __future__ import annotations

from dataclasses import dataclass

from services.rules.domain import commands as cmd
from services.rules.domain.commands import PlayerCommand


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


def allows(option: LegalAction, command: PlayerCommand) -> bool:
    """Whether `command` is one that `option` offers: the definition of "listed" in "a command
    is accepted if and only if it is listed"."""
    if command.seat != option.seat:
        return False
    match option, command:
        case PassOption(), cmd.Pass():
            return True
        case BuyOption(company=company), cmd.BuyPrivate(company=asked):
            return asked == company
        case BidRange(company=company, min_price=low, max_price=high, step=step), cmd.PlaceBid():
            price = command.price
            return command.company == company and low <= price <= high and price % step == 0
        case StartOption(corporation=corporation, par_prices=pars), cmd.StartCorporation():
            return command.corporation == corporation and command.par in pars
        case BuyShareOption(corporation=corporation, source=source), cmd.BuyShare():
            return (command.corporation, command.source) == (corporation, source)
        case SellOption(corporation=corporation, max_count=most), cmd.SellShares():
            return command.corporation == corporation and 1 <= command.count <= most
        case LayTileOption(hex=hex_, tile=tile, rotation=rotation), cmd.LayTile():
            return (command.hex, command.tile, command.rotation) == (hex_, tile, rotation)
        case PrivateTileOption(company=company, hex=hex_, tile=tile, rotation=rotation), (
            cmd.LayPrivateTile()
        ):
            offered = (company, hex_, tile, rotation)
            return (command.company, command.hex, command.tile, command.rotation) == offered
        case ExchangeOption(company=company), cmd.ExchangePrivate():
            return command.company == company
        case PlaceTokenOption(hex=hex_, city=city), cmd.PlaceToken():
            return (command.hex, command.city) == (hex_, city)
        case RunRoutesOption(trains=trains), cmd.RunRoutes(priced=priced):
            runs = [run.train for run in priced or ()]
            return priced is not None and all(runs.count(t) <= trains.count(t) for t in runs)
        case DividendOption(), cmd.PayDividends():
            return True
        case BuyTrainOption() as offer, cmd.BuyTrain():
            same = (command.train, command.source, command.exchange)
            return same == (offer.train, offer.source, offer.exchange) and (
                offer.min_price <= command.price <= offer.max_price
            )
        case DiscardOption(corporation=corporation, train=train), cmd.DiscardTrain():
            return (command.corporation, command.train) == (corporation, train)
        case CorporationPrivateOption(company=company, min_price=low, max_price=high), (
            cmd.BuyPrivateForCorporation()
        ):
            return command.company == company and low <= command.price <= high
        case BankruptcyOption(), cmd.DeclareBankruptcy():
            return True
    return False
