"""Undo and the history on the board page (undo.js, history.js) in a real headless Chromium,
against the real system.

Undo: at a table that allows it, the page plays its seat's action through its own controls and
takes it back with its Undo button; the log ends with `Undone` and the game is as it was; a
second Undo, with the last action now not the seat's, is refused and the refusal said in words.
A table without undo shows no Undo button.

History: the page steps back and forward through a game by actions (a command's batch of
events), jumps to an event chosen in the log, and shows at each version exactly what
GetState(version) says (tiles, market markers, cash); a bot's move while the page shows the past
reaches the log without moving the view, and Live shows the latest state."""

from __future__ import annotations

import random
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from shikoku.v1 import game_pb2, lobby_pb2
from tests.browser.conftest import Screenshots, WebSystem
from tests.browser.tables import Table, document, open_page, settled

pytestmark = pytest.mark.e2e

BOT_ACTIONS_LIMIT = 1500  # to reach an operating round with tiles on the board
TILES_WANTED = 2
MORE_ACTIONS = 8  # played after that, so that there are actions to step back through


def read_state(table: Table, seat: int, version: int = 0) -> game_pb2.GameState:
    request = game_pb2.GetStateRequest(game_id=table.game_id, version=version)
    return table.games.GetState(request, metadata=table.metadata(table.tokens[seat]), timeout=10)


def command_starts(table: Table, last: int) -> list[int]:
    """The versions of the events that began a command's batch (they carry `command`)."""
    request = game_pb2.StreamEventsRequest(game_id=table.game_id, from_version=1)
    stream = table.games.StreamEvents(request, metadata=table.reader(), timeout=30)
    starts = []
    for event in stream:
        if event.HasField("command"):
            starts.append(event.version)
        if event.version == last:
            stream.cancel()
            break
    return starts


def shown_view(page: Page) -> dict[str, Any]:
    return dict(
        page.evaluate(
            """() => ({
      tiles: [...document.querySelectorAll("#map .layer-hexes .hex")]
        .filter((h) => h.dataset.tile)
        .map((h) => [h.dataset.hex, h.dataset.tile, Number(h.dataset.rotation)]),
      markers: [...document.querySelectorAll("#market-grid .market-marker")]
        .map((m) => [m.dataset.corporation, Number(m.dataset.row), Number(m.dataset.column)]),
      cash: [...document.querySelectorAll("#players tbody tr")]
        .map((r) => [Number(r.dataset.seat), r.querySelector(".cash").textContent]),
    })"""
        )
    )


def expected_view(state: game_pb2.GameState) -> dict[str, Any]:
    doc = document(state)
    return {
        "tiles": sorted(
            [t["hex"], t["tile"], int(t.get("rotation", 0))] for t in doc["board"]["tiles"]
        ),
        "markers": sorted(
            [c["id"], int(c["market_position"][0]), int(c["market_position"][1])]
            for c in doc["corporations"]
            if c.get("market_position")
        ),
        "cash": sorted([int(p["seat"]), f"¥{int(p['cash'])}"] for p in doc["players"]),
    }


def check_view(page: Page, table: Table, seat: int, version: int, viewing: str) -> None:
    """The page shows `version` (in the history or live) as GetState(version) has it."""
    page.wait_for_selector(f"#board[data-viewing='{viewing}'][data-version='{version}']")
    shown = shown_view(page)
    shown = {key: sorted(value) for key, value in shown.items()}
    assert shown == expected_view(read_state(table, seat, version)), version


# --- undo


def test_undo_takes_back_the_seats_action_and_a_refusal_is_said_in_words(
    web_system: WebSystem, page: Page
) -> None:
    table = Table(web_system, options=lobby_pb2.TableOptions(undo_allowed=True))
    state = table.state()
    seat = state.acting_seats[0]
    open_page(page, web_system, table.game_id, seat, table.tokens[seat])
    settled(page, state.version)
    undo = page.locator("#undo[data-undo='allowed'] [data-control='undo']")
    expect(undo).to_be_visible()
    before = document(state)
    cash_before = page.text_content(f"#players tr[data-seat='{seat}'] .cash")

    # The seat buys the first private with the page's own control: now Undo may succeed.
    page.locator("#actions [data-control='buy-private']").first.click()
    played = state.version + 1
    page.wait_for_selector(f"#events li[data-version='{played}'][data-type='PrivateBought']")
    assert document(table.state()) != before
    expect(undo).to_have_attribute("data-likely", "yes")

    undo.click()
    page.wait_for_selector("#events li[data-type='Undone']")
    undone = table.state()
    assert table.log(undone.version)[-1] == (undone.version, "Undone")
    assert document(undone) == before, "the game is as it was before the action"
    settled(page, undone.version)
    expect(page.locator(f"#events li[data-version='{played}']")).to_have_class("undone")
    assert page.text_content(f"#players tr[data-seat='{seat}'] .cash") == cash_before
    assert page.text_content(f"#players tr[data-seat='{seat}'] .privates") == ""
    assert page.text_content("#error") == ""

    # The last action still counting is the game's creation: not the seat's to take back.
    expect(undo).to_have_attribute("data-likely", "no")
    undo.click()
    page.wait_for_selector("#error[data-reason='NOT_YOUR_ACTION']")
    assert "only they can take it back" in (page.text_content("#error") or "")
    assert table.state().version == undone.version, "a refused undo writes nothing"


