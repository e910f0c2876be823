"""How the board page draws what it shows, in a real headless Chromium against the real system:
the unlimited Diesels in the depot, a finished game's status, off-board values clear of their
place names, the corporations table within the side column at 1400 px, several market markers
on one space, and the market's legend. Each test reads the drawn page (text, boxes measured by
the browser) and would fail on the drawing it guards against."""

from __future__ import annotations

import random
from typing import Any

import pytest
from playwright.sync_api import Page

from shikoku.v1 import game_pb2, lobby_pb2, title_pb2
from tests.browser.conftest import WebSystem
from tests.browser.tables import Table, document, open_page

pytestmark = pytest.mark.e2e

MID_GAME_ACTIONS_LIMIT = 1500
MID_GAME_TRAINS = 4  # trains bought by the corporations: a game well into its operating rounds
SAME_SPACE = 4  # corporations started at one par: two rows of markers on one space
PAR = 100
TIMES = "\u00d7"  # the multiplication sign the depot writes before a count


def spectator_page(page: Page, system: WebSystem, table: Table) -> game_pb2.GameState:
    state = table.state()
    open_page(page, system, table.game_id)
    page.wait_for_selector(f"#board[data-version='{state.version}']", timeout=30_000)
    return state


def test_the_depot_shows_the_unlimited_diesels_as_such(web_system: WebSystem, page: Page) -> None:
    table = Table(web_system)
    state = spectator_page(page, web_system, table)
    assert document(state)["depot"]["D"] == -1, "the state sends the unlimited Diesels as -1"
    depot = page.text_content("#depot") or ""
    assert f"D {TIMES}∞" in depot
    assert "-1" not in depot
    assert f"2 {TIMES}6" in depot


def test_a_finished_game_shows_game_over_its_reason_and_ranking_not_a_round(
    web_system: WebSystem, page: Page
) -> None:
    table = Table(web_system)
    table.lobby.EndGame(
        lobby_pb2.EndGameRequest(table_id=table.game_id),
        metadata=table.metadata(table.host_token),
        timeout=10,
    )
    state = table.state()
    result = document(state)["result"]
    assert result["reason"] == "ended"
    spectator_page(page, web_system, table)
    status = page.text_content("#status") or ""
    assert "game over" in status
    assert "ended by the players' agreement" in status
    assert page.locator("#round").count() == 0
    assert "private auction" not in status
    ranked = page.eval_on_selector_all(
        "#ranking li",
        "items => items.map(i => [Number(i.dataset.seat), Number(i.dataset.netWorth)])",
    )
    worths = sorted(
        ([int(n["seat"]), int(n["net_worth"])] for n in result["net_worths"]),
        key=lambda n: -n[1],
    )
    assert [n[1] for n in ranked] == [n[1] for n in worths]
    assert sorted(ranked) == sorted(worths)
    assert page.get_attribute("#status", "data-over") == "yes"


OFFBOARD_BOXES = """() => [...document.querySelectorAll("#map .hex[data-colour='red']")]
.map((hex) => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  return {
    hex: hex.dataset.hex,
    shape: box(hex.querySelector(".hex-shape")),
    name: box(hex.querySelector(".place-name")),
    values: [...hex.querySelectorAll(".offboard-revenue text")].map(box),
  };
})"""


