"""What every bot of the SDK shares: the seats it holds in one game, a seeded generator, reads
as one of its seats, the routes RoutesService.Optimize suggests, and playing step by step to
the end. Each bot (`RandomPlayer`, `HeuristicPlayer`) says only how it decides one step.

A step is one call: each command asks for the legal actions after it
(`SubmitCommandRequest.include_legal_actions`), and the next step chooses from those instead
of asking ListLegalActions again.

A decision is pure (`PlayerCore.decide`): what it needs to read beyond the listing (a
corporation's best routes, the state, the title) it asks of `Reads`, which raises `Unread`
when that has not been read yet; the player reads it, puts the generator back where it was,
and decides again. So the same decisions serve `SeatPlayer` (over `Client`) and the players of
`shikoku_sdk.aio` (over grpc.aio), and they read only what a decision asks for."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import grpc

from shikoku.v1 import game_pb2, routes_pb2, title_pb2
from shikoku_sdk.client import Client
from shikoku_sdk.commands import route_runs
from shikoku_sdk.documents import state_document
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.heuristic_facts import TitleFacts

ACTIONS_LIMIT = 5000
Answered = Callable[[game_pb2.SubmitCommandResponse, float], None]
Move = tuple[int, game_pb2.Command]
AnyClient = TypeVar("AnyClient")

ROUTES, STATE, TITLE = "routes", "state", "title"


@dataclass(frozen=True)
class Read:
    """A read a decision needs: a corporation's best routes (ROUTES, `name` the corporation),
    the game's state (STATE) or the title's data (TITLE, `name` the title)."""

    kind: str
    name: str = ""


class Unread(Exception):
    """A decision needs `read`, not read yet."""

    def __init__(self, read: Read) -> None:
        super().__init__(f"{read.kind} {read.name}".strip())
        self.read = read


@dataclass
class Reads:
    """What one step has read so far (the title's data: what the player ever read), for its
    decision to ask for."""

    titles: dict[str, TitleFacts]
    routes: dict[str, list[game_pb2.RouteRun]] = field(default_factory=dict)
    document: dict[str, Any] | None = None

    def best_routes(self, corporation: str) -> list[game_pb2.RouteRun]:
        """The routes RoutesService.Optimize finds best for `corporation` now."""
        if corporation not in self.routes:
            raise Unread(Read(ROUTES, corporation))
        return self.routes[corporation]

    def state_document(self) -> dict[str, Any]:
        """The game's state document as it stands."""
        if self.document is None:
            raise Unread(Read(STATE))
        return self.document

    def facts(self, title: str) -> TitleFacts:
        """The title data the heuristic plays by."""
        if title not in self.titles:
            raise Unread(Read(TITLE, title))
        return self.titles[title]

    def learn(
        self, read: Read, answer: routes_pb2.RouteSolution | game_pb2.GameState | title_pb2.Title
    ) -> None:
        """Keeps the answer to `read`."""
        if isinstance(answer, routes_pb2.RouteSolution):
            self.routes[read.name] = route_runs(answer.routes)
        elif isinstance(answer, game_pb2.GameState):
            self.document = state_document(answer)
        else:
            self.titles[read.name] = TitleFacts.from_title(answer)


class PlayerCore(Generic[AnyClient]):
    """A bot's bookkeeping, whatever client its seats act through: the seats it holds in one
    game (`seats`: seat number -> a client acting for it), the generator (from `seed`, or a
    `random.Random` of the caller's), the listing the last command's answer carried."""

    def __init__(
        self, game_id: str, seats: Mapping[int, AnyClient], seed: int | random.Random = 0
    ) -> None:
        if not seats:
            raise ValueError(f"a {type(self).__name__} needs at least one seat")
        self.game_id = game_id
        self.seats = dict(seats)
        self.rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        # Reads go out as one of our seats: a table may hide the present from spectators.
        self.reader = next(iter(self.seats.values()))
        self.titles: dict[str, TitleFacts] = {}
        # What the answer to our last command listed, until a step uses it.
        self._carried: game_pb2.ListLegalActionsResponse | None = None
        self._chose_from_carried = False

    def decide(self, listing: game_pb2.ListLegalActionsResponse, reads: Reads) -> Move | None:
        """The seat that acts and its command, from what may be done now; None when the game
        is over or none of our seats may act. Pure but for the generator and `reads`."""
        raise NotImplementedError

    def carried(self) -> game_pb2.ListLegalActionsResponse | None:
        """What the answer to our last command listed, once (None: ask ListLegalActions)."""
        carried, self._carried = self._carried, None
        self._chose_from_carried = carried is not None
        return carried

    def attempt(
        self, listing: game_pb2.ListLegalActionsResponse, reads: Reads
    ) -> Move | Read | None:
        """The decision (None: nothing to do), or the read it needs first (the generator then
        as it was before)."""
        saved = self.rng.getstate()
        try:
            return self.decide(listing, reads)
        except Unread as unread:
            self.rng.setstate(saved)
            return unread.read

    def harmless(self, error: ShikokuError) -> bool:
        """Whether a refusal of our command means only that someone else (a seat we do not
        hold, the host) acted since the listing it was chosen from: then nothing is done, and
        the next step lists afresh."""
        return self._chose_from_carried and error.code == grpc.StatusCode.FAILED_PRECONDITION

    def answered(self, answer: game_pb2.SubmitCommandResponse) -> None:
        """Keeps the listing our command's answer carried for the next step."""
        self._carried = answer.legal_actions if answer.HasField("legal_actions") else None

    def reads(self) -> Reads:
        """A step's reads, knowing the titles read before."""
        return Reads(self.titles)


class SeatPlayer(PlayerCore[Client]):
    """A bot for the seats it holds in one game (`seats`: seat number -> a `Client` acting for
    it), from `seed` (or a `random.Random` of the caller's)."""

    def legal_actions(self) -> game_pb2.ListLegalActionsResponse:
        """What may be done now: what the answer to our last command listed (once), else
        asked of ListLegalActions."""
        carried = self.carried()
        return carried if carried is not None else self.reader.legal_actions(self.game_id)

    def submit(
        self, seat: int, command: game_pb2.Command, on_answer: Answered | None = None
    ) -> None:
        """Submits `command` for `seat`, asking for the legal actions after it. A command
        chosen from a listing an earlier answer carried may be refused because someone else
        has acted since: then nothing is done (`harmless`)."""
        begin = time.perf_counter()
        try:
            answer = self.seats[seat].act(self.game_id, command, include_legal_actions=True)
        except ShikokuError as error:
            if self.harmless(error):
                return
            raise
        self.answered(answer)
        if on_answer is not None:
            on_answer(answer, time.perf_counter() - begin)

    def best_routes(self, corporation: str) -> list[game_pb2.RouteRun]:
        """The routes RoutesService.Optimize finds best for `corporation` now."""
        return route_runs(self.reader.best_routes(self.game_id, corporation).routes)

    def read(self, read: Read) -> routes_pb2.RouteSolution | game_pb2.GameState | title_pb2.Title:
        """Asks the server what `read` needs."""
        if read.kind == ROUTES:
            return self.reader.best_routes(self.game_id, read.name)
        if read.kind == STATE:
            return self.reader.state(self.game_id)
        return self.reader.title(read.name)

    def step(self, on_answer: Answered | None = None) -> bool:
        """Takes one action; False when the game is over or none of our seats may act.
        `on_answer` is told the command's answer and how long it took (seconds)."""
        listing, reads = self.legal_actions(), self.reads()
        while isinstance(decision := self.attempt(listing, reads), Read):
            reads.learn(decision, self.read(decision))
        if decision is None:
            return False
        self.submit(*decision, on_answer)
        return True

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
