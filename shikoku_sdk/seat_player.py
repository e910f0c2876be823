"""What every bot of the SDK shares: the seats it holds in one game, a seeded generator, reads
as one of its seats, the routes RoutesService.Optimize suggests, and playing step by step to
the end. Each bot (`RandomPlayer`, `HeuristicPlayer`) says only how it takes one step."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from shikoku.v1 import game_pb2
from shikoku_sdk.client import Client
from shikoku_sdk.commands import route_runs

ACTIONS_LIMIT = 5000
Answered = Callable[[game_pb2.SubmitCommandResponse, float], None]


class SeatPlayer:
    """A bot for the seats it holds in one game (`seats`: seat number -> a client acting for
    it), from `seed` (or a `random.Random` of the caller's)."""

    def __init__(
        self, game_id: str, seats: Mapping[int, Client], seed: int | random.Random = 0
    ) -> None:
        if not seats:
            raise ValueError(f"a {type(self).__name__} needs at least one seat")
        self.game_id = game_id
        self.seats = dict(seats)
        self.rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        # Reads go out as one of our seats: a table may hide the present from spectators.
        self.reader = next(iter(self.seats.values()))

    def best_routes(self, corporation: str) -> list[game_pb2.RouteRun]:
        """The routes RoutesService.Optimize finds best for `corporation` now."""
        return route_runs(self.reader.best_routes(self.game_id, corporation).routes)

    def step(self, on_answer: Answered | None = None) -> bool:
        """Takes one action; False when the game is over or none of our seats may act.
        `on_answer` is told the command's answer and how long it took (seconds)."""
        raise NotImplementedError

    def play(self, limit: int = ACTIONS_LIMIT, on_answer: Answered | None = None) -> int:
        """Plays until nothing is left for our seats to do; returns the number of actions
        taken. Raises RuntimeError if the game goes on past `limit` actions."""
        for taken in range(limit):
            if not self.step(on_answer):
                return taken
        raise RuntimeError(f"game {self.game_id} did not end within {limit} actions")

    def final_state(self) -> game_pb2.GameState:
        """The game's state as it stands (after `play`: as it ended)."""
        return self.reader.state(self.game_id)