def intersect(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


def test_off_board_values_do_not_overlap_the_place_names(web_system: WebSystem, page: Page) -> None:
    table = Table(web_system)
    spectator_page(page, web_system, table)
    offboards = page.evaluate(OFFBOARD_BOXES)
    assert len(offboards) == 3, "1889 has three off-boards"
    for offboard in offboards:
        assert len(offboard["values"]) == 3, offboard["hex"]  # low, high and the Diesel's
        # Clear by a line of the name's height: a reader's larger font must not make them meet.
        name = offboard["name"]
        line = name["bottom"] - name["top"]
        grown = {
            "left": name["left"],
            "right": name["right"],
            "top": name["top"] - line,
            "bottom": name["bottom"] + line,
        }
        for value in offboard["values"]:
            assert not intersect(value, name), offboard["hex"]
            assert not intersect(value, grown), offboard["hex"]
            shape = offboard["shape"]
            assert shape["left"] <= value["left"] and value["right"] <= shape["right"]
            assert shape["top"] <= value["top"] and value["bottom"] <= shape["bottom"]


def mid_game(system: WebSystem) -> Table:
    table = Table(system)
    rng = random.Random(1400)
    everyone = set(table.tokens)
    for _ in range(MID_GAME_ACTIONS_LIMIT):
        doc = document(table.state())
        if sum(len(c["trains"]) for c in doc["corporations"]) >= MID_GAME_TRAINS:
            return table
        table.bot_move(rng, everyone)
    raise AssertionError(f"no {MID_GAME_TRAINS} trains within {MID_GAME_ACTIONS_LIMIT} actions")


def test_the_side_column_fits_1400_px_without_scrolling_sideways(
    web_system: WebSystem, page: Page
) -> None:
    table = mid_game(web_system)
    state = spectator_page(page, web_system, table)
    assert page.viewport_size == {"width": 1400, "height": 1000}
    started = [c for c in document(state)["corporations"] if c.get("president")]
    assert len(started) >= 2
    widths = page.eval_on_selector("#side", "s => [s.scrollWidth, s.clientWidth]")
    assert widths[0] <= widths[1], widths
    table_width = page.eval_on_selector("#corporations", "t => t.getBoundingClientRect().width")
    assert table_width <= widths[1]


MARKERS = """() => [...document.querySelectorAll("#market-grid .market-marker")].map((m) => {
  const c = m.querySelector("circle");
  const {row, column} = m.dataset;
  const rect = document.querySelector(
    `#market-grid .space[data-row='${row}'][data-column='${column}'] rect`);
  const n = (e, name) => Number(e.getAttribute(name));
  return {corporation: m.dataset.corporation, space: `${row},${column}`,
          x: n(c, "cx"), y: n(c, "cy"), r: n(c, "r"),
          cell: [n(rect, "x"), n(rect, "y"), n(rect, "width"), n(rect, "height")]};
})"""


def start_at_one_par(table: Table, count: int) -> None:
    """In a beginner game's first stock round, the seats start `count` corporations at one par."""
    for _ in range(4 * count):
        started = [c for c in document(table.state())["corporations"] if c.get("president")]
        if len(started) >= count:
            return
        actions = table.actions()
        start = next(
            (
                a
                for a in actions
                if a.HasField("start_corporation") and PAR in a.start_corporation.par_prices
            ),
            None,
        )
        if start:
            command = game_pb2.Command(
                start_corporation=game_pb2.StartCorporation(
                    corporation=start.start_corporation.corporation, par=PAR
                )
            )
            seat = start.seat
        else:
            seat = next(a.seat for a in actions if a.HasField("pass_turn"))
            command = game_pb2.Command(pass_turn=game_pb2.Pass())
        table.games.SubmitCommand(
            game_pb2.SubmitCommandRequest(game_id=table.game_id, command=command),
            metadata=table.metadata(table.tokens[seat]),
            timeout=10,
        )
    raise AssertionError(f"fewer than {count} corporations started at {PAR}")


def test_markers_on_one_market_space_are_spread_within_it(
    web_system: WebSystem, page: Page
) -> None:
    table = Table(web_system, lobby_pb2.TableOptions(beginner_game=True))
    start_at_one_par(table, SAME_SPACE)
    state = spectator_page(page, web_system, table)
    positions = {
        tuple(c["market_position"]) for c in document(state)["corporations"] if c.get("president")
    }
    assert len(positions) == 1, "every started corporation is on the par space"
    markers = page.evaluate(MARKERS)
    assert len(markers) >= SAME_SPACE
    assert len({m["space"] for m in markers}) == 1
    for i, marker in enumerate(markers):
        x, y, width, height = marker["cell"]
        assert x <= marker["x"] - marker["r"] and marker["x"] + marker["r"] <= x + width, marker
        assert y <= marker["y"] - marker["r"] and marker["y"] + marker["r"] <= y + height, marker
        for other in markers[i + 1 :]:
            apart = ((marker["x"] - other["x"]) ** 2 + (marker["y"] - other["y"]) ** 2) ** 0.5
            assert apart >= marker["r"] + other["r"], (marker, other)  # none covers another


def test_the_market_has_a_legend_of_its_zones(web_system: WebSystem, page: Page) -> None:
    table = Table(web_system)
    title = table.titles.GetTitle(title_pb2.GetTitleRequest(), metadata=table.metadata())
    spaces = [space for row in title.market for space in row.spaces]
    zones = {space.zone for space in spaces} - {title_pb2.MARKET_ZONE_NORMAL}
    expected = {
        "zone-" + title_pb2.MarketZone.Name(z).removeprefix("MARKET_ZONE_").lower() for z in zones
    }
    if any(space.par for space in spaces):
        expected.add("par")
    spectator_page(page, web_system, table)
    shown: list[Any] = page.eval_on_selector_all(
        "#market-legend li", "items => items.map(i => i.dataset.zone)"
    )
    assert set(shown) == expected and len(shown) == len(expected), shown
    assert expected >= {"par", "zone-yellow", "zone-orange"}
    # Each swatch is coloured as the market's spaces of its zone are.
    for zone in expected - {"par"}:
        swatch = page.eval_on_selector(
            f"#market-legend li[data-zone='{zone}'] .swatch",
            "s => getComputedStyle(s).backgroundColor",
        )
        space = page.eval_on_selector(
            f"#market-grid .space.{zone} rect", "r => getComputedStyle(r).fill"
        )
        assert swatch == space, zone
    legend = page.eval_on_selector("#market-legend", "l => l.getBoundingClientRect().top")
    market = page.eval_on_selector("#market-grid", "m => m.getBoundingClientRect().bottom")
    assert legend >= market, "the legend is under the market"
