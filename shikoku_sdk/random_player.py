"""The random player: random legal actions through the public API (for tests, load and demos).

It asks ListLegalActions what may be done, picks one (mostly not passing, so games end), draws
its choices within the ranges the option gives (`to_command` builds the command), and runs
trains on the routes RoutesService.Optimize suggests. It never needs to know the rules. The
same seed at the same table plays the same game.

    with Client(address) as client:
        table = seat_table(client, 4)
        RandomPlayer(table.game_id, table.seats, seed=1).play()
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection

from shikoku.v1 import game_pb2
from shikoku_sdk.commands import PAYOUT, WITHHOLD, Choices, command_with
from shikoku_sdk.seat_player import Move, Reads, SeatPlayer

BestRoutes = Callable[[str], list[game_pb2.RouteRun]]


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
    """One of `actions` at random: a pass a quarter of the time when one is offered, else
    another action, weighted so that bids, buying trains from corporations and privates'
    abilities are rare."""
    active = [a for a in actions if a.WhichOneof("action") != "pass_turn"]
    passes = [a for a in actions if a.WhichOneof("action") == "pass_turn"]
    if not active or (passes and rng.random() < 0.25):
        return passes[0] if passes else rng.choice(actions)
    return rng.choices(active, weights=[_weight(a) for a in active])[0]


def random_choices(
    action: game_pb2.LegalAction, rng: random.Random, best_routes: BestRoutes
) -> Choices:
    """Choices drawn within what `action` allows: a bid up to 40 over the lowest, any par,
    count and price in range, paying out 70% of the time, the routes `best_routes` gives."""
    match action.WhichOneof("action"):
        case "place_bid":
            bid = action.place_bid
            top = min(bid.max_price, bid.min_price + 40)
            return Choices(price=rng.randrange(bid.min_price, top + 1, bid.step or 1))
        case "start_corporation":
            return Choices(par=rng.choice(list(action.start_corporation.par_prices)))
        case "sell_shares":
            return Choices(count=rng.randint(1, action.sell_shares.max_count))
        case "run_routes":
            return Choices(routes=best_routes(action.run_routes.corporation))
        case "pay_dividends":
            return Choices(kind=PAYOUT if rng.random() < 0.7 else WITHHOLD)
        case "buy_train":
            offer = action.buy_train
            return Choices(price=rng.randint(offer.min_price, offer.max_price))
        case "corporation_buy_private":
            private = action.corporation_buy_private
            return Choices(price=rng.randint(private.min_price, private.max_price))
    return Choices()


def command_for(
    action: game_pb2.LegalAction, rng: random.Random, best_routes: BestRoutes
) -> game_pb2.Command:
    """A command `action` allows, its choices drawn at random (`random_choices`)."""
    return command_with(action, random_choices(action, rng, best_routes))


def random_step(
    listing: game_pb2.ListLegalActionsResponse,
    seats: Collection[int],
    rng: random.Random,
    reads: Reads,
) -> Move | None:
    """The random player's step for `seats` from `listing` (None: none of them may act)."""
    actions = [a for a in listing.actions if a.seat in seats]
    if not actions:
        return None
    action = choose(actions, rng)
    return action.seat, command_for(action, rng, reads.best_routes)


class RandomPlayer(SeatPlayer):
    """Plays random legal actions in one game for the seats it holds (`seats`: seat number ->
    a client acting for it), from `seed` (or a `random.Random` of the caller's)."""

    def decide(self, listing: game_pb2.ListLegalActionsResponse, reads: Reads) -> Move | None:
        """A random legal action of one of our seats (`random_step`)."""
        return random_step(listing, self.seats, self.rng, reads)
