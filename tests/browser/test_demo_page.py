"""The demo page in a real headless Chromium, against the real system through the web bridge:
it creates a table and watches the game while the test plays the seats over gRPC."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from playwright.sync_api import Page, expect

from shikoku.v1 import (
    game_pb2,
    game_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
    routes_pb2,
    routes_pb2_grpc,
)
from shikoku_sdk.random_player import choose, command_for
from tests.browser.conftest import WebSystem

pytestmark = [pytest.mark.e2e, pytest.mark.client]

ACTIONS = 60  # besides the 3 played during each drop
DROP_STREAM_AFTER = (5, 20, 40)  # actions after which the page's watch loses its connection


class Seats:
    """The game's seats (and host), acting through the public gRPC API."""

    def __init__(self, system: WebSystem, page: Page) -> None:
        game = page.locator("#game")
        self.game_id = str(game.get_attribute("data-game-id"))
        self.host = str(game.get_attribute("data-host-token"))
        self.tokens = {seat: str(game.get_attribute(f"data-seat-{seat}")) for seat in (1, 2, 3)}
        self.api_key = system.api_key
        self.channel = grpc.insecure_channel(system.gateway)
        self.games = game_pb2_grpc.GameServiceStub(self.channel)
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(self.channel)
        self.routes = routes_pb2_grpc.RoutesServiceStub(self.channel)

    def metadata(self, token: str) -> tuple[tuple[str, str], ...]:
        api_key = (("x-api-key", self.api_key),) if self.api_key else ()
        return (("authorization", f"Bearer {token}"), *api_key)

    def play_one(self, rng: random.Random) -> None:
        reader = self.metadata(self.tokens[1])
        request = game_pb2.ListLegalActionsRequest(game_id=self.game_id)
        actions = list(self.games.ListLegalActions(request, metadata=reader, timeout=10).actions)
        action = choose(actions, rng)

        def best_routes(corporation: str) -> list[game_pb2.RouteRun]:
            optimize = routes_pb2.OptimizeRequest(game_id=self.game_id, corporation=corporation)
            solution = self.routes.Optimize(optimize, metadata=reader, timeout=10)
            return [game_pb2.RouteRun(train=r.train, hexes=r.hexes) for r in solution.routes]

        submit = game_pb2.SubmitCommandRequest(
            game_id=self.game_id, command=command_for(action, rng, best_routes)
        )
        self.games.SubmitCommand(
            submit, metadata=self.metadata(self.tokens[action.seat]), timeout=10
        )

    def end_game(self) -> None:
        request = lobby_pb2.EndGameRequest(table_id=self.game_id)
        self.lobby.EndGame(request, metadata=self.metadata(self.host), timeout=10)

    def state(self) -> game_pb2.GameState:
        request = game_pb2.GetStateRequest(game_id=self.game_id)
        return self.games.GetState(request, metadata=self.metadata(self.host), timeout=10)

    def log(self, last: int) -> Iterator[game_pb2.GameEvent]:
        """The game's stored events 1 to `last`."""
        request = game_pb2.StreamEventsRequest(game_id=self.game_id, from_version=1)
        stream = self.games.StreamEvents(request, metadata=self.metadata(self.host), timeout=30)
        for event in stream:
            yield event
            if event.version == last:
                stream.cancel()  # type: ignore[no-untyped-call]  # untyped in grpc-stubs
                return


def drop_stream_while_playing(page: Page, seats: Seats, rng: random.Random) -> None:
    """Cuts the page's watch, plays on while it is away, and waits until it is back."""
    before = int(page.get_attribute("#game", "data-connections") or 0)
    page.evaluate("window.shikokuDemo.dropStream()")
    for _ in range(3):
        seats.play_one(rng)
    connected_again = page.locator(f"#game:not([data-connections='{before}'])")
    connected_again.wait_for()
    expect(page.locator("#connection")).to_have_text("watching")


def create_table(page: Page, system: WebSystem) -> None:
    page.goto(system.page_url)
    assert page.input_value("#api-key") == system.api_key
    page.click("#create")
    page.wait_for_selector("#game[data-game-id]")


def test_the_page_shows_exactly_the_games_events_in_order_across_dropped_streams(
    web_system: WebSystem, page: Page
) -> None:
    create_table(page, web_system)
    seats = Seats(web_system, page)
    assert seats.game_id.startswith("t-")
    assert page.text_content("#game-id") == seats.game_id
    rng = random.Random(7)
    for n in range(1, ACTIONS + 1):
        seats.play_one(rng)
        if n in DROP_STREAM_AFTER:
            drop_stream_while_playing(page, seats, rng)
    seats.end_game()
    expect(page.locator("#connection")).to_have_text("game over", timeout=30_000)

    final = seats.state()
    shown = page.eval_on_selector_all(
        "#events li", "items => items.map(i => [i.dataset.version, i.dataset.type])"
    )
    stored = [[str(e.version), e.type] for e in seats.log(final.version)]
    assert len(stored) == final.version > ACTIONS + 3 * len(DROP_STREAM_AFTER)
    assert stored[-1][1] == "GameEnded"
    assert shown == stored
    connections = int(page.get_attribute("#game", "data-connections") or 0)
    assert connections == 1 + len(DROP_STREAM_AFTER)
    assert page.get_attribute("#game", "data-state-version") == str(final.version)
    document: dict[str, Any] = json_format.MessageToDict(final.state)
    assert page.text_content("#phase") == _as_js_text(document["phase"])
    assert page.text_content("#error") == ""


def _as_js_text(value: object) -> str:
    """How the page's `textContent = value` writes a JSON string or number."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def test_a_refused_request_is_shown_on_the_page_with_its_reason(
    web_system: WebSystem, page: Page
) -> None:
    page.goto(web_system.page_url)
    page.fill("#seats", "9")
    page.click("#create")
    page.wait_for_selector("#error[data-reason]")
    assert page.get_attribute("#error", "data-reason") == "INVALID_SEAT_COUNT"
    assert page.get_attribute("#error", "data-http-status") == "400"
    text = page.text_content("#error") or ""
    assert text.startswith("400 INVALID_SEAT_COUNT: ")
    assert "9" in text
    assert page.get_attribute("#game", "data-game-id") is None


def test_a_page_of_another_origin_may_call_the_api_with_credential_headers(
    web_system: WebSystem, page: Page
) -> None:
    port = web_system.web.rpartition(":")[2]
    # A document of another origin (the host name instead of the address, and no page policy):
    # Chromium asks the bridge with a CORS preflight before sending these headers.
    page.goto(f"http://localhost:{port}/healthz")
    answer = page.evaluate(
        """async ([url, key]) => {
            const response = await fetch(url, {
                method: "POST",
                headers: {"content-type": "application/json", "x-api-key": key,
                          "authorization": "Bearer nobody"},
                body: JSON.stringify({tableId: "t-none"}),
            });
            return {status: response.status, body: await response.json()};
        }""",
        [f"http://{web_system.web}/shikoku.v1.LobbyService/StartTable", web_system.api_key],
    )
    # Through the preflight to the gateway, which read the credential and refused it.
    assert answer["status"] == 401
    assert answer["body"]["details"][0]["reason"] == "INVALID_CREDENTIAL"
