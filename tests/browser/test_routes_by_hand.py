"""Playing a seat as on a board, in a real headless Chromium against the real system: tiles
chosen as pictures with the supply's counts, a station token placed by clicking its city, and
routes drawn by hand, each change priced by RoutesService.CheckRoutes (or refused with the
reason it gives) and run with SubmitCommand.

Random bots (shikoku_sdk.random_player) play every seat of a game through the gateway until
the position a test needs, and the page then plays that seat through its own controls.
`SHIKOKU_SCREENSHOTS=docs/images` refreshes docs/images/board-tile-picker.png and
board-route-by-hand.png."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

import grpc
import pytest
from google.protobuf import json_format
from playwright.sync_api import Page

from shikoku.v1 import game_pb2, routes_pb2, title_pb2
from shikoku_sdk.errors import ShikokuError
from tests.browser.conftest import Screenshots, WebSystem
from tests.browser.tables import Table, document, open_page, president_about_to_lay, settled

pytestmark = pytest.mark.e2e

BOT_ACTIONS_LIMIT = 1500  # to reach a position a test waits for, in a random game
GAMES_LIMIT = 5  # random games played to reach it
Found = TypeVar("Found")


@pytest.fixture
def rng() -> random.Random:
    return random.Random(20261202)


@pytest.fixture
def tables() -> Iterator[list[Table]]:
    """The tables a test started; their channels are closed after it."""
    started: list[Table] = []
    yield started
    for table in started:
        table.channel.close()


def title_of(table: Table) -> title_pb2.Title:
    answer: title_pb2.Title = table.titles.GetTitle(
        title_pb2.GetTitleRequest(), metadata=table.metadata(), timeout=10
    )
    return answer


def reach(
    system: WebSystem,
    tables: list[Table],
    rng: random.Random,
    found: Callable[[Table], Found | None],
) -> tuple[Table, Found]:
    """A game where `found` finds the position it describes: bots play every seat of a new
    table until it does; a random game may end first (a bankruptcy), and then another starts."""
    for _ in range(GAMES_LIMIT):
        table = Table(system)
        tables.append(table)
        for _ in range(BOT_ACTIONS_LIMIT):
            position = found(table)
            if position:
                return table, position
            if not table.actions():
                break  # the game is over
            table.bot_move(rng, set(table.tokens))
    pytest.fail(f"the position was not reached in {GAMES_LIMIT} games")


def president_at_routes(table: Table) -> tuple[int, routes_pb2.RouteSolution] | None:
    """(the seat, the best routes) when the operating corporation's president is to run its
    trains and their best routes include one of three hexes or more; else None."""
    doc = document(table.state())
    round_ = doc.get("round") or {}
    if round_.get("type") != "operating_round" or round_.get("step") != "routes":
        return None
    corporation = next(c for c in doc["corporations"] if c["id"] == round_["operating"])
    seat = int(corporation["president"])
    if not any(a.seat == seat and a.WhichOneof("action") == "run_routes" for a in table.actions()):
        return None
    best = table.best_routes(corporation["id"])
    # A route through a hex between its stops, for clicks that are not all on stops.
    return (seat, best) if any(len(r.hexes) >= 3 for r in best.routes) else None


def token_placer(table: Table) -> tuple[int, list[game_pb2.PlaceTokenOption]] | None:
    """(the seat, its token options) when a seat may place a station token; else None."""
    by_seat: dict[int, list[game_pb2.PlaceTokenOption]] = {}
    for action in table.actions():
        if action.WhichOneof("action") == "place_token":
            by_seat.setdefault(action.seat, []).append(action.place_token)
    return next(iter(by_seat.items()), None)


def tiles_left(title: title_pb2.Title, state: game_pb2.GameState) -> dict[str, int]:
    """The title's count of each tile (with the beginner game's extra), less those laid."""
    doc = document(state)
    beginner = bool(doc.get("beginner_game"))
    left = {t.name: t.count + (t.beginner_extra if beginner else 0) for t in title.tiles}
    for laid in doc["board"]["tiles"]:
        left[laid["tile"]] -= 1
    return left


def next_event(table: Table, version: int) -> tuple[str, dict[str, Any]]:
    """The type and payload of the event at `version`."""
    request = game_pb2.StreamEventsRequest(game_id=table.game_id, from_version=version)
    stream = table.games.StreamEvents(request, metadata=table.reader(), timeout=30)
    event = next(iter(stream))
    stream.cancel()
    assert event.version == version
    return event.type, json_format.MessageToDict(event.payload)


def applied(page: Page, table: Table, version: int) -> game_pb2.GameState:
    """The state once the page's command after `version` has been applied."""
    for _ in range(100):
        state = table.state()
        if state.version > version:
            return state
        page.wait_for_timeout(100)
    raise AssertionError("the page's command was not applied")


