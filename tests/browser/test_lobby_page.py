"""The lobby, the page's first screen, with two and three players each in a browser context of
their own: register, create a table with its options, join, ready, start (by itself when all
are ready, and by the host), open the board at one's seat, whose turn it is in "your games"
as the game moves, a reload that comes back to the seat, and refusals in words."""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import pytest
from playwright.sync_api import Page

from shikoku.v1 import game_pb2, game_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from tests.browser.conftest import Screenshots, WebSystem

pytestmark = pytest.mark.e2e


class Gateway:
    """Reading what the page did, through the public gRPC API."""

    def __init__(self, system: WebSystem) -> None:
        self.api_key = system.api_key
        self.channel = grpc.insecure_channel(system.gateway)
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(self.channel)
        self.games = game_pb2_grpc.GameServiceStub(self.channel)

    def metadata(self, token: str = "") -> tuple[tuple[str, str], ...]:
        bearer = (("authorization", f"Bearer {token}"),) if token else ()
        return (("x-api-key", self.api_key), *bearer)

    def table(self, table_id: str) -> lobby_pb2.Table:
        request = lobby_pb2.GetTableRequest(table_id=table_id)
        return self.lobby.GetTable(request, metadata=self.metadata(), timeout=10)

    def start_table(self, players: dict[str, str]) -> str:
        """A table created, joined by `players` (name -> credential, "" for none) in order, and
        started by its host; its id."""
        created = self.lobby.CreateTable(
            lobby_pb2.CreateTableRequest(seat_count=len(players)),
            metadata=self.metadata(),
            timeout=10,
        )
        table_id = created.table.table_id
        for name, credential in players.items():
            self.lobby.JoinTable(
                lobby_pb2.JoinTableRequest(table_id=table_id, player_name=name),
                metadata=self.metadata(credential),
                timeout=10,
            )
        self.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=table_id),
            metadata=self.metadata(created.host_token),
            timeout=10,
        )
        return str(table_id)

    def acting(self, game_id: str, token: str) -> list[int]:
        request = game_pb2.GetStateRequest(game_id=game_id)
        state = self.games.GetState(request, metadata=self.metadata(token), timeout=10)
        return list(state.acting_seats)


@pytest.fixture
def gateway(web_system: WebSystem) -> Iterator[Gateway]:
    gateway = Gateway(web_system)
    yield gateway
    gateway.channel.close()


def register(page: Page, name: str) -> None:
    page.fill("#register-form [name='name']", name)
    page.click("[data-control='register']")
    page.wait_for_selector(f"#player-name:text-is('{name}')")


def created_table(page: Page, known: set[str]) -> str:
    """The id of the table the page has just created: the row of "your games" it did not have."""
    page.wait_for_function(
        "known => [...document.querySelectorAll('#your-games [data-table-id]')]"
        ".some(row => !known.includes(row.dataset.tableId))",
        arg=sorted(known),
    )
    ids = page.eval_on_selector_all(
        "#your-games [data-table-id]", "rows => rows.map(row => row.dataset.tableId)"
    )
    (new,) = set(ids) - known
    return str(new)


def own_row(table_id: str) -> str:
    return f"#your-games [data-table-id='{table_id}']"


def open_row(table_id: str) -> str:
    return f"#open-tables [data-table-id='{table_id}']"


def stored_seat(page: Page, table_id: str) -> dict[str, object]:
    seats = json.loads(page.evaluate("localStorage.getItem('shikoku.seats')"))
    return dict(seats[table_id])


