"""The SDK's bots over `shikoku_sdk.aio.Client`: `RandomPlayer` and `HeuristicPlayer` make the
same decisions as their sync namesakes (`random_step`, `heuristic_step`: the same seed at the
same table plays the same game); only the reads and the commands are awaited."""

from __future__ import annotations

import time

from shikoku.v1 import game_pb2, routes_pb2, title_pb2
from shikoku_sdk.aio_client import Client
from shikoku_sdk.commands import route_runs
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.heuristic import heuristic_step
from shikoku_sdk.random_player import random_step
from shikoku_sdk.seat_player import (
    ACTIONS_LIMIT,
    ROUTES,
    STATE,
    Answered,
    Move,
    PlayerCore,
    Read,
    Reads,
)


class SeatPlayer(PlayerCore[Client]):
    """A bot for the seats it holds in one game (`seats`: seat number -> a
    `shikoku_sdk.aio.Client` acting for it), from `seed` (or a `random.Random` of the
    caller's): `shikoku_sdk.seat_player.SeatPlayer`, its calls awaited."""

    async def legal_actions(self) -> game_pb2.ListLegalActionsResponse:
        """What may be done now: what the answer to our last command listed (once), else
        asked of ListLegalActions."""
        carried = self.carried()
        return carried if carried is not None else await self.reader.legal_actions(self.game_id)

    async def submit(
        self, seat: int, command: game_pb2.Command, on_answer: Answered | None = None
    ) -> None:
        """Submits `command` for `seat`, asking for the legal actions after it (a harmless
        refusal does nothing, as the sync player's)."""
        begin = time.perf_counter()
        try:
            answer = await self.seats[seat].act(self.game_id, command, include_legal_actions=True)
        except ShikokuError as error:
            if self.harmless(error):
                return
            raise
        self.answered(answer)
        if on_answer is not None:
            on_answer(answer, time.perf_counter() - begin)

    async def best_routes(self, corporation: str) -> list[game_pb2.RouteRun]:
        """The routes RoutesService.Optimize finds best for `corporation` now."""
        return route_runs((await self.reader.best_routes(self.game_id, corporation)).routes)

    async def read(
        self, read: Read
    ) -> routes_pb2.RouteSolution | game_pb2.GameState | title_pb2.Title:
        """Asks the server what `read` needs."""
        if read.kind == ROUTES:
            return await self.reader.best_routes(self.game_id, read.name)
        if read.kind == STATE:
            return await self.reader.state(self.game_id)
        return await self.reader.title(read.name)

    async def step(self, on_answer: Answered | None = None) -> bool:
        """Takes one action; False when the game is over or none of our seats may act."""
        listing, reads = await self.legal_actions(), self.reads()
        while isinstance(decision := self.attempt(listing, reads), Read):
            reads.learn(decision, await self.read(decision))
        if decision is None:
            return False
        await self.submit(*decision, on_answer)
        return True

    async def play(self, limit: int = ACTIONS_LIMIT, on_answer: Answered | None = None) -> int:
        """Plays until nothing is left for our seats to do; returns the number of actions
        taken. Raises RuntimeError if the game goes on past `limit` actions."""
        for taken in range(limit):
            if not await self.step(on_answer):
                return taken
        raise RuntimeError(f"game {self.game_id} did not end within {limit} actions")

    async def final_state(self) -> game_pb2.GameState:
        """The game's state as it stands (after `play`: as it ended)."""
        return await self.reader.state(self.game_id)


class RandomPlayer(SeatPlayer):
    """`shikoku_sdk.RandomPlayer` over `shikoku_sdk.aio.Client`: `await player.play()`."""

    def decide(self, listing: game_pb2.ListLegalActionsResponse, reads: Reads) -> Move | None:
        """A random legal action of one of our seats (`random_step`)."""
        return random_step(listing, self.seats, self.rng, reads)


class HeuristicPlayer(SeatPlayer):
    """`shikoku_sdk.heuristic.HeuristicPlayer` over `shikoku_sdk.aio.Client`."""

    def decide(self, listing: game_pb2.ListLegalActionsResponse, reads: Reads) -> Move | None:
        """The heuristic's move for the seat that must act, if it is ours (`heuristic_step`)."""
        return heuristic_step(listing, self.seats, self.rng, reads)
