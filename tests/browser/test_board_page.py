"""The board page (gateway/web/static/) in a real headless Chromium, against the real system
through the web entrypoint's Connect API.

Random bots (shikoku_sdk.random_player) play a game through the gateway until a corporation's
president is about to lay track; the page opened on that game must draw exactly what GetState
says (every tile at its hex and rotation, every station token, every market marker, read from
the data attributes of the SVG and checked against the drawn geometry). Then the page plays
that seat for several turns through its own controls (a tile chosen and turned on the map, the
best routes drawn and run, dividends, trains, passes) while the bots play the other seats, and
the view follows the event stream, resuming after a dropped connection. Screenshots go to
$SHIKOKU_SCREENSHOTS when it is set (docs/browser.md shows them; `SHIKOKU_SCREENSHOTS=docs/images`
refreshes them), else to the test's temporary directory."""

from __future__ import annotations

import math
import random

import pytest
from playwright.sync_api import Page, expect

from shikoku.v1 import (
    game_pb2,
    lobby_pb2,
    title_pb2,
)
from shikoku_sdk.random_player import choose
from tests.browser.conftest import Screenshots, WebSystem
from tests.browser.tables import (
    Table,
    document,
    open_page,
    president_about_to_lay,
    settled,
)

pytestmark = pytest.mark.e2e

BOT_ACTIONS_LIMIT = 1500  # to reach a president's track step with trains, in any random game
PAGE_ACTIONS = 10  # the page plays at least this many of its seat's actions
LOOP_LIMIT = 1200  # page and bot actions together in the second part
# What the page must have played by the end: an operating turn and a stock round turn.
WANTED = {"lay_tile", "run_routes", "pay_dividends", "buy_share"}


# --- the SVG against the state


def rotated_ends(drawing: title_pb2.TrackDrawing, rotation: int) -> set[frozenset[str]]:
    def end(e: title_pb2.TrackEnd) -> str:
        if e.WhichOneof("end") == "edge":
            return str((e.edge + rotation) % 6)
        return f"stop{e.stop}"

    return {frozenset((end(p.a), end(p.b))) for p in drawing.paths}


SVG_BOARD = """() => {
  const numbers = (element, ...names) => names.map((name) => Number(element.getAttribute(name)));
  const centreOf = (polygon) => {
    const points = polygon.getAttribute("points").trim().split(/\\s+/)
      .map((p) => p.split(",").map(Number));
    const x = points.reduce((s, p) => s + p[0], 0) / points.length;
    const y = points.reduce((s, p) => s + p[1], 0) / points.length;
    return {x, y, size: Math.hypot(points[0][0] - x, points[0][1] - y)};
  };
  const hexes = [...document.querySelectorAll("#map .layer-hexes .hex")].map((hex) => {
    const centre = centreOf(hex.querySelector(".hex-shape"));
    const tracks = [...hex.querySelectorAll("path.track")].map((path) => {
      const start = path.getPointAtLength(0);
      const end = path.getPointAtLength(path.getTotalLength());
      return {from: path.dataset.from, to: path.dataset.to,
              start: [start.x, start.y], end: [end.x, end.y]};
    });
    return {hex: hex.dataset.hex, tile: hex.dataset.tile, rotation: hex.dataset.rotation,
            centre, tracks};
  });
  const tokens = [...document.querySelectorAll("#map .token")].map((t) => {
    const {hex, city, spot, corporation} = t.dataset;
    const drawnSpot = document.querySelector(
      `#map .hex[data-hex='${hex}'] .city[data-city='${city}'] .spot[data-spot='${spot}']`);
    return {hex, city: Number(city), spot: Number(spot), corporation,
            at: numbers(t.querySelector("circle"), "cx", "cy"),
            spotAt: drawnSpot ? numbers(drawnSpot, "cx", "cy") : null};
  });
  const markers = [...document.querySelectorAll("#market-grid .market-marker")].map((m) => {
    const {corporation, row, column} = m.dataset;
    const space = document.querySelector(
      `#market-grid .space[data-row='${row}'][data-column='${column}']`);
    const rect = space && space.querySelector("rect");
    return {corporation, row: Number(row), column: Number(column),
            price: space ? Number(space.dataset.price) : 0,
            at: numbers(m.querySelector("circle"), "cx", "cy"),
            box: rect ? numbers(rect, "x", "y", "width", "height") : null};
  });
  return {hexes, tokens, markers};
}"""