# --- the tile picker


CHOICES = """() => [...document.querySelectorAll('#actions .tile-choice')].map((c) => ({
  tile: c.dataset.tile, company: c.dataset.company, left: Number(c.dataset.left),
  tracks: c.querySelectorAll('svg.tile-picture path.track').length}))"""
SUPPLY = """() => Object.fromEntries([...document.querySelectorAll(
  '#tile-supply .tile-supply-item')].map((i) => [i.dataset.tile, Number(i.dataset.left)]))"""


def supply_shown(page: Page, expected: dict[str, int], within: float = 5) -> dict[str, int]:
    """The supply the page shows, once it is `expected` or `within` seconds have passed: the
    board and the supply list are drawn one after the other."""
    deadline = time.monotonic() + within
    while (shown := page.evaluate(SUPPLY)) != expected and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    return cast(dict[str, int], shown)


def test_the_tile_picker_shows_the_legal_tiles_as_pictures_with_the_supply_left(
    web_system: WebSystem,
    page: Page,
    tables: list[Table],
    rng: random.Random,
    screenshots: Screenshots,
) -> None:
    table, seat = reach(web_system, tables, rng, lambda t: president_about_to_lay(t, t.state()))
    title = title_of(table)
    state = table.state()
    lays = [a.lay_tile for a in table.actions() if a.seat == seat and a.HasField("lay_tile")]
    # The hex offering the most tiles, where the picker has most to show.
    hex_ = max(
        {lay.hex for lay in lays if not lay.company},
        key=lambda h: (len({lay.tile for lay in lays if lay.hex == h}), h),
    )
    open_page(page, web_system, table.game_id, seat, table.tokens[seat])
    settled(page, state.version)
    left = tiles_left(title, state)
    assert page.evaluate(SUPPLY) == left

    page.click(f"#map .target[data-hex='{hex_}']")
    page.wait_for_selector("#actions .tile-choice")
    drawings = {t.name: t.drawing for t in title.tiles}
    shown = page.evaluate(CHOICES)
    offered = {(lay.tile, lay.company) for lay in lays if lay.hex == hex_}
    assert {(c["tile"], c["company"]) for c in shown} == offered
    assert len(shown) == len(offered)
    for choice in shown:
        assert choice["left"] == left[choice["tile"]], choice
        assert choice["tracks"] == len(drawings[choice["tile"]].paths), choice

    # Choose a tile, turn it on the map (clicking the hex) and with the buttons, lay it.
    wanted = rng.choice([lay for lay in lays if lay.hex == hex_ and not lay.company])
    rotations = [lay.rotation for lay in lays if lay.hex == hex_ and lay.tile == wanted.tile]
    page.click(f"#actions .tile-choice[data-tile='{wanted.tile}'][data-company='']")
    preview = page.locator(f"#map .preview[data-hex='{hex_}']")
    assert preview.get_attribute("data-tile") == wanted.tile
    assert preview.get_attribute("data-rotation") == str(rotations[0])
    if len(rotations) > 1:
        page.click(f"#map .target[data-hex='{hex_}']")
        assert preview.get_attribute("data-rotation") == str(rotations[1])
        page.click("#actions [data-control='rotate-back']")
        assert preview.get_attribute("data-rotation") == str(rotations[0])
    for _ in range(len(rotations)):
        if preview.get_attribute("data-rotation") == str(wanted.rotation):
            break
        page.click(f"#map .target[data-hex='{hex_}']")
    assert preview.get_attribute("data-rotation") == str(wanted.rotation)
    chosen = page.locator("#actions .tile-choice.chosen")
    assert chosen.get_attribute("data-tile") == wanted.tile
    screenshots.take(page, "tile-picker")
    page.click("#actions [data-control='lay']")

    after = applied(page, table, state.version)
    assert next_event(table, state.version + 1)[0] == "TileLaid"
    laid = {t["hex"]: (t["tile"], int(t["rotation"])) for t in document(after)["board"]["tiles"]}
    assert laid[hex_] == (wanted.tile, wanted.rotation)
    page.wait_for_selector(
        f"#map .hex[data-hex='{hex_}'][data-tile='{wanted.tile}']"
        f"[data-rotation='{wanted.rotation}']"
    )
    page.wait_for_selector(f"#board[data-version='{after.version}']")
    assert supply_shown(page, tiles_left(title, after)) == tiles_left(title, after)
    assert tiles_left(title, after)[wanted.tile] == left[wanted.tile] - 1


