"""A client that plays random legal actions through the public API (for tests, load and demos).

It asks ListLegalActions what may be done, picks one (mostly not passing, so games end), fills
its parameters within the given ranges, and runs trains on the routes RoutesService.Optimize
suggests. It never needs to know the rules.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping

from shikoku.v1 import game_pb2, game_pb2_grpc, routes_pb2, routes_pb2_grpc

CALL_SECONDS = 30.0
Metadata = tuple[tuple[str, str], ...]


def _weight(action: game_pb2.LegalAction) -> float:
    kind = action.WhichOneof("action")
    if kind == "place_bid":
        return 0.15
    if kind == "buy_train" and action.buy_train.source not in ("depot", "open_market"):
        return 0.02
    if kind in ("corporation_buy_private", "exchange_private"):
        return 0.2
    if kind == "lay_tile" and action.lay_tile.company:
        return 0.1
    return 1.0


def choose(actions: list[game_pb2.LegalAction], rng: random.Random) -> game_pb2.LegalAction:
    active = [a for a in actions if a.WhichOneof("action") != "pass_turn"]
    passes = [a for a in actions if a.WhichOneof("action") == "pass_turn"]
    if not active or (passes and rng.random() < 0.25):
        return passes[0] if passes else rng.choice(actions)
    return rng.choices(active, weights=[_weight(a) for a in active])[0]


def command_for(
    action: game_pb2.LegalAction,
    rng: random.Random,
    best_routes: Callable[[str], list[game_pb2.RouteRun]],
) -> game_pb2.Command:
    """A command the option allows, parameters drawn within its ranges."""
    kind = action.WhichOneof("action")
    match kind:
        case "pass_turn":
            return game_pb2.Command(pass_turn=game_pb2.Pass())
        case "buy_private":
            return game_pb2.Command(
                buy_private=game_pb2.BuyPrivate(company=action.buy_private.company)
            )
        case "place_bid":
            bid = action.place_bid
            top = min(bid.max_price, bid.min_price + 40)
            price = rng.randrange(bid.min_price, top + 1, bid.step)
            return game_pb2.Command(place_bid=game_pb2.PlaceBid(company=bid.company, price=price))
        case "start_corporation":
            start = action.start_corporation
            par = rng.choice(list(start.par_prices))
            return game_pb2.Command(
                start_corporation=game_pb2.StartCorporation(corporation=start.corporation, par=par)
            )
        case "buy_share":
            share = action.buy_share
            return game_pb2.Command(
                buy_share=game_pb2.BuyShare(corporation=share.corporation, source=share.source)
            )
        case "sell_shares":
            sell = action.sell_shares
            count = rng.randint(1, sell.max_count)
            return game_pb2.Command(
                sell_shares=game_pb2.SellShares(corporation=sell.corporation, count=count)
            )
        case "lay_tile":
            lay = action.lay_tile
            return game_pb2.Command(
                lay_tile=game_pb2.LayTile(
                    hex=lay.hex, tile=lay.tile, rotation=lay.rotation, company=lay.company
                )
            )
        case "place_token":
            token = action.place_token
            return game_pb2.Command(place_token=game_pb2.PlaceToken(hex=token.hex, city=token.city))
        case "run_routes":
            routes = best_routes(action.run_routes.corporation)
            return game_pb2.Command(run_routes=game_pb2.RunRoutes(routes=routes))
        case "pay_dividends":
            kind_ = (
                game_pb2.DIVIDEND_KIND_PAYOUT
                if rng.random() < 0.7
                else game_pb2.DIVIDEND_KIND_WITHHOLD
            )
            return game_pb2.Command(pay_dividends=game_pb2.PayDividends(kind=kind_))
        case "buy_train":
            offer = action.buy_train
            price = rng.randint(offer.min_price, offer.max_price)
            return game_pb2.Command(
                buy_train=game_pb2.BuyTrain(
                    train=offer.train, source=offer.source, price=price, exchange=offer.exchange
                )
            )
        case "discard_train":
            discard = action.discard_train
            return game_pb2.Command(
                discard_train=game_pb2.DiscardTrain(
                    corporation=discard.corporation, train=discard.train
                )
            )
        case "corporation_buy_private":
            offer_ = action.corporation_buy_private
            return game_pb2.Command(
                corporation_buy_private=game_pb2.CorporationBuyPrivate(
                    company=offer_.company, price=rng.randint(offer_.min_price, offer_.max_price)
                )
            )
        case "exchange_private":
            return game_pb2.Command(
                exchange_private=game_pb2.ExchangePrivate(company=action.exchange_private.company)
            )
        case "declare_bankruptcy":
            return game_pb2.Command(declare_bankruptcy=game_pb2.DeclareBankruptcy())
    raise ValueError(f"unknown legal action {kind}")


def _bearer(credential: str) -> Metadata:
    return (("authorization", f"Bearer {credential}"),)


class RandomPlayer:
    """Plays one game for the seats whose credentials it holds (`credentials`: seat -> token)."""

    def __init__(
        self,
        games: game_pb2_grpc.GameServiceStub,
        routes: routes_pb2_grpc.RoutesServiceStub,
        game_id: str,
        credentials: Mapping[int, str],
        seed: int = 0,
    ) -> None:
        self._games = games
        self._routes = routes
        self.game_id = game_id
        self._credentials = dict(credentials)
        self._rng = random.Random(seed)
        # Reads go out as one of our seats: a table may hide the present from spectators.
        self._reader = _bearer(next(iter(self._credentials.values())))

    def _best_routes(self, corporation: str) -> list[game_pb2.RouteRun]:
        request = routes_pb2.OptimizeRequest(game_id=self.game_id, corporation=corporation)
        solution = self._routes.Optimize(request, metadata=self._reader, timeout=CALL_SECONDS)
        return [game_pb2.RouteRun(train=r.train, hexes=r.hexes) for r in solution.routes]

    def step(self) -> bool:
        """Takes one action; False when the game is over or none of our seats may act."""
        request = game_pb2.ListLegalActionsRequest(game_id=self.game_id)
        actions = [
            a
            for a in self._games.ListLegalActions(
                request, metadata=self._reader, timeout=CALL_SECONDS
            ).actions
            if a.seat in self._credentials
        ]
        if not actions:
            return False
        action = choose(actions, self._rng)
        command = command_for(action, self._rng, self._best_routes)
        submit = game_pb2.SubmitCommandRequest(
            game_id=self.game_id, command=command, command_id=str(uuid.uuid4())
        )
        self._games.SubmitCommand(
            submit, metadata=_bearer(self._credentials[action.seat]), timeout=CALL_SECONDS
        )
        return True

    def play(self, limit: int = 5000) -> int:
        """Plays until nothing is left to do; returns the number of actions taken."""
        for taken in range(limit):
            if not self.step():
                return taken
        raise RuntimeError(f"game {self.game_id} did not end within {limit} actions")