def test_a_table_without_undo_shows_no_undo_button(web_system: WebSystem, page: Page) -> None:
    table = Table(web_system)
    state = table.state()
    seat = state.acting_seats[0]
    open_page(page, web_system, table.game_id, seat, table.tokens[seat])
    page.wait_for_selector("#undo[data-undo='off']", state="attached")
    settled(page, state.version)
    assert page.locator("[data-control='undo']").count() == 0


def test_a_spectator_gets_no_undo_button_even_where_undo_is_allowed(
    web_system: WebSystem, page: Page
) -> None:
    table = Table(web_system, options=lobby_pb2.TableOptions(undo_allowed=True))
    open_page(page, web_system, table.game_id)
    page.wait_for_selector(f"#board[data-version='{table.state().version}']")
    page.wait_for_selector("#undo[data-undo='no-seat']", state="attached")
    assert page.locator("[data-control='undo']").count() == 0


# --- the history


def played_game(web_system: WebSystem) -> Table:
    """A game played by bots into its operating rounds: tiles on the board, markers on the
    market, and some actions after the last tile. Closed to spectators, so that the page's
    reads of earlier versions must go out with its seat's token."""
    table = Table(web_system, lobby_pb2.TableOptions(closed_to_spectators=True))
    rng = random.Random(1889)
    everyone = set(table.tokens)
    for _ in range(BOT_ACTIONS_LIMIT):
        if len(document(table.state())["board"]["tiles"]) >= TILES_WANTED:
            break
        table.bot_move(rng, everyone)
    assert len(document(table.state())["board"]["tiles"]) >= TILES_WANTED
    for _ in range(MORE_ACTIONS):
        table.bot_move(rng, everyone)
    return table


def test_history_steps_through_the_game_and_live_returns_to_it(
    web_system: WebSystem, page: Page, screenshots: Screenshots
) -> None:
    table = played_game(web_system)
    seat = 1
    latest = table.state().version
    starts = command_starts(table, latest)
    # Where a step lands: after each command's batch, and the latest version.
    steps = [s - 1 for s in starts if 1 <= s - 1 < latest] + [latest]
    open_page(page, web_system, table.game_id, seat, table.tokens[seat])
    settled(page, latest)
    check_view(page, table, seat, latest, "live")
    assert page.get_attribute("#history-position", "data-total") == str(latest)

    # Back one action: the state before the last command.
    page.click("[data-control='history-back']")
    check_view(page, table, seat, steps[-2], "history")
    assert page.is_hidden("#actions"), "no command from the past"
    expect(page.locator("#events li.selected")).to_have_attribute("data-version", str(steps[-2]))
    for _ in range(3):
        page.click("[data-control='history-back']")
    check_view(page, table, seat, steps[-5], "history")
    page.click("[data-control='history-forward']")
    check_view(page, table, seat, steps[-4], "history")

    # The first position: the game as created, before anyone acted.
    page.click("[data-control='history-first']")
    check_view(page, table, seat, steps[0], "history")
    assert shown_view(page)["tiles"] == []
    page.click("[data-control='history-forward']")
    check_view(page, table, seat, steps[1], "history")

    # An event chosen in the log: the first tile laid.
    laid = next(v for v, kind in table.log(latest) if kind == "TileLaid")
    page.click(f"#events li[data-version='{laid}']")
    check_view(page, table, seat, laid, "history")
    assert len(shown_view(page)["tiles"]) == 1
    expect(page.locator("#events li.selected")).to_have_attribute("data-version", str(laid))
    assert page.text_content("#history-position") == f"version {laid} of {latest}"
    screenshots.take(page, "history")

    # The game goes on meanwhile: the log grows, the view stays in the past.
    rng = random.Random(7)
    table.bot_move(rng, set(table.tokens))
    newest = table.state().version
    page.wait_for_selector(f"#events li[data-version='{newest}']")
    page.wait_for_selector(f"#history-position[data-total='{newest}']")
    check_view(page, table, seat, laid, "history")

    # Live: the latest state, with the seat's controls back.
    page.click("[data-control='history-live']")
    check_view(page, table, seat, newest, "live")
    settled(page, newest)
    assert page.is_visible("#actions")
    assert page.locator("#events li.selected").count() == 0
    assert page.text_content("#error") == ""