# --- station tokens


def test_a_station_token_is_placed_by_clicking_its_city(
    web_system: WebSystem, page: Page, tables: list[Table], rng: random.Random
) -> None:
    table, (seat, options) = reach(web_system, tables, rng, token_placer)
    state = table.state()
    open_page(page, web_system, table.game_id, seat, table.tokens[seat])
    settled(page, state.version)
    targets = page.eval_on_selector_all(
        "#map .token-target", "ts => ts.map((t) => [t.dataset.hex, Number(t.dataset.city)])"
    )
    assert sorted(map(tuple, targets)) == sorted((o.hex, o.city) for o in options)
    option = rng.choice(options)
    page.click(f"#map .token-target[data-hex='{option.hex}'][data-city='{option.city}']")

    after = applied(page, table, state.version)
    kind, payload = next_event(table, state.version + 1)
    assert kind == "TokenPlaced"
    assert (payload["hex"], int(payload.get("city", 0))) == (option.hex, option.city)
    holders = [
        holder
        for t in document(after)["board"]["tokens"]
        if t["hex"] == option.hex and int(t.get("city", 0)) == option.city
        for holder in t["spots"]
    ]
    assert payload["corporation"] in holders
    page.wait_for_selector(
        f"#map .token[data-hex='{option.hex}'][data-city='{option.city}']"
        f"[data-corporation='{payload['corporation']}']"
    )


# --- routes by hand


TRAINS = """() => [...document.querySelectorAll("#actions [data-control='route-train']")]
  .map((b) => [b.dataset.train, b.dataset.hexes, b.dataset.revenue ?? null])"""


def drawn_key(page: Page) -> str:
    """The routes the page has drawn, in the form #route-check's data-routes names them."""
    trains = page.evaluate(TRAINS)
    return ";".join(f"{train}:{hexes}" for train, hexes, _ in trains if hexes)


def checked(page: Page) -> dict[str, str]:
    """#route-check's data-* once the page's drawing has been checked."""
    key = drawn_key(page).replace('"', '\\"')
    check = page.locator(f"#route-check[data-state='checked'][data-routes=\"{key}\"]")
    check.wait_for()
    data: dict[str, str] = check.evaluate("c => ({...c.dataset})")
    return data


def check_routes(table: Table, routes: list[tuple[str, list[str]]]) -> ShikokuError:
    """The refusal CheckRoutes gives `routes` (train, hexes) through the gRPC API."""
    request = routes_pb2.CheckRoutesRequest(
        game_id=table.game_id,
        routes=[game_pb2.RouteRun(train=train, hexes=hexes) for train, hexes in routes],
    )
    with pytest.raises(grpc.RpcError) as raised:
        table.routes.CheckRoutes(request, metadata=table.reader(), timeout=10)
    return ShikokuError.from_rpc_error(raised.value)


