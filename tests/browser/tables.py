"""What the browser tests share: a started table played through the public gRPC API (its
seats' tokens, its state and legal actions, a random bot's move), the position a test waits
for, and opening the board page on a game."""

from __future__ import annotations

import random
from typing import Any

import grpc
from google.protobuf import json_format
from playwright.sync_api import Page, ViewportSize

from shikoku.v1 import (
    game_pb2,
    game_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
    routes_pb2,
    routes_pb2_grpc,
    title_pb2_grpc,
)
from shikoku_sdk.random_player import choose, command_for
from tests.browser.conftest import WebSystem

SEATS = 3
VIEWPORT: ViewportSize = {"width": 1400, "height": 1000}


class Game:
    """A started game and its seats' tokens, acting through the public gRPC API."""

    def __init__(
        self, system: WebSystem, game_id: str, tokens: dict[int, str], host_token: str = ""
    ) -> None:
        self.api_key = system.api_key
        self.channel = grpc.insecure_channel(system.gateway)
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(self.channel)
        self.games = game_pb2_grpc.GameServiceStub(self.channel)
        self.routes = routes_pb2_grpc.RoutesServiceStub(self.channel)
        self.titles = title_pb2_grpc.TitleServiceStub(self.channel)
        self.game_id = game_id
        self.tokens = dict(tokens)
        self.host_token = host_token  # the host's calls: EndGame, ReplaceSeat

    def metadata(self, token: str = "") -> tuple[tuple[str, str], ...]:
        bearer = (("authorization", f"Bearer {token}"),) if token else ()
        return (("x-api-key", self.api_key), *bearer)

    def reader(self) -> tuple[tuple[str, str], ...]:
        return self.metadata(self.tokens[min(self.tokens)])

    def state(self) -> game_pb2.GameState:
        request = game_pb2.GetStateRequest(game_id=self.game_id)
        return self.games.GetState(request, metadata=self.reader(), timeout=10)

    def actions(self) -> list[game_pb2.LegalAction]:
        request = game_pb2.ListLegalActionsRequest(game_id=self.game_id)
        return list(
            self.games.ListLegalActions(request, metadata=self.reader(), timeout=10).actions
        )

    def best_routes(self, corporation: str) -> routes_pb2.RouteSolution:
        request = routes_pb2.OptimizeRequest(game_id=self.game_id, corporation=corporation)
        return self.routes.Optimize(request, metadata=self.reader(), timeout=10)

    def bot_move(self, rng: random.Random, seats: set[int]) -> None:
        """One random legal action of one of `seats`, as the random player chooses it."""
        actions = [a for a in self.actions() if a.seat in seats]
        assert actions, "no bot seat may act"
        action = choose(actions, rng)

        def routes(corporation: str) -> list[game_pb2.RouteRun]:
            solution = self.best_routes(corporation)
            return [game_pb2.RouteRun(train=r.train, hexes=r.hexes) for r in solution.routes]

        request = game_pb2.SubmitCommandRequest(
            game_id=self.game_id, command=command_for(action, rng, routes)
        )
        self.games.SubmitCommand(request, metadata=self.metadata(self.tokens[action.seat]))

    def log(self, last: int) -> list[tuple[int, str]]:
        """The stored events 1 to `last`: (version, type)."""
        request = game_pb2.StreamEventsRequest(game_id=self.game_id, from_version=1)
        stream = self.games.StreamEvents(request, metadata=self.reader(), timeout=30)
        events = []
        for event in stream:
            events.append((event.version, event.type))
            if event.version == last:
                stream.cancel()
                break
        return events


class Table(Game):
    """A new table of SEATS bots, started: its game and seats' tokens."""

    def __init__(self, system: WebSystem, options: lobby_pb2.TableOptions | None = None) -> None:
        super().__init__(system, "", {})
        created = self.lobby.CreateTable(
            lobby_pb2.CreateTableRequest(seat_count=SEATS, options=options),
            metadata=self.metadata(),
            timeout=10,
        )
        self.game_id = created.table.table_id
        self.host_token = created.host_token
        for n in range(1, SEATS + 1):
            joined = self.lobby.JoinTable(
                lobby_pb2.JoinTableRequest(table_id=self.game_id, player_name=f"Bot {n}"),
                metadata=self.metadata(),
                timeout=10,
            )
            self.tokens[joined.seat] = joined.seat_token
        self.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=self.game_id),
            metadata=self.metadata(created.host_token),
            timeout=10,
        )


def document(state: game_pb2.GameState) -> dict[str, Any]:
    return json_format.MessageToDict(state.state)


def president_about_to_lay(table: Game, state: game_pb2.GameState) -> int:
    """The seat of the operating corporation's president when it is at its track step with
    trains and tiles to lay on a board with some track already; else 0."""
    doc = document(state)
    round_ = doc.get("round") or {}
    if round_.get("type") != "operating_round" or round_.get("step") != "track":
        return 0
    if len(doc["board"]["tiles"]) < 3:
        return 0
    corporation = next(c for c in doc["corporations"] if c["id"] == round_["operating"])
    if not corporation["trains"]:
        return 0
    seat = int(corporation["president"])
    lays = [a for a in table.actions() if a.seat == seat and a.WhichOneof("action") == "lay_tile"]
    return seat if any(not a.lay_tile.company for a in lays) else 0


def open_page(page: Page, system: WebSystem, game_id: str, seat: int = 0, token: str = "") -> None:
    page.set_viewport_size(VIEWPORT)
    query = f"api_key={system.api_key}&game={game_id}"
    if token:
        query += f"&seat={seat}&token={token}"
    page.goto(f"http://{system.web}/?{query}")


def settled(page: Page, version: int) -> None:
    """Waits until the page shows `version` and has the legal actions of that version."""
    page.wait_for_selector(
        f"#board[data-version='{version}'][data-actions-version='{version}']", timeout=30_000
    )
    page.wait_for_selector(f"#actions[data-version='{version}'][data-busy='no']")