def edge_point(centre: dict[str, float], edge: int) -> tuple[float, float]:
    """The middle of a flat-topped hex's edge, edges clockwise from 0 = south on the screen."""
    angle = math.radians(90 + 60 * edge)
    apothem = math.sqrt(3) / 2 * centre["size"]
    return centre["x"] + apothem * math.cos(angle), centre["y"] + apothem * math.sin(angle)


def check_board(page: Page, state: game_pb2.GameState, title: title_pb2.Title) -> None:
    doc = document(state)
    shown = page.evaluate(SVG_BOARD)
    tiles = {t.name: t for t in title.tiles}

    # Every hex of the map once; a laid tile exactly where the state has it, turned its way.
    assert sorted(h["hex"] for h in shown["hexes"]) == sorted(h.coordinate for h in title.hexes)
    laid = {t["hex"]: (t["tile"], int(t["rotation"])) for t in doc["board"]["tiles"]}
    drawn = {h["hex"]: (h["tile"], int(h["rotation"])) for h in shown["hexes"] if h["tile"]}
    assert drawn == laid
    assert laid, "the game has tiles on the board by now"
    printed = {h.coordinate: h.printed for h in title.hexes}
    for hex_ in shown["hexes"]:
        ends = {frozenset((t["from"], t["to"])) for t in hex_["tracks"]}
        if not hex_["tile"]:
            # What is printed on the hex (gray track, off-boards, the preprinted cities).
            assert ends == rotated_ends(printed[hex_["hex"]], 0), hex_["hex"]
            continue
        tile, rotation = laid[hex_["hex"]]
        # The track drawn joins the tile's ends turned by its rotation...
        assert ends == rotated_ends(tiles[tile].drawing, rotation), hex_["hex"]
        # ... and each piece really starts and ends at those edges of that hex on the screen.
        for track in hex_["tracks"]:
            for end, point in ((track["from"], track["start"]), (track["to"], track["end"])):
                if end.isdigit():
                    x, y = edge_point(hex_["centre"], int(end))
                    assert math.dist((x, y), point) < 0.6, (hex_["hex"], end, point)

    # Every station token in its city's spot, of its corporation.
    expected_tokens = {
        (t["hex"], int(t.get("city", 0)), spot, holder)
        for t in doc["board"]["tokens"]
        for spot, holder in enumerate(t["spots"])
        if holder
    }
    drawn_tokens = {(t["hex"], t["city"], t["spot"], t["corporation"]) for t in shown["tokens"]}
    assert drawn_tokens == expected_tokens
    assert expected_tokens, "the game has station tokens by now"
    for token in shown["tokens"]:
        assert token["spotAt"] is not None and math.dist(token["at"], token["spotAt"]) < 0.6

    # Every started corporation's marker on its space of the market, at that space's price.
    expected_markers = {
        c["id"]: (int(c["market_position"][0]), int(c["market_position"][1]), int(c["share_price"]))
        for c in doc["corporations"]
        if c.get("market_position")
    }
    drawn_markers = {
        m["corporation"]: (m["row"], m["column"], m["price"]) for m in shown["markers"]
    }
    assert drawn_markers == expected_markers
    for marker in shown["markers"]:
        x, y, width, height = marker["box"]
        assert x <= marker["at"][0] <= x + width and y <= marker["at"][1] <= y + height

    # The tables: each player's cash and each corporation's treasury.
    for player in doc["players"]:
        cash = page.text_content(f"#players tr[data-seat='{int(player['seat'])}'] .cash")
        assert cash == f"¥{int(player['cash'])}"
    for corporation in doc["corporations"]:
        treasury = page.text_content(
            f"#corporations tr[data-corporation='{corporation['id']}'] .treasury"
        )
        assert treasury == f"¥{int(corporation['cash'])}"
    acting = page.get_attribute("#acting", "data-seats") or ""
    assert acting.split() == [str(s) for s in state.acting_seats]


# --- playing through the page's controls