def test_a_route_drawn_by_hand_is_priced_refused_with_its_reason_and_run(
    web_system: WebSystem,
    page: Page,
    tables: list[Table],
    rng: random.Random,
    screenshots: Screenshots,
) -> None:
    table, (seat, best) = reach(web_system, tables, rng, president_at_routes)
    state = table.state()
    open_page(page, web_system, table.game_id, seat, table.tokens[seat])
    settled(page, state.version)
    page.click("#actions [data-control='draw-routes']")
    assert checked(page)["revenue"] == "0"

    # The best routes, drawn by clicking their hexes on the map one train after another.
    used: dict[str, int] = {}
    for route in best.routes:
        n = used.get(route.train, 0)
        used[route.train] = n + 1
        page.locator(f"#actions [data-control='route-train'][data-train='{route.train}']").nth(
            n
        ).click()
        for hex_ in route.hexes:
            page.click(f"#map .hex[data-hex='{hex_}']")
    shown = checked(page)
    assert int(shown["revenue"]) == best.revenue
    assert "reason" not in shown
    trains = page.evaluate(TRAINS)
    drawn = sorted((t, h, int(r)) for t, h, r in trains if h)
    assert drawn == sorted((r.train, " ".join(r.hexes), r.revenue) for r in best.routes)
    lines = page.eval_on_selector_all(
        "#map .route", "ls => ls.map((l) => [l.dataset.train, l.dataset.hexes])"
    )
    assert sorted(map(tuple, lines)) == sorted((r.train, " ".join(r.hexes)) for r in best.routes)

    # The first route back to its second-last hex: refused, with CheckRoutes' reason and place.
    first = best.routes[0]
    slot = page.locator(
        f"#actions [data-control='route-train'][data-train='{first.train}']"
        f"[data-hexes='{' '.join(first.hexes)}']"
    )
    slot.first.click()
    page.click(f"#map .hex[data-hex='{first.hexes[-2]}']")
    refused = checked(page)
    routes = [(t, h.split()) for t, h, _ in page.evaluate(TRAINS) if h]
    assert [first.train, [*first.hexes, first.hexes[-2]]] in [list(r) for r in routes]
    expected = check_routes(table, routes)
    assert expected.reason.startswith("ROUTE_"), expected
    assert refused["reason"] == expected.reason
    assert (refused["train"], refused["hex"], refused["node"]) == (
        expected.metadata.get("train", ""),
        expected.metadata.get("hex", ""),
        expected.metadata.get("node", ""),
    )
    assert "revenue" not in refused
    words = page.text_content("#route-check") or ""
    assert expected.reason in words and f"(train {expected.metadata['train']})" in words
    broken = page.eval_on_selector_all("#map .route.broken", "ls => ls.map((l) => l.dataset.train)")
    assert broken and set(broken) == {expected.metadata["train"]}
    # Run as it is, it is refused by SubmitCommand with that reason, and nothing is written.
    page.click("#actions [data-control='run-drawn']")
    page.wait_for_selector(f"#error[data-reason='{expected.reason}']")
    assert table.state().version == state.version

    # Clicking the last hex again takes it back: the route earns again; run it.
    page.click(f"#map .hex[data-hex='{first.hexes[-2]}']")
    assert int(checked(page)["revenue"]) == best.revenue
    screenshots.take(page, "route-by-hand")
    page.click("#actions [data-control='run-drawn']")
    applied(page, table, state.version)
    kind, payload = next_event(table, state.version + 1)
    assert kind == "TrainsRan"
    assert int(payload["revenue"]) == best.revenue
    ran = sorted((r["train"], " ".join(r["hexes"])) for r in payload["routes"])
    assert ran == sorted((r.train, " ".join(r.hexes)) for r in best.routes)
