"""What every bot of the SDK shares: the seats it holds in one game, a seeded generator, reads
as one of its seats, the routes RoutesService.Optimize suggests, and playing step by step to
the end. Each bot (`RandomPlayer`, `HeuristicPlayer`) says only how it takes one step.

A step is one call: each command asks for the legal actions after it
(`SubmitCommandRequest.include_legal_actions`), and the next step chooses from those instead
of asking ListLegalActions again."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping

import grpc

from shikoku.v1 import game_pb2
from shikoku_sdk.client import Client
from shikoku_sdk.commands import route_runs
from shikoku_sdk.errors import ShikokuError

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
        # What the answer to our last command listed, until a step uses it.
        self._carried: game_pb2.ListLegalActionsResponse | None = None
        self._chose_from_carried = False

    def legal_actions(self) -> game_pb2.ListLegalActionsResponse:
        """What may be done now: what the answer to our last command listed (once), else
        asked of ListLegalActions."""
        carried, self._carried = self._carried, None
        self._chose_from_carried = carried is not None
        return carried if carried is not None else self.reader.legal_actions(self.game_id)

    def submit(
        self, seat: int, command: game_pb2.Command, on_answer: Answered | None = None
    ) -> None:
        """Submits `command` for `seat`, asking for the legal actions after it. A command
        chosen from a listing an earlier answer carried may be refused because someone else
        has acted since (a seat we do not hold, the host): then nothing is done, and the next
        step lists afresh."""
        begin = time.perf_counter()
        try:
            answer = self.seats[seat].act(self.game_id, command, include_legal_actions=True)
        except ShikokuError as error:
            if self._chose_from_carried and error.code == grpc.StatusCode.FAILED_PRECONDITION:
                return
            raise
        self._carried = answer.legal_actions if answer.HasField("legal_actions") else None
        if on_answer is not None:
            on_answer(answer, time.perf_counter() - begin)

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