def test_two_players_create_join_ready_and_play_from_the_lobby(
    web_system: WebSystem,
    player_pages: list[Page],
    gateway: Gateway,
    screenshots: Screenshots,
) -> None:
    alice, bob, carol = player_pages
    alice.goto(web_system.page_url)
    assert alice.is_visible("#lobby") and alice.is_hidden("#board")
    register(alice, "Alice")

    # Alice creates a two-seat table with undo, spectators two actions behind and a clock; she
    # takes a seat at it.
    form = "#create-form"
    alice.fill(f"{form} [name='display_name']", "Alice's table")
    alice.select_option(f"{form} [name='seat_count']", "2")
    alice.check(f"{form} [name='undo_allowed']")
    alice.fill(f"{form} [name='spectator_delay_actions']", "2")
    alice.check(f"{form} [name='clock']")
    alice.fill(f"{form} [name='bank_minutes']", "90")
    alice.fill(f"{form} [name='increment_seconds']", "20")
    alice.click("[data-control='create']")
    first = created_table(alice, set())
    alice.wait_for_selector(f"{own_row(first)}[data-status='open'][data-seat='1']")
    alice.wait_for_selector(f"{open_row(first)}[data-status='open']")
    options = alice.text_content(f"{open_row(first)} td.options") or ""
    for shown in ["undo allowed", "spectators 2 actions behind", "clock 90 min + 20 s (flag)"]:
        assert shown in options
    table = gateway.table(first)
    assert table.display_name == "Alice's table" and table.seat_count == 2
    assert table.options.undo_allowed and table.options.spectator_delay_actions == 2
    assert table.options.clock.bank_seconds == 5400
    assert table.options.clock.increment_seconds == 20
    assert table.options.clock.policy == lobby_pb2.CLOCK_POLICY_FLAG
    assert [s.player_name for s in table.seats] == ["Alice", ""]

    # The host may not start a game of one: the refusal is shown in words with its reason.
    alice.click(f"{own_row(first)} [data-control='start']")
    alice.wait_for_selector("#error[data-reason='TOO_FEW_PLAYERS']")
    assert "at least 2 players" in (alice.text_content("#error") or "")

    # Carol's lobby (not refreshed while she looks) shows the free seat; Bob takes it first.
    carol.goto(f"{web_system.page_url}&refresh=3600")
    register(carol, "Carol")
    carol.wait_for_selector(f"{open_row(first)} [data-control='join']")
    bob.goto(web_system.page_url)
    register(bob, "Bob")
    bob.click(f"{open_row(first)} [data-control='join']")
    bob.wait_for_selector(f"{own_row(first)}[data-status='open'][data-seat='2']")
    assert gateway.table(first).seats[1].player_name == "Bob"
    carol.click(f"{open_row(first)} [data-control='join']")
    carol.wait_for_selector("#error[data-reason='TABLE_FULL']")
    assert carol.get_attribute("#error", "data-code") == "failed_precondition"

    # Both ready: the table starts by itself.
    alice.click(f"{own_row(first)} [data-control='ready'][data-ready='no']")
    alice.wait_for_selector(f"{own_row(first)} [data-control='ready'][data-ready='yes']")
    assert gateway.table(first).status == lobby_pb2.TABLE_STATUS_OPEN
    bob.click(f"{own_row(first)} [data-control='ready'][data-ready='no']")
    bob.wait_for_selector(f"{own_row(first)}[data-status='started']")
    alice.wait_for_selector(f"{own_row(first)}[data-status='started']")
    game_id = gateway.table(first).game_id
    assert game_id == first

    # A second table the host starts herself once Bob has joined it.
    assert alice.input_value(f"{form} [name='display_name']") == ""  # the options stay
    alice.fill(f"{form} [name='display_name']", "Alice's second table")
    alice.click("[data-control='create']")
    second = created_table(alice, {first})
    bob.click(f"{open_row(second)} [data-control='join']")
    bob.wait_for_selector(f"{own_row(second)}[data-seat='2']")
    table = gateway.table(second)
    assert table.display_name == "Alice's second table" and table.seat_count == 2
    assert table.options.undo_allowed and table.options.clock.bank_seconds == 5400
    alice.click(f"{own_row(second)} [data-control='start']")
    alice.wait_for_selector(f"{own_row(second)}[data-status='started']")
    assert gateway.table(second).status == lobby_pb2.TABLE_STATUS_STARTED

    # Carol opens a table of her own, for the others to see.
    carol.fill(f"{form} [name='display_name']", "Carol's beginner game")
    carol.select_option(f"{form} [name='seat_count']", "4")
    carol.check(f"{form} [name='beginner_game']")
    carol.click("[data-control='create']")
    carol_table = created_table(carol, set())

    # Alice keeps her lobby open in a second tab; both open the first table's board.
    alice_lobby = alice.context.new_page()
    alice_lobby.goto(web_system.page_url)
    alice_lobby.wait_for_selector(f"{open_row(carol_table)} [data-control='join']")
    for page, seat in [(alice, 1), (bob, 2)]:
        page.click(f"{own_row(first)} [data-control='open']")
        page.wait_for_url(f"**/?game={first}")
        page.wait_for_selector(f"#board[data-seat='{seat}'][data-actions-version]")
        assert page.is_hidden("#lobby")
        assert page.text_content("#role") == f"playing seat {seat}"
        assert "token" not in page.url

    # Whose turn it is, in Alice's "your games", as the game moves.
    tokens = {seat: str(stored_seat(page, first)["token"]) for page, seat in [(alice, 1), (bob, 2)]}
    (acting,) = gateway.acting(game_id, tokens[1])
    row = own_row(first)
    alice_lobby.wait_for_selector(f"{row}[data-acting-seats='{acting}']")
    turn = "yes" if acting == 1 else "no"
    assert alice_lobby.get_attribute(row, "data-your-turn") == turn
    screenshots.take(alice_lobby, "lobby")
    mover = {1: alice, 2: bob}[acting]
    mover.click("#actions [data-control='buy-private']")
    other = 3 - acting
    alice_lobby.wait_for_selector(f"{row}[data-acting-seats='{other}']")
    assert gateway.acting(game_id, tokens[1]) == [other]
    assert alice_lobby.get_attribute(row, "data-your-turn") == ("yes" if other == 1 else "no")

    # A reload of Bob's page comes back to his seat, with no token in the address.
    bob.reload()
    bob.wait_for_selector("#board[data-seat='2'][data-actions-version]")
    assert bob.text_content("#role") == "playing seat 2"
    assert "token" not in bob.url and tokens[2] not in bob.url
    # And the title leads back to the lobby.
    bob.click("#home")
    bob.wait_for_selector(f"{own_row(first)}[data-status='started']")
    assert bob.is_hidden("#board")

    # A seat Alice takes elsewhere with her credential (this browser holds no token for it)
    # comes to her lobby on her stream, and opens with her credential.
    credential = json.loads(alice.evaluate("localStorage.getItem('shikoku.player')"))["credential"]
    elsewhere = gateway.start_table({"Dan": "", "Alice": credential})
    alice_lobby.wait_for_selector(f"{own_row(elsewhere)}[data-status='started'][data-seat='2']")
    alice_lobby.click(f"{own_row(elsewhere)} [data-control='open']")
    alice_lobby.wait_for_selector("#board[data-seat='2'][data-actions-version]")
    assert alice_lobby.text_content("#role") == "playing seat 2"
    alice_lobby.close()


