"""A game of Shikoku 1889 in this process: the rules service's decide and fold, with the public
API's messages in and out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernel.rejection import Rejected
from services.routes.engine.deadline import Deadline
from services.routes.engine.validation import evaluate
from services.rules import wire
from services.rules.domain import commands as cmd
from services.rules.domain import decide, undo
from services.rules.domain.events import SeatedPlayer
from services.rules.domain.evolve import fold
from services.rules.domain.game_end import net_worth
from services.rules.domain.route_pricing import price_routes_at_once
from services.rules.domain.state import GameState
from services.rules.domain.view import state_document
from shikoku.v1 import game_pb2, routes_pb2
from shikoku_engine import routes
from shikoku_engine.refusal import Refused

#: The variants of the title Game.new knows: the full game, or the beginner game's dealt
#: privates (rulebook 14).
VARIANTS = ("", "beginner")


class Game:
    """One game, from its creation to its end. Immutable inside: `apply` moves this game on,
    `clone` gives an independent copy at once (the states are shared, never changed)."""

    __slots__ = ("_state", "_version")

    def __init__(self, state: GameState, version: int) -> None:
        self._state = state
        self._version = version

    @classmethod
    def new(
        cls,
        players: Sequence[str] | int,
        seed: int,
        profile: str = "rulebook",
        variant: str = "",
    ) -> Game:
        """A new game of `players` (their names, or how many: "Player 1", ...) in seats 1, 2,
        ...; `seed` draws the seating order (and the beginner game's deal) as the rules
        service's CreateGame does with its own. `profile`: "rulebook" or "18xx.games" (the
        title's rules profiles); `variant`: "" or "beginner". Raises Refused as CreateGame
        would (too few or too many players, an unknown profile)."""
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}: one of {VARIANTS}")
        names = (
            [f"Player {n}" for n in range(1, players + 1)] if isinstance(players, int) else players
        )
        create = cmd.CreateGame(
            players=tuple(SeatedPlayer(seat, name) for seat, name in enumerate(names, 1)),
            seed=seed,
            beginner_game=variant == "beginner",
            rules_profile=profile,
        )
        game = cls(GameState(), 0)
        game._decide(create)
        return game

    @property
    def version(self) -> int:
        """How many events the game has: the version GetState and SubmitCommand report."""
        return self._version

    @property
    def acting_seats(self) -> tuple[int, ...]:
        """Who must act now (none once the game is over)."""
        return self._state.acting_seats

    @property
    def domain_state(self) -> GameState:
        """The rules' own state (services.rules.domain.state.GameState), for those who read
        the domain itself."""
        return self._state

    def legal_actions(self) -> list[game_pb2.LegalAction]:
        """What may be done now: the messages ListLegalActions lists, in its order (the acting
        seat's options, then the abilities private owners may use out of turn)."""
        return [wire.legal_action_to_proto(option) for option in decide.legal_actions(self._state)]

    def apply(self, command: game_pb2.Command, seat: int | None = None) -> int:
        """Plays `command` (the SDK's Command message, as SubmitCommand takes it) for `seat`,
        by default the one seat that must act; returns the new version. Routes are checked and
        priced by the routes engine here, as the rules service has the routes service do.
        Raises Refused with the rules' reason, as SubmitCommand would refuse it: nothing is
        applied then. Undo is refused (UNDO_NOT_ALLOWED): keep a `clone()` to go back to."""
        acting = seat if seat is not None else self._only_acting_seat()
        try:
            decided = wire.command_from_proto(acting, command)
            if isinstance(decided, cmd.Undo):
                undo.decide_undo(self._state, (), decided)
                raise AssertionError("a game without undo refuses it")
            if isinstance(decided, cmd.RunRoutes):
                decided = price_routes_at_once(self._state, decided, evaluate)
        except Rejected as rejection:
            raise Refused.of(rejection) from rejection
        self._decide(decided)
        return self._version

    def clone(self) -> Game:
        """An independent copy: applying to one leaves the other as it was."""
        return Game(self._state, self._version)

    def is_over(self) -> bool:
        return self._state.result is not None

    def result_reason(self) -> str | None:
        """Why the game ended ("bankrupt", "bank"), None while it goes on."""
        return self._state.result.reason if self._state.result is not None else None

    def net_worths(self) -> dict[int, int]:
        """Each seat's net worth (rulebook 10.3: cash, shares at market price, privates at face
        value): as it stands, or as the game's end scored it."""
        if self._state.result is not None:
            return dict(self._state.result.net_worths)
        return {p.seat: net_worth(self._state, p) for p in self._state.players}

    def state(self) -> dict[str, Any]:
        """The state document GetState serves (GameState.state), as a dict: the same keys
        and values, its numbers still ints (a protobuf Struct holds them as floats)."""
        return state_document(self._state)

    def best_routes(
        self, corporation: str, deadline: Deadline | None = None
    ) -> routes_pb2.RouteSolution:
        """The corporation's best routes on the board as it stands, as RoutesService.Optimize
        gives them (its `routes` are a RunRoutes' routes). The search runs to its end unless
        `deadline` (an object whose `passed()` says when to stop) cuts it short, with
        `proven` False then."""
        try:
            return routes.best_routes(self._state, corporation, deadline)
        except KeyError:
            raise ValueError(f"there is no corporation {corporation!r}") from None

    def _only_acting_seat(self) -> int:
        match self._state.acting_seats:
            case (seat,):
                return seat
            case ():
                raise Refused("GAME_OVER", "FAILED_PRECONDITION", "no one may act now", {})
            case several:
                raise ValueError(f"seats {several} may act: say which one with seat=")

    def _decide(self, command: cmd.Command) -> None:
        try:
            events = decide.decide(self._state, command)
        except Rejected as rejection:
            raise Refused.of(rejection) from rejection
        self._state = fold(events, self._state)
        self._version += len(events)
