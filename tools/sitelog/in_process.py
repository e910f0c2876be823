"""A table played by the domain code in this process: the fast path of the importer."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from services.routes.engine.validation import evaluate
from services.rules.domain.commands import Command, CreateGame, RunRoutes
from services.rules.domain.commands import EndGame as EndGameCommand
from services.rules.domain.decide import decide
from services.rules.domain.events import Event, SeatedPlayer
from services.rules.domain.evolve import fold
from services.rules.domain.route_pricing import price_routes_at_once
from services.rules.domain.state import GameState
from services.rules.domain.view import state_document
from services.rules.wire import command_from_proto
from tools.sitelog.export_format import SiteGame
from tools.sitelog.exporter import Batch
from tools.sitelog.replay import Caused
from tools.sitelog.translate import Submit


class InProcessTable:
    def __init__(self, game: SiteGame) -> None:
        players = tuple(
            SeatedPlayer(seat, player.name) for seat, player in enumerate(game.players, start=1)
        )
        create = CreateGame(
            players=players,
            seed=game.seed,
            beginner_game=game.beginner_game,
            fixed_seat_order=True,
            title=game.title,
            trust_submitted_revenue=game.stores_revenue,
            rules_profile=game.rules_profile,
        )
        self.state = GameState()
        self.events: list[Event] = []
        self.batches: list[Batch] = []
        self._apply(create)

    def view(self) -> dict[str, Any]:
        return state_document(self.state)

    def acting_seats(self) -> list[int]:
        return list(self.state.acting_seats)

    def submit(self, seat: int, step: Submit) -> list[Caused]:
        command = command_from_proto(seat, step.command)
        if isinstance(command, RunRoutes):
            command = price_routes_at_once(self.state, command, evaluate)
        return [(event.TYPE, asdict(event)) for event in self._apply(command)]

    def end_game(self) -> None:
        self._apply(EndGameCommand())

    def _apply(self, command: Command) -> list[Event]:
        events = decide(self.state, command)
        self.batches.append(Batch(command, tuple(events)))
        self.events += events
        self.state = fold(events, self.state)
        return events