def test_the_address_form_keeps_the_token_out_of_the_address_and_in_the_browser(
    web_system: WebSystem, player_pages: list[Page], gateway: Gateway
) -> None:
    """A seat token given in the address (?game=…&seat=N&token=…) plays that seat, and stays in
    this browser only: the address keeps the game, and a reload the seat."""
    page = player_pages[0]
    created = gateway.lobby.CreateTable(
        lobby_pb2.CreateTableRequest(seat_count=2), metadata=gateway.metadata(), timeout=10
    )
    table_id = created.table.table_id
    tokens = {}
    for name in ["Ann", "Ben"]:
        joined = gateway.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=table_id, player_name=name),
            metadata=gateway.metadata(),
            timeout=10,
        )
        tokens[joined.seat] = joined.seat_token
    gateway.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table_id),
        metadata=gateway.metadata(created.host_token),
        timeout=10,
    )
    page.goto(f"{web_system.page_url}&game={table_id}&seat=2&token={tokens[2]}")
    page.wait_for_selector("#board[data-seat='2'][data-actions-version]")
    assert "token" not in page.url and f"game={table_id}" in page.url
    assert stored_seat(page, table_id) == {"seat": 2, "token": tokens[2]}
    page.reload()
    page.wait_for_selector("#board[data-seat='2'][data-actions-version]")
    assert page.text_content("#role") == "playing seat 2"
    # Unregistered, the seat held by its token is among "your games" in the lobby.
    page.click("#home")
    page.wait_for_selector(f"{own_row(table_id)}[data-status='started'][data-seat='2']")


def test_a_player_credential_the_server_does_not_know_is_forgotten_with_its_reason(
    web_system: WebSystem, player_pages: list[Page]
) -> None:
    """A credential of another system (a `make run` since restarted on a fresh Redis, say) is
    refused on the player's stream: the lobby says why and asks for the name again."""
    page = player_pages[0]
    page.goto(web_system.page_url)
    stale = {"playerId": "p-gone", "credential": "c-not-a-credential", "name": "Old me"}
    page.evaluate("player => localStorage.setItem('shikoku.player', player)", json.dumps(stale))
    page.reload()
    page.wait_for_selector("#error[data-reason='INVALID_CREDENTIAL']")
    assert page.get_attribute("#error", "data-code") == "unauthenticated"
    page.wait_for_selector("#register-form", state="visible")
    assert page.evaluate("localStorage.getItem('shikoku.player')") is None
    register(page, "New me")
    page.wait_for_selector("#your-games .idle")
    assert page.text_content("#error") == ""
