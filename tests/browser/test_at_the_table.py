"""A whole table in the browser, as two people at two computers play it: each in a browser
context of their own, from the lobby (register, create with undo allowed, join, ready, the
table starts) to the board at their seats, where they chat both ways, play turns with the
page's controls, take one back, step through the history and back to live, draw a route by
hand (refused with the routes service's reason, then run), and a reload that comes back to the
seat. Between the parts the page plays, random bots move both seats through the gRPC API with
the seat tokens the browsers keep, to reach the position the next part needs."""

from __future__ import annotations

import random

import grpc
import pytest
from playwright.sync_api import Page, expect

from shikoku.v1 import game_pb2, routes_pb2
from shikoku_sdk.errors import ShikokuError
from tests.browser.conftest import Screenshots, WebSystem
from tests.browser.tables import Game, document
from tests.browser.test_chat import say, shown
from tests.browser.test_lobby_page import created_table, open_row, own_row, register, stored_seat
from tests.browser.test_routes_by_hand import checked

pytestmark = pytest.mark.e2e

BOT_ACTIONS_LIMIT = 1500  # bot moves to reach a corporation's routes step, in any random game


def settled(page: Page, version: int) -> None:
    """The page shows `version` live, with the legal actions of that version."""
    page.wait_for_selector(
        f"#board[data-viewing='live'][data-version='{version}'][data-actions-version='{version}']"
    )


def at_routes(game: Game) -> tuple[int, routes_pb2.RouteSolution] | None:
    """(the president's seat, the best routes) when the operating corporation is at its routes
    step with a route that earns; else None."""
    doc = document(game.state())
    round_ = doc.get("round") or {}
    if round_.get("type") != "operating_round" or round_.get("step") != "routes":
        return None
    corporation = next(c for c in doc["corporations"] if c["id"] == round_["operating"])
    best = game.best_routes(corporation["id"])
    return (int(corporation["president"]), best) if best.revenue > 0 else None


def refusal(game: Game, train: str, hexes: list[str]) -> ShikokuError:
    """What RoutesService.CheckRoutes says of one train's route, through the gRPC API."""
    request = routes_pb2.CheckRoutesRequest(
        game_id=game.game_id, routes=[game_pb2.RouteRun(train=train, hexes=hexes)]
    )
    with pytest.raises(grpc.RpcError) as raised:
        game.routes.CheckRoutes(request, metadata=game.reader(), timeout=10)
    return ShikokuError.from_rpc_error(raised.value)


def test_two_players_create_join_and_play_a_table_in_the_browser(
    web_system: WebSystem, player_pages: list[Page], screenshots: Screenshots
) -> None:
    alice, bob, _ = player_pages

    # The lobby: Alice creates a two-seat table where undo is allowed, Bob joins, both ready.
    alice.goto(web_system.page_url)
    register(alice, "Alice")
    alice.select_option("#create-form [name='seat_count']", "2")
    alice.check("#create-form [name='undo_allowed']")
    alice.click("[data-control='create']")
    table_id = created_table(alice, set())
    bob.goto(web_system.page_url)
    register(bob, "Bob")
    bob.click(f"{open_row(table_id)} [data-control='join']")
    bob.wait_for_selector(f"{own_row(table_id)}[data-seat='2']")
    alice.click(f"{own_row(table_id)} [data-control='ready'][data-ready='no']")
    alice.wait_for_selector(f"{own_row(table_id)} [data-control='ready'][data-ready='yes']")
    bob.click(f"{own_row(table_id)} [data-control='ready'][data-ready='no']")  # so it starts
    pages = {1: alice, 2: bob}
    for seat, page in pages.items():
        page.wait_for_selector(f"{own_row(table_id)}[data-status='started']")
        page.click(f"{own_row(table_id)} [data-control='open']")
        page.wait_for_selector(f"#board[data-seat='{seat}'][data-actions-version]")
    tokens = {seat: str(stored_seat(page, table_id)["token"]) for seat, page in pages.items()}
    game = Game(web_system, table_id, tokens)
    try:
        # Chat, both ways.
        say(alice, "Good luck, Bob!")
        shown(bob, 1, 1, "Good luck, Bob!")
        say(bob, "Thanks, Alice.")
        shown(alice, 2, 2, "Thanks, Alice.")

        # Turns played with the page's controls: whoever acts buys the topmost private.
        for _ in range(2):
            state = game.state()
            (acting,) = state.acting_seats
            settled(pages[acting], state.version)
            pages[acting].locator("#actions [data-control='buy-private']").first.click()
            pages[acting].wait_for_selector(
                f"#events li[data-version='{state.version + 1}'][data-type='PrivateBought']"
            )
        # The last of them taken back with Undo: the game is as it was before it.
        bought = game.state()
        before = game.games.GetState(
            game_pb2.GetStateRequest(game_id=table_id, version=bought.version - 1),
            metadata=game.reader(),
            timeout=10,
        )
        undoer = pages[acting]
        undoer.click("#undo [data-control='undo']")
        undoer.wait_for_selector(
            f"#events li[data-version='{bought.version + 1}'][data-type='Undone']"
        )
        assert document(game.state()) == document(before)

        # The history: back through the game and live again, on the other player's page.
        viewer = pages[3 - acting]
        latest = game.state().version
        settled(viewer, latest)
        viewer.click("[data-control='history-first']")
        viewer.wait_for_selector("#board[data-viewing='history']")
        first = int(viewer.get_attribute("#board", "data-version") or 0)
        assert first < latest
        viewer.click("[data-control='history-forward']")
        viewer.wait_for_selector(f"#board[data-viewing='history']:not([data-version='{first}'])")
        viewer.click("[data-control='history-live']")
        settled(viewer, latest)

        # Bots move both seats until a corporation is to run its trains.
        rng = random.Random(20261202)
        found = None
        for _ in range(BOT_ACTIONS_LIMIT):
            found = at_routes(game)
            if found is not None or not game.actions():
                break
            game.bot_move(rng, set(tokens))
        assert found is not None, "no corporation came to run its trains"
        president, best = found
        page = pages[president]
        state = game.state()
        settled(page, state.version)

        # A route drawn by hand: the best one, clicked hex by hex, priced as the optimum says.
        page.click("#actions [data-control='draw-routes']")
        route = max(best.routes, key=lambda r: r.revenue)
        page.locator(
            f"#actions [data-control='route-train'][data-train='{route.train}']"
        ).first.click()
        for hex_ in route.hexes:
            page.click(f"#map .hex[data-hex='{hex_}']")
        assert int(checked(page)["revenue"]) == route.revenue
        # One hex more, back to the second-last: refused with the routes service's reason.
        page.click(f"#map .hex[data-hex='{route.hexes[-2]}']")
        refused = checked(page)
        expected = refusal(game, route.train, [*route.hexes, route.hexes[-2]])
        assert refused["reason"] == expected.reason and expected.reason.startswith("ROUTE_")
        expect(page.locator("#route-check")).to_contain_text(expected.reason)
        # Taken back, and run.
        page.click(f"#map .hex[data-hex='{route.hexes[-2]}']")
        assert int(checked(page)["revenue"]) == route.revenue
        page.click("#actions [data-control='run-drawn']")
        page.wait_for_selector(
            f"#events li[data-version='{state.version + 1}'][data-type='TrainsRan']"
        )

        # A reload comes back to the seat, the chat with it.
        bob.reload()
        bob.wait_for_selector("#board[data-seat='2'][data-actions-version]")
        assert "token" not in bob.url
        shown(bob, 1, 1, "Good luck, Bob!")
    finally:
        game.channel.close()