def preferred(actions: list[game_pb2.LegalAction], rng: random.Random) -> game_pb2.LegalAction:
    """What the test plays for the page's seat: track, tokens, routes and shares whenever
    offered (the controls worth showing), a train from the depot, else as a bot would, leaving
    out the privates' deals a bot would make over and over."""
    by_kind: dict[str, list[game_pb2.LegalAction]] = {}
    for action in actions:
        by_kind.setdefault(str(action.WhichOneof("action")), []).append(action)
    lays = [a for a in by_kind.get("lay_tile", []) if not a.lay_tile.company]
    if lays:
        return rng.choice(lays)
    for kind in ("place_token", "run_routes", "pay_dividends", "buy_share"):
        if kind in by_kind:
            return rng.choice(by_kind[kind])
    depot = [a for a in by_kind.get("buy_train", []) if a.buy_train.source == "depot"]
    if depot:
        return depot[0]
    deals = ("corporation_buy_private", "exchange_private")
    return choose([a for a in actions if a.WhichOneof("action") not in deals] or actions, rng)


def play_through_page(
    page: Page, table: Table, action: game_pb2.LegalAction, shots: Screenshots
) -> str:
    """Makes the page submit `action` with its own controls; returns the event type expected."""
    kind = action.WhichOneof("action")
    if kind == "lay_tile":
        lay = action.lay_tile
        page.click(f"#map .target[data-hex='{lay.hex}']")
        page.click(
            f"#actions [data-control='tile'][data-tile='{lay.tile}'][data-company='{lay.company}']"
        )
        lay_button = page.locator("#actions [data-control='lay']")
        for _ in range(6):
            if lay_button.get_attribute("data-rotation") == str(lay.rotation):
                break
            page.click("#actions [data-control='rotate']")
        assert lay_button.get_attribute("data-rotation") == str(lay.rotation)
        preview = page.locator(f"#map .preview[data-hex='{lay.hex}']")
        assert preview.get_attribute("data-tile") == lay.tile
        assert preview.get_attribute("data-rotation") == str(lay.rotation)
        shots.take(page, "lay-tile")
        lay_button.click()
        return "TileLaid"
    if kind == "place_token":
        token = action.place_token
        page.click(f"#actions [data-control='token'][data-hex='{token.hex}']")
        return "TokenPlaced"
    if kind == "run_routes":
        best = table.best_routes(action.run_routes.corporation)
        page.click("#actions [data-control='optimize']")
        run = page.locator("#actions [data-control='run-routes']")
        run.wait_for()
        assert int(run.get_attribute("data-revenue") or 0) == best.revenue
        drawn = page.eval_on_selector_all(
            "#map .route", "lines => lines.map(l => [l.dataset.train, l.dataset.hexes])"
        )
        assert sorted(drawn) == sorted([r.train, " ".join(r.hexes)] for r in best.routes)
        if best.routes:
            shots.take(page, "routes")
        run.click()
        return "TrainsRan"
    if kind == "pay_dividends":
        page.click("#actions [data-control='payout']")
        return "DividendsPaid" if action.pay_dividends.revenue else ""
    if kind == "buy_train":
        offer = action.buy_train
        page.click(
            f"#actions [data-control='buy-train'][data-train='{offer.train}']"
            f"[data-source='{offer.source}'][data-exchange='{offer.exchange}']"
        )
        return "TrainBought"
    if kind == "pass_turn":
        page.click("#actions [data-control='pass']")
        return ""
    if kind == "declare_bankruptcy":
        page.click("#actions [data-control='bankrupt']")
        return "PlayerBankrupt"
    simple = {
        "buy_private": ("buy-private", "company", "PrivateBought"),
        "buy_share": ("buy-share", "corporation", "ShareBought"),
        "start_corporation": ("start", "corporation", "CorporationStarted"),
        "sell_shares": ("sell", "corporation", "SharesSold"),
        "place_bid": ("bid", "company", "BidPlaced"),
        "corporation_buy_private": (
            "corporation-buy-private",
            "company",
            "PrivateSoldToCorporation",
        ),
        "discard_train": ("discard", "corporation", "TrainDiscarded"),
        "exchange_private": ("exchange", "company", "PrivateExchanged"),
    }
    if kind in simple:
        control, key, event = simple[kind]
        option = getattr(action, str(kind))
        selector = f"#actions [data-control='{control}'][data-{key}='{getattr(option, key)}']"
        if kind == "buy_share":
            selector += f"[data-source='{game_pb2.ShareSource.Name(option.source)}']"
        page.locator(selector).first.click()
        return event
    raise AssertionError(f"the test does not play {kind} through the page")


