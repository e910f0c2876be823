"""A bot that plays random legal moves: for property tests, benchmarks and filling seats.

It never invents a move: it picks one of the legal actions and fills its parameters within
the ranges given. Route revenue is the one thing it makes up (a multiple of 10 per train), as
the routes service would compute it for a real position.
"""

from __future__ import annotations

import random

from services.routes.engine.graph import route_hexes
from services.routes.engine.solver import solve
from services.rules.domain import commands as cmd
from services.rules.domain.events import TrainRun
from services.rules.domain.legal import (
    BankruptcyOption,
    BidRange,
    BuyOption,
    BuyShareOption,
    BuyTrainOption,
    CorporationPrivateOption,
    DiscardOption,
    DividendOption,
    ExchangeOption,
    LayTileOption,
    LegalAction,
    PassOption,
    PlaceTokenOption,
    PrivateTileOption,
    RunRoutesOption,
    SellOption,
    StartOption,
)
from services.rules.domain.route_pricing import corporation_graph
from services.rules.domain.state import GameState


def command_for(option: LegalAction, rng: random.Random, state: GameState) -> cmd.PlayerCommand:
    """One command that the option allows, parameters drawn at random within its ranges; for
    running trains, the best routes (from the routes solver)."""
    match option:
        case PassOption(seat=seat):
            return cmd.Pass(seat)
        case BuyOption(company=company, seat=seat):
            return cmd.BuyPrivate(seat, company)
        case BidRange(company=company, min_price=low, max_price=high, step=step, seat=seat):
            return cmd.PlaceBid(seat, company, rng.randrange(low, min(high, low + 40) + 1, step))
        case StartOption(corporation=corporation, par_prices=pars, seat=seat):
            return cmd.StartCorporation(seat, corporation, rng.choice(pars))
        case BuyShareOption(corporation=corporation, source=source, seat=seat):
            return cmd.BuyShare(seat, corporation, source)
        case SellOption(corporation=corporation, max_count=most, seat=seat):
            return cmd.SellShares(seat, corporation, rng.randint(1, most))
        case LayTileOption(hex=hex_, tile=tile, rotation=rotation, seat=seat):
            return cmd.LayTile(seat, hex_, tile, rotation)
        case PrivateTileOption(company=company, hex=hex_, tile=tile, rotation=rotation, seat=seat):
            return cmd.LayPrivateTile(seat, company, hex_, tile, rotation)
        case ExchangeOption(company=company, seat=seat):
            return cmd.ExchangePrivate(seat, company)
        case PlaceTokenOption(hex=hex_, city=city, seat=seat):
            return cmd.PlaceToken(seat, hex_, city)
        case RunRoutesOption(corporation=corporation, seat=seat):
            return best_routes(state, corporation, seat)
        case DividendOption(seat=seat):
            return cmd.PayDividends(seat, rng.random() < 0.7)
        case BuyTrainOption(
            train=train, source=source, min_price=low, max_price=high, exchange=old, seat=seat
        ):
            return cmd.BuyTrain(seat, train, source, rng.randint(low, high), old)
        case DiscardOption(corporation=corporation, train=train, seat=seat):
            return cmd.DiscardTrain(seat, corporation, train)
        case CorporationPrivateOption(company=company, min_price=low, max_price=high, seat=seat):
            return cmd.BuyPrivateForCorporation(seat, company, rng.randint(low, high))
        case BankruptcyOption(seat=seat):
            return cmd.DeclareBankruptcy(seat)
    raise TypeError(option)


def best_routes(state: GameState, corporation: str, seat: int) -> cmd.RunRoutes:
    """The corporation's optimal routes, already priced."""
    graph = corporation_graph(state, corporation)
    solution = solve(graph)
    runs = tuple(
        TrainRun(graph.trains[r.train].name, route_hexes(graph, r), r.revenue)
        for r in solution.routes
    )
    submissions = tuple(cmd.RouteSubmission(run.train, run.hexes) for run in runs)
    return cmd.RunRoutes(seat, submissions, priced=runs)


def _weight(option: LegalAction) -> float:
    """Bots that mostly bid, or trade trains between corporations, never finish a game."""
    match option:
        case BidRange():
            return 0.15
        case BuyTrainOption(source=source) if source not in {"depot", "open_market"}:
            return 0.02
        case CorporationPrivateOption():
            return 0.2
        case PrivateTileOption() | ExchangeOption():
            return 0.1
    return 1.0


def choose(options: list[LegalAction], rng: random.Random) -> LegalAction:
    """Mostly something other than passing, so that games move on to their end."""
    active = [o for o in options if not isinstance(o, PassOption)]
    if not active or rng.random() < 0.25:
        return options[-1] if isinstance(options[-1], PassOption) else rng.choice(options)
    return rng.choices(active, weights=[_weight(o) for o in active])[0]
