"""From a `LegalAction` (what ListLegalActions offers) to the `Command` that takes it.

    action = client.legal_actions(game_id).actions[0]
    command = to_command(action)                      # the defaults
    command = to_command(bid_option, price=120)       # a choice within the option's range

Each option names what the command must repeat (the company, the hex and tile, the train...);
`to_command` copies that and fills what the player chooses from the choices given, or from a
default: a range's lowest value, a list's first item, paying out, running no trains (ask
`Client.best_routes` for routes, or let `Client.act` do it). A choice the option does not take,
or one outside what it allows, raises `ValueError` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from shikoku.v1 import game_pb2, routes_pb2

PAYOUT = game_pb2.DIVIDEND_KIND_PAYOUT
WITHHOLD = game_pb2.DIVIDEND_KIND_WITHHOLD


@dataclass(frozen=True)
class Choices:
    """What a player chooses where an option allows several values; None: the default.

    `price`: a bid (place_bid), a train's price (buy_train) or a private's price
    (corporation_buy_private); `par`: a par price (start_corporation); `count`: shares to sell
    (sell_shares); `kind`: DIVIDEND_KIND_PAYOUT or DIVIDEND_KIND_WITHHOLD (pay_dividends);
    `routes`: the trains' routes (run_routes), as `RouteRun`s or a `RouteSolution`'s
    `TrainRoute`s.
    """

    price: int | None = None
    par: int | None = None
    count: int | None = None
    kind: game_pb2.DividendKind.ValueType | None = None
    routes: Sequence[game_pb2.RouteRun | routes_pb2.TrainRoute] | None = None

    def given(self) -> frozenset[str]:
        """The names of the choices made (not left to the default)."""
        return frozenset(f.name for f in fields(self) if getattr(self, f.name) is not None)


def to_command(
    action: game_pb2.LegalAction,
    *,
    price: int | None = None,
    par: int | None = None,
    count: int | None = None,
    kind: game_pb2.DividendKind.ValueType | None = None,
    routes: Sequence[game_pb2.RouteRun | routes_pb2.TrainRoute] | None = None,
) -> game_pb2.Command:
    """The command that takes `action`, with the choices given and the defaults for the rest
    (see the module's docstring). Raises ValueError for a choice the action does not take or
    outside its range, and for an action of a kind this SDK does not know."""
    return command_with(action, Choices(price, par, count, kind, routes))


def command_with(action: game_pb2.LegalAction, choices: Choices) -> game_pb2.Command:
    """`to_command` with the choices as one value."""
    kind = action.WhichOneof("action")
    if kind is None or kind not in _BUILDERS:
        raise ValueError(f"unknown legal action {kind!r}: is the SDK older than the server?")
    takes, build = _BUILDERS[kind]
    if extra := choices.given() - takes:
        allowed = ", ".join(sorted(takes)) or "no choices"
        raise ValueError(f"{kind} takes {allowed}; got {', '.join(sorted(extra))}")
    return build(getattr(action, kind), choices)


def route_runs(
    routes: Sequence[game_pb2.RouteRun | routes_pb2.TrainRoute],
) -> list[game_pb2.RouteRun]:
    """Routes as RunRoutes takes them (a RouteSolution's TrainRoutes become RouteRuns)."""
    return [
        route
        if isinstance(route, game_pb2.RouteRun)
        else game_pb2.RouteRun(train=route.train, hexes=route.hexes)
        for route in routes
    ]


def _within(name: str, value: int, low: int, high: int, step: int = 1) -> int:
    if not low <= value <= high or (step > 1 and value % step):
        multiple = f", a multiple of {step}" if step > 1 else ""
        raise ValueError(f"{name} {value} is outside {low}..{high}{multiple}")
    return value


def _bid(option: game_pb2.PlaceBidOption, choices: Choices) -> game_pb2.Command:
    price = option.min_price if choices.price is None else choices.price
    _within("price", price, option.min_price, option.max_price, option.step)
    return game_pb2.Command(place_bid=game_pb2.PlaceBid(company=option.company, price=price))


def _start(option: game_pb2.StartCorporationOption, choices: Choices) -> game_pb2.Command:
    pars = list(option.par_prices)
    par = pars[0] if choices.par is None else choices.par
    if par not in pars:
        raise ValueError(f"par {par} is not one of {pars}")
    return game_pb2.Command(
        start_corporation=game_pb2.StartCorporation(corporation=option.corporation, par=par)
    )


def _sell(option: game_pb2.SellSharesOption, choices: Choices) -> game_pb2.Command:
    count = _within("count", 1 if choices.count is None else choices.count, 1, option.max_count)
    return game_pb2.Command(
        sell_shares=game_pb2.SellShares(corporation=option.corporation, count=count)
    )


def _run(_option: game_pb2.RunRoutesOption, choices: Choices) -> game_pb2.Command:
    routes = route_runs(choices.routes or [])
    return game_pb2.Command(run_routes=game_pb2.RunRoutes(routes=routes))


def _dividends(_option: game_pb2.PayDividendsOption, choices: Choices) -> game_pb2.Command:
    kind = PAYOUT if choices.kind is None else choices.kind
    if kind not in (PAYOUT, WITHHOLD):
        raise ValueError(f"kind {kind} is neither DIVIDEND_KIND_PAYOUT nor DIVIDEND_KIND_WITHHOLD")
    return game_pb2.Command(pay_dividends=game_pb2.PayDividends(kind=kind))


def _train(option: game_pb2.BuyTrainOption, choices: Choices) -> game_pb2.Command:
    price = option.min_price if choices.price is None else choices.price
    _within("price", price, option.min_price, option.max_price)
    return game_pb2.Command(
        buy_train=game_pb2.BuyTrain(
            train=option.train, source=option.source, price=price, exchange=option.exchange
        )
    )


def _buy_private(
    option: game_pb2.CorporationBuyPrivateOption, choices: Choices
) -> game_pb2.Command:
    price = option.min_price if choices.price is None else choices.price
    _within("price", price, option.min_price, option.max_price)
    return game_pb2.Command(
        corporation_buy_private=game_pb2.CorporationBuyPrivate(company=option.company, price=price)
    )


def _pass(_option: game_pb2.Pass, _choices: Choices) -> game_pb2.Command:
    return game_pb2.Command(pass_turn=game_pb2.Pass())


def _buy_topmost(option: game_pb2.BuyPrivateOption, _choices: Choices) -> game_pb2.Command:
    return game_pb2.Command(buy_private=game_pb2.BuyPrivate(company=option.company))


def _share(option: game_pb2.BuyShareOption, _choices: Choices) -> game_pb2.Command:
    return game_pb2.Command(
        buy_share=game_pb2.BuyShare(corporation=option.corporation, source=option.source)
    )


def _lay(option: game_pb2.LayTileOption, _choices: Choices) -> game_pb2.Command:
    lay = game_pb2.LayTile(
        hex=option.hex, tile=option.tile, rotation=option.rotation, company=option.company
    )
    return game_pb2.Command(lay_tile=lay)


def _token(option: game_pb2.PlaceTokenOption, _choices: Choices) -> game_pb2.Command:
    return game_pb2.Command(place_token=game_pb2.PlaceToken(hex=option.hex, city=option.city))


def _discard(option: game_pb2.DiscardTrainOption, _choices: Choices) -> game_pb2.Command:
    return game_pb2.Command(
        discard_train=game_pb2.DiscardTrain(corporation=option.corporation, train=option.train)
    )


def _exchange(option: game_pb2.ExchangePrivate, _choices: Choices) -> game_pb2.Command:
    return game_pb2.Command(exchange_private=game_pb2.ExchangePrivate(company=option.company))


def _bankrupt(_option: game_pb2.DeclareBankruptcy, _choices: Choices) -> game_pb2.Command:
    return game_pb2.Command(declare_bankruptcy=game_pb2.DeclareBankruptcy())


# What each kind of action takes (the choices it allows) and how its command is built; each
# builder gets the LegalAction's field of that kind.
_BUILDERS: dict[str, tuple[frozenset[str], Callable[[Any, Choices], game_pb2.Command]]] = {
    "pass_turn": (frozenset(), _pass),
    "buy_private": (frozenset(), _buy_topmost),
    "place_bid": (frozenset({"price"}), _bid),
    "start_corporation": (frozenset({"par"}), _start),
    "buy_share": (frozenset(), _share),
    "sell_shares": (frozenset({"count"}), _sell),
    "lay_tile": (frozenset(), _lay),
    "place_token": (frozenset(), _token),
    "run_routes": (frozenset({"routes"}), _run),
    "pay_dividends": (frozenset({"kind"}), _dividends),
    "buy_train": (frozenset({"price"}), _train),
    "discard_train": (frozenset(), _discard),
    "corporation_buy_private": (frozenset({"price"}), _buy_private),
    "exchange_private": (frozenset(), _exchange),
    "declare_bankruptcy": (frozenset(), _bankrupt),
}

# Every kind of LegalAction the SDK can answer (a test holds it to the protos).
KNOWN_ACTIONS = frozenset(_BUILDERS)