def test_the_page_draws_the_game_as_the_state_says_and_plays_a_seat_with_its_controls(
    web_system: WebSystem, page: Page, screenshots: Screenshots
) -> None:
    table = Table(web_system)
    title = table.titles.GetTitle(title_pb2.GetTitleRequest(), metadata=table.metadata())
    rng = random.Random(1889)
    everyone = set(table.tokens)
    seat = 0
    for _ in range(BOT_ACTIONS_LIMIT):
        seat = president_about_to_lay(table, table.state())
        if seat:
            break
        table.bot_move(rng, everyone)
    assert seat, f"no president reached a track step within {BOT_ACTIONS_LIMIT} bot actions"

    # A spectator sees the board exactly as the state has it.
    state = table.state()
    open_page(page, web_system, table.game_id)
    page.wait_for_selector(f"#board[data-version='{state.version}']", timeout=30_000)
    expect(page.locator("#role")).to_have_text("spectator")
    check_board(page, state, title)
    assert page.locator("#actions [data-control]").count() == 0
    screenshots.take(page, "spectator")

    # The president's page offers its legal actions and plays them.
    open_page(page, web_system, table.game_id, seat, table.tokens[seat])
    bots = everyone - {seat}
    played: list[str] = []
    dropped = False
    for _ in range(LOOP_LIMIT):
        state = table.state()
        if not state.acting_seats:
            break
        mine = [a for a in table.actions() if a.seat == seat]
        if seat not in state.acting_seats or not mine:
            if not dropped and len(played) >= 3:
                # The page loses its stream while the others play; it resumes where it was.
                page.wait_for_selector(f"#board[data-version='{state.version}']")
                before = page.get_attribute("#board", "data-connections")
                page.evaluate("window.shikokuBoard.dropStream()")
                table.bot_move(rng, bots)
                if set(table.state().acting_seats) & bots:
                    table.bot_move(rng, bots)
                page.wait_for_selector(f"#board:not([data-connections='{before}'])")
                dropped = True
                continue
            if any(a.seat in bots for a in table.actions()):
                table.bot_move(rng, bots)
            continue
        settled(page, state.version)
        listed = page.eval_on_selector_all("#actions [data-control]", "c => c.length")
        assert listed > 0, "the seat may act, so the page offers controls"
        action = preferred(mine, rng)
        expected = play_through_page(page, table, action, screenshots)
        after = table.state()
        for _ in range(50):
            if after.version > state.version:
                break
            page.wait_for_timeout(100)
            after = table.state()
        assert after.version > state.version, (
            f"the page's {action.WhichOneof('action')} was not applied"
        )
        if expected:
            types = [t for v, t in table.log(after.version) if v > state.version]
            assert types[0] == expected, types
        played.append(str(action.WhichOneof("action")))
        if len(played) >= PAGE_ACTIONS and set(played) >= WANTED and dropped:
            break
    assert len(played) >= PAGE_ACTIONS, played
    assert set(played) >= WANTED, played
    assert dropped

    # The view followed the stream: the board as the state says, every event once, in order.
    state = table.state()
    page.wait_for_selector(f"#board[data-version='{state.version}']")
    check_board(page, state, title)
    shown = page.eval_on_selector_all(
        "#events li", "items => items.map(i => [Number(i.dataset.version), i.dataset.type])"
    )
    assert [tuple(item) for item in shown] == table.log(state.version)
    assert int(page.get_attribute("#board", "data-connections") or 0) >= 2
    assert page.text_content("#error") == ""
    screenshots.take(page, "seat")


def test_a_table_closed_to_spectators_shows_the_refusal_and_its_reason(
    web_system: WebSystem, page: Page
) -> None:
    table = Table(web_system, lobby_pb2.TableOptions(closed_to_spectators=True))
    open_page(page, web_system, table.game_id)
    page.wait_for_selector("#error[data-reason]")
    assert page.get_attribute("#error", "data-reason") == "CLOSED_TO_SPECTATORS"
    assert page.get_attribute("#error", "data-code") == "permission_denied"
    assert page.get_attribute("#board", "data-version") is None
    # Its seat sees it.
    open_page(page, web_system, table.game_id, 1, table.tokens[1])
    page.wait_for_selector("#board[data-version]")
    assert page.text_content("#error") == ""
