"""A one-ply search bot on the local engine (docs/api.md, "The engine, locally"): every seat
tries each of its legal actions on a clone and takes the one that leaves its net worth highest
(ties: acting rather than passing, then at random).

    python examples/engine_search_bot.py [players] [seed]
"""

import random
import sys

from shikoku.v1 import game_pb2
from shikoku_engine import Game, Refused
from shikoku_sdk.commands import to_command


def command(game: Game, action: game_pb2.LegalAction) -> game_pb2.Command:
    if action.WhichOneof("action") == "run_routes":  # the solver's routes, as Optimize gives them
        return to_command(action, routes=game.best_routes(action.run_routes.corporation).routes)
    return to_command(action)  # the option's defaults: lowest bid, first par, paying out...


def best_command(game: Game, seat: int, rng: random.Random) -> game_pb2.Command:
    scored = []
    for action in (a for a in game.legal_actions() if a.seat == seat):
        trial = game.clone()
        try:
            trial.apply(move := command(game, action), seat)
        except Refused:  # e.g. a default price the rules refuse here: not a move to make
            continue
        acting = action.WhichOneof("action") != "pass_turn"
        scored.append((trial.net_worths()[seat], acting, rng.random(), move))
    return max(scored)[-1]


players, seed = int(sys.argv[1]) if sys.argv[1:] else 4, int(sys.argv[2]) if sys.argv[2:] else 1
game, rng = Game.new(players, seed=seed), random.Random(seed)
while not game.is_over():
    seat = game.acting_seats[0]
    game.apply(best_command(game, seat, rng), seat)
print(f"over after {game.version} events: {game.result_reason()}, net worths {game.net_worths()}")
