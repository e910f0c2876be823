"""The Shikoku 1889 rules as a library: the rules service's own pure core, played in this
process (no server, no Redis, no gRPC), with the public API's messages.

    from shikoku_engine import Game

    game = Game.new(4, seed=1)
    while not game.is_over():
        action = game.legal_actions()[0]
        ...

docs/api.md ("The engine, locally") describes it.
"""

from shikoku_engine.game import Game
from shikoku_engine.refusal import Refused
from shikoku_engine.version import VERSION

__version__ = VERSION
__all__ = ["VERSION", "Game", "Refused"]
