"""The host console (/host on the web entrypoint) in a real headless Chromium, against the real
system through the web entrypoint's Connect API.

A two-round tournament of eight registered players in tables of four, every table on a chess
clock that flags. The page opens it with the host's credential, and the host starts round 1
from it. Random players (shikoku_sdk.RandomPlayer, through the gateway in a thread) play one
table while the other stands still: the page follows the played table's game version by
version without a reload, also after its stream is dropped, and shows what GetTable says; the
still table's running clock counts down, the table is marked stalled, its seat flags and the
host forfeits that seat from the page. The host ends the played table, starts round 2 from the
page, gives a seat to a reserve player and ends the round; the tournament is over, and a reload
of the bare address comes back to it from the browser's storage. Screenshots go to
$SHIKOKU_SCREENSHOTS when it is set (`SHIKOKU_SCREENSHOTS=docs/images` refreshes
docs/images/host-console-*.png), else to the test's temporary directory."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, ViewportSize, expect

from shikoku.v1 import lobby_pb2
from shikoku_sdk import Client, RandomPlayer
from tests.browser.conftest import WebSystem

pytestmark = pytest.mark.e2e

PLAYERS = 8
TABLE_SIZE = 4
ROUNDS = 2
# Long enough for the page to watch the still table's clock fall, short enough to flag it soon;
# the bots' seats get it back with every action.
CLOCK = lobby_pb2.ClockOptions(
    bank_seconds=20, increment_seconds=20, policy=lobby_pb2.CLOCK_POLICY_FLAG
)
STALL_SECONDS = 4  # the page's ?stall=: the still table is marked after this
VIEWPORT: ViewportSize = {"width": 1400, "height": 1000}


class Screenshots:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def take(self, page: Page, name: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(self.directory / f"host-console-{name}.png"), full_page=True)


@pytest.fixture
def screenshots(tmp_path: Path) -> Screenshots:
    return Screenshots(Path(os.environ.get("SHIKOKU_SCREENSHOTS") or tmp_path))


class Tournament:
    """A host, eight players and a reserve, registered through the gateway, and the host's
    two-round tournament of them."""

    def __init__(self, client: Client) -> None:
        self.client = client
        host = client.register_host("Director")
        self.host_token = host.credential
        self.host = client.with_credential(host.credential)
        self.players = {
            r.player_id: r for r in (client.register_player(f"Player {n}") for n in range(PLAYERS))
        }
        self.reserve = client.register_player("Reserve")
        request = lobby_pb2.CreateTournamentRequest(
            name="Shikoku Open",
            player_ids=list(self.players),
            table_size=TABLE_SIZE,
            rounds=ROUNDS,
            table_options=lobby_pb2.TableOptions(clock=CLOCK),
        )
        created = self.host.lobby.CreateTournament(request, metadata=self.host.metadata())
        self.tournament_id = created.tournament_id

    def get(self) -> lobby_pb2.Tournament:
        return self.client.get_tournament(self.tournament_id)

    def table(self, table_id: str) -> lobby_pb2.Table:
        return self.host.get_table(table_id)

    def seats(self, table: lobby_pb2.TournamentTable) -> dict[int, Client]:
        """Seat number -> a client acting for the player who holds it."""
        return {
            seat: self.client.with_credential(self.players[player_id].credential)
            for seat, player_id in enumerate(table.player_ids, start=1)
        }


@pytest.fixture
def tournament(web_system: WebSystem) -> Iterator[Tournament]:
    with Client(web_system.gateway, api_key=web_system.api_key) as client:
        yield Tournament(client)


class Bots:
    """Random players playing one table in a thread, a move every `pause` seconds, until told
    to hold or stop."""

    def __init__(self, game_id: str, seats: dict[int, Client], pause: float = 0.15) -> None:
        self.player = RandomPlayer(game_id, seats, seed=25)
        self.pause = pause
        self.playing = threading.Event()
        self.stopped = threading.Event()
        self.moves = 0
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self.stopped.is_set():
                if not self.playing.wait(0.1):
                    continue
                if not self.player.step():
                    return
                self.moves += 1
                time.sleep(self.pause)
        except BaseException as error:  # reported by the test's thread
            self.failure = error

    @contextmanager
    def running(self) -> Iterator[Bots]:
        self.playing.set()
        self.thread.start()
        try:
            yield self
        finally:
            self.stopped.set()
            self.thread.join(30)
        assert self.failure is None, self.failure

    def hold(self) -> None:
        """Stops moving after the move under way, which this waits for."""
        self.playing.clear()
        moves = -1
        while moves != self.moves:
            moves = self.moves
            time.sleep(self.pause + 0.5)


def card(page: Page, table_id: str) -> Locator:
    return page.locator(f"#tables article[data-table-id='{table_id}']")


def version_shown(page: Page, table_id: str) -> int:
    return int(card(page, table_id).get_attribute("data-version") or 0)


def wait_until(check: object, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_the_host_runs_a_tournament_from_the_console(
    page: Page, web_system: WebSystem, tournament: Tournament, screenshots: Screenshots
) -> None:
    page.set_viewport_size(VIEWPORT)
    page.on("dialog", lambda dialog: dialog.accept())  # the page confirms ending and forfeits
    page.goto(f"http://{web_system.web}/host?api_key={web_system.api_key}&stall={STALL_SECONDS}")
    page.fill("input[name=tournament]", tournament.tournament_id)
    page.fill("input[name=token]", tournament.host_token)
    page.click("#open")
    console = page.locator("#console")
    expect(console).to_have_attribute("data-tournament-id", tournament.tournament_id)
    expect(page.locator("#tournament-name")).to_contain_text("Shikoku Open")
    expect(page.locator("#standings tbody tr")).to_have_count(PLAYERS)
    start = page.locator("#start-round")
    expect(start).to_have_text("Start round 1 of 2")
    assert "token" not in page.url  # the credential stays out of the address and history

    # Round 1, started from the page: its tables are the lobby's.
    start.click()
    expect(console).to_have_attribute("data-round", "1")
    round_1 = tournament.get().rounds[0]
    assert len(round_1.tables) == PLAYERS // TABLE_SIZE
    played, still = round_1.tables
    expect(page.locator("#tables article")).to_have_count(len(round_1.tables))
    expect(start).to_be_disabled()
    for table in round_1.tables:
        expect(card(page, table.table_id)).to_have_attribute("data-status", "live")
    page.evaluate("window.sameDocument = true")  # gone if the page is ever reloaded

    # The still table's clock runs for its acting seat and falls in real time, counted by
    # the page from the server's as_of_ms.
    running = card(page, still.table_id).locator("td.clock.running")
    expect(running).to_have_count(1)
    first = running.inner_text()
    time.sleep(2.5)
    later = running.inner_text()
    seconds = [int(m) * 60 + int(s) for m, s in (t.split(":") for t in (first, later))]
    assert seconds[0] - seconds[1] >= 2, (first, later)

    bots = Bots(played.table_id, tournament.seats(played))
    with bots.running():
        # The played table moves on the page without a reload, move after move.
        shown = version_shown(page, played.table_id)
        wait_until(lambda: version_shown(page, played.table_id) >= shown + 10)
        # A dropped stream is opened again, and the table keeps moving on the page.
        connections = int(console.get_attribute("data-connections") or 0)
        page.evaluate("window.shikokuHost.dropStream()")
        wait_until(lambda: int(console.get_attribute("data-connections") or 0) > connections)
        shown = version_shown(page, played.table_id)
        wait_until(lambda: version_shown(page, played.table_id) >= shown + 5)
        # Held still, the page shows exactly what the lobby says of the table.
        bots.hold()
        as_listed = tournament.table(played.table_id)
        played_card = card(page, played.table_id)
        expect(played_card).to_have_attribute("data-version", str(as_listed.game.version))
        acting = " ".join(str(s) for s in as_listed.game.acting_seats)
        expect(played_card).to_have_attribute("data-acting", acting)
        expect(played_card.locator("dd.phase")).to_have_text(as_listed.game.phase)
        for seat in as_listed.seats:
            row = played_card.locator(f"tr[data-seat='{seat.number}']")
            expect(row.locator("td.player")).to_have_text(seat.player_name)
        bots.playing.set()

        # The still table: marked stalled, then its acting seat flags and may be forfeited.
        still_card = card(page, still.table_id)
        expect(still_card).to_have_attribute("data-stalled", "yes", timeout=30_000)
        flagged = still_card.locator("tr[data-ran-out='flagged']")
        expect(flagged).to_have_count(1, timeout=60_000)
        expect(still_card.locator("button.forfeit")).to_have_count(1)
        expect(played_card.locator("tr[data-ran-out='flagged']")).to_have_count(0)
        assert page.evaluate("window.sameDocument") is True
        screenshots.take(page, "live")

        flagged_seat = int(flagged.get_attribute("data-seat") or 0)
        still_card.locator("button.forfeit").click()
        expect(still_card).to_have_attribute("data-status", "finished")
        forfeited = tournament.table(still.table_id).seats[flagged_seat - 1]
        assert forfeited.ran_out == "forfeited"
        bots.hold()

    # The host ends the played table; the round is over and its results are recorded.
    card(page, played.table_id).locator("button.end").click()
    expect(card(page, played.table_id)).to_have_attribute("data-status", "finished")
    expect(console).to_have_attribute("data-round-finished", "yes", timeout=30_000)
    expect(page.locator("#rounds tr[data-round='1'][data-finished='yes']")).to_have_count(1)
    for row in page.locator("#standings tbody tr").all():
        expect(row.locator("td").nth(4)).to_have_text("1")
    recorded = tournament.get().rounds[0]
    assert recorded.finished
    assert {t.table_id: t.end_reason for t in recorded.tables}[still.table_id] == "forfeit"

    # Round 2 from the page, once: its tables replace round 1's.
    expect(start).to_have_text("Start round 2 of 2")
    start.click()
    expect(console).to_have_attribute("data-round", "2")
    round_2 = tournament.get().rounds[1]
    assert len(tournament.get().rounds) == ROUNDS
    expect(page.locator("#tables article")).to_have_count(len(round_2.tables))
    for table in round_2.tables:
        expect(card(page, table.table_id)).to_have_attribute("data-status", "live")

    # The reserve takes a seat of round 2's first table.
    first_table = card(page, round_2.tables[0].table_id)
    first_table.locator("select[name=seat]").select_option("2")
    first_table.locator("input[name=player]").fill(tournament.reserve.player_id)
    first_table.locator("form.replace button").click()
    expect(first_table.locator("tr[data-seat='2'] td.player")).to_have_text("Reserve")
    assert tournament.table(round_2.tables[0].table_id).seats[1].player_name == "Reserve"
    screenshots.take(page, "round-2")

    for table in round_2.tables:
        card(page, table.table_id).locator("button.end").click()
        expect(card(page, table.table_id)).to_have_attribute("data-status", "finished")
    expect(console).to_have_attribute("data-finished", "yes", timeout=30_000)
    expect(start).to_have_text("The tournament is over")
    expect(start).to_be_disabled()
    final = tournament.get()
    assert final.finished
    # The standings shown are the lobby's, in its order.
    rows = page.locator("#standings tbody tr")
    expect(rows).to_have_count(len(final.standings))
    for row, standing in zip(rows.all(), final.standings, strict=True):
        expect(row).to_have_attribute("data-player-id", standing.player_id)
        expect(row.locator("td").nth(4)).to_have_text(str(standing.games))

    # The bare address comes back to the tournament from this browser's storage.
    page.goto(f"http://{web_system.web}/host")
    expect(console).to_have_attribute("data-tournament-id", tournament.tournament_id)
    expect(console).to_have_attribute("data-finished", "yes")
    expect(page.locator("#tables article")).to_have_count(len(round_2.tables))
    screenshots.take(page, "over")
