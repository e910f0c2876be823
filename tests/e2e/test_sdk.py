"""The client SDK (shikoku_sdk) against the real system: whole games played by its random
player, a watch that resumes after dropped connections, errors, and safe retries."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.rpc import code_pb2, error_details_pb2, status_pb2

from shikoku_sdk import (
    PASS,
    Client,
    RandomPlayer,
    ShikokuError,
    Update,
    game_pb2,
    game_result,
    lobby_pb2,
    seat_table,
)
from shikoku_sdk.bot import play_random_game
from shikoku_sdk.random_player import command_for
from tests.e2e.api import System

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("players", [3, 4, 6])
def test_the_random_player_plays_whole_games(system: System, players: int) -> None:
    final = play_random_game(system.gateway, players, seed=players, api_key=system.api_key)
    result = game_result(final)
    assert not final.acting_seats and result is not None
    assert result.reason in {"bank", "bankrupt"}
    assert sorted(result.net_worths) == list(range(1, players + 1))


def test_a_watch_that_loses_its_connection_resumes_without_gaps_or_repeats(
    system: System,
) -> None:
    with Client(system.gateway, api_key=system.api_key) as client:
        table = seat_table(client, 3)
        game_id = table.game_id
        player = threading.Thread(target=RandomPlayer(game_id, table.seats, 1).play)
        player.start()
        rng = random.Random(2)
        updates: list[Update] = []
        with client.watch(game_id, include_state=True, heartbeat_seconds=1) as watch:
            give_up = threading.Timer(180, watch.close)  # should the game never end
            give_up.start()
            hang_up_after = rng.randint(1, 30)
            for update in watch:
                updates.append(update)
                hang_up_after -= 1
                if hang_up_after == 0:
                    watch.disconnect()  # the connection drops; the watch reconnects by itself
                    hang_up_after = rng.randint(1, 30)
        give_up.cancel()
        player.join(timeout=60)
        latest = client.state(game_id)
        assert watch.connections > 5
        assert [u.event.version for u in updates] == list(range(1, latest.version + 1))
        assert updates[-1].event.type == "GameEnded"
        assert updates[-1].state == latest
        stated = [u for u in updates if u.state is not None]
        assert len(stated) > 20  # live: one per action
        for update in random.Random(3).sample(stated, 3):
            assert update.state == client.state(game_id, update.event.version)
        assert list(client.watch(game_id, from_version=latest.version + 1)) == []


def test_acting_out_of_turn_is_a_shikoku_error_and_writes_nothing(system: System) -> None:
    with Client(system.gateway, api_key=system.api_key) as client:
        table = seat_table(client, 3)
        game_id, seats = table.game_id, table.seats
        before = client.state(game_id)
        idle = next(seat for seat in seats if seat not in before.acting_seats)
        with pytest.raises(ShikokuError) as raised:
            seats[idle].act(game_id, PASS)
        assert raised.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert raised.value.reason == "NOT_YOUR_TURN"
        assert isinstance(raised.value.metadata, dict)
        assert client.state(game_id).version == before.version
        with pytest.raises(ShikokuError) as missing:
            client.get_table("t-nope")
        assert (missing.value.code, missing.value.reason) == (
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )


class FakeError(grpc.RpcError):
    """What a lost answer or a rate limit looks like to the client."""

    def __init__(self, code: grpc.StatusCode, details: list[Any]) -> None:
        self._code = code
        status = status_pb2.Status(code=getattr(code_pb2, code.name), message="injected")
        for detail in details:
            status.details.add().Pack(detail)
        self._trailing = (("grpc-status-details-bin", status.SerializeToString()),)

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return "injected"

    def trailing_metadata(self) -> Any:
        return self._trailing


class FirstCallFails(grpc.UnaryUnaryClientInterceptor):
    """Fails the first call of `method` with `error`: after sending it (its answer is lost)
    when `deliver`, else without sending it. Records the ids (`id_field`) sent."""

    def __init__(
        self, error: FakeError, deliver: bool, method: str = "SubmitCommand", id_field: str = ""
    ) -> None:
        self.error = error
        self.deliver = deliver
        self.method = f"/{method}"
        self.id_field = id_field or "command_id"
        self.sent: list[str] = []

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        submit = details.method.endswith(self.method)
        if submit and not self.sent and not self.deliver:
            self.sent.append("")
            raise self.error
        outcome = continuation(details, request)
        if submit:
            self.sent.append(getattr(request, self.id_field))
            if len(self.sent) == 1:
                outcome.result()  # stored by the server; the client never hears so
                raise self.error
        return outcome


def first_command(client: Client, game_id: str) -> tuple[int, game_pb2.Command]:
    action = client.legal_actions(game_id).actions[0]
    return action.seat, command_for(action, random.Random(0), lambda _corporation: [])


def test_a_retried_command_is_applied_once(system: System) -> None:
    lost = FirstCallFails(FakeError(grpc.StatusCode.UNAVAILABLE, []), deliver=True)
    with Client(system.gateway, api_key=system.api_key, interceptors=[lost]) as client:
        table = seat_table(client, 3)
        game_id, seats = table.game_id, table.seats
        before = client.state(game_id).version
        seat, command = first_command(client, game_id)
        answer = seats[seat].act(game_id, command)
        assert len(lost.sent) == 2 and lost.sent[0] == lost.sent[1]  # the same command id
        assert answer.version == before + len(answer.events) == client.state(game_id).version
        # The same id again, by hand: the first answer, nothing written.
        again = seats[seat].act(game_id, command, command_id=lost.sent[0])
        assert again == answer
        assert client.state(game_id).version == answer.version


class CountsCalls(grpc.UnaryUnaryClientInterceptor):
    """Counts the calls made, by method name."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        name = details.method.rsplit("/", 1)[-1]
        self.calls[name] = self.calls.get(name, 0) + 1
        return continuation(details, request)


def test_a_command_answers_with_the_legal_actions_after_it_when_asked(system: System) -> None:
    with Client(system.gateway, api_key=system.api_key) as client:
        table = seat_table(client, 3)
        game_id, seats = table.game_id, table.seats
        seat, command = first_command(client, game_id)
        plain = seats[seat].act(game_id, command)
        assert not plain.HasField("legal_actions")  # not asked for, not sent
        seat, command = first_command(client, game_id)
        answer = seats[seat].act(game_id, command, command_id="c-next", include_legal_actions=True)
        listed = client.legal_actions(game_id)
        assert answer.legal_actions == listed and listed.actions
        assert answer.legal_actions.version == answer.version
        # Sent again: answered from the log, with the legal actions of the game as it stands.
        seat_after, command_after = first_command(client, game_id)
        later = seats[seat_after].act(game_id, command_after)
        again = seats[seat].act(game_id, command, command_id="c-next", include_legal_actions=True)
        assert again.events == answer.events
        assert again.legal_actions == client.legal_actions(game_id)
        assert again.legal_actions.version == later.version


def test_the_sdk_players_take_one_call_a_step(system: System) -> None:
    counted = CountsCalls()
    with Client(system.gateway, api_key=system.api_key, interceptors=[counted]) as client:
        table = seat_table(client, 3)
        counted.calls.clear()
        steps = RandomPlayer(table.game_id, table.seats, 7).play()
        calls = dict(counted.calls)
        assert client.state(table.game_id).acting_seats == []
    # The first step lists; every other step chooses from what the last command's answer
    # carried (routes are asked of Optimize on the steps that run trains).
    assert calls["SubmitCommand"] == steps > 100
    assert calls["ListLegalActions"] == 1
    assert set(calls) <= {"SubmitCommand", "ListLegalActions", "Optimize"}


@pytest.mark.parametrize("method", ["CreateTable", "JoinTable"])
def test_a_lobby_call_whose_answer_was_lost_is_retried_safely(system: System, method: str) -> None:
    lost = FirstCallFails(
        FakeError(grpc.StatusCode.UNAVAILABLE, []), True, method, id_field="request_id"
    )
    with Client(system.gateway, api_key=system.api_key, interceptors=[lost]) as client:
        created = client.create_table(3)
        joined = client.join_table(created.table.table_id, "Ada")
        assert len(lost.sent) == 2 and lost.sent[0] == lost.sent[1]  # the same request id
        table = client.get_table(created.table.table_id)
        assert [seat.player_name for seat in table.seats if seat.player_name] == ["Ada"]
        assert joined.seat_token  # the retry got the token the first call created
        seat = client.with_credential(joined.seat_token)
        assert seat.set_ready(created.table.table_id).seats[0].ready
        host = client.with_credential(created.host_token)
        assert host.get_table(created.table.table_id).table_id == created.table.table_id


def test_the_same_request_id_with_another_request_is_refused(system: System) -> None:
    request_id = str(uuid.uuid4())
    with Client(system.gateway, api_key=system.api_key) as client:

        def create(seats: int) -> lobby_pb2.CreateTableResponse:
            request = lobby_pb2.CreateTableRequest(seat_count=seats, request_id=request_id)
            return client.lobby.CreateTable(request)

        first = create(3)
        assert create(3) == first  # the same table and host token
        with pytest.raises(grpc.RpcError) as refused:
            create(4)
        assert ShikokuError.from_rpc_error(refused.value).reason == "REQUEST_ID_REUSED"


def test_a_rate_limited_command_waits_as_told(system: System) -> None:
    retry = error_details_pb2.RetryInfo()
    retry.retry_delay.FromMilliseconds(300)
    limited = FakeError(grpc.StatusCode.RESOURCE_EXHAUSTED, [retry])
    with Client(
        system.gateway,
        api_key=system.api_key,
        interceptors=[FirstCallFails(limited, deliver=False)],
    ) as client:
        table = seat_table(client, 3)
        game_id, seats = table.game_id, table.seats
        before = client.state(game_id).version
        seat, command = first_command(client, game_id)
        started = time.monotonic()
        answer = seats[seat].act(game_id, command)
        assert time.monotonic() - started >= 0.3
        assert answer.version == before + len(answer.events)


def test_list_tables_pages_through_all_of_them(system: System) -> None:
    with Client(system.gateway, api_key=system.api_key) as client:
        mine = {client.create_table(2).table.table_id for _ in range(5)}
        listed = [table.table_id for table in client.list_tables(page_size=2)]
    assert len(listed) == len(set(listed))
    assert mine <= set(listed)


def test_malformed_input_names_the_field_to_fix(system: System) -> None:
    with Client(system.gateway, api_key=system.api_key) as client:
        table = seat_table(client, 3)
        game_id, seats = table.game_id, table.seats
        seat = client.legal_actions(game_id).actions[0].seat
        with pytest.raises(ShikokuError) as refused:
            seats[seat].act(game_id, game_pb2.Command())
        assert refused.value.reason == "MISSING_ACTION"
        assert list(refused.value.field_violations) == ["command.action"]
        with pytest.raises(ShikokuError) as refused:
            seats[seat].act(game_id, PASS)  # well-formed: refused or not, no field to fix
            seats[seat].act(game_id, PASS)
        assert refused.value.field_violations == {}


def test_a_tournament_run_through_the_sdk(system: System) -> None:
    """A host and four players registered through the SDK; one round of one table played by
    the random player with the players' own credentials; the standings and their export."""
    with Client(system.gateway, api_key=system.api_key) as client:
        host = client.with_credential(client.register_host("Director").credential)
        entrants = {}
        for name in ("Ada", "Brunel", "Clara", "Dai"):
            registered = client.register_player(name)
            entrants[registered.player_id] = client.with_credential(registered.credential)
        created = host.create_tournament("SDK cup", list(entrants), table_size=4)
        with pytest.raises(ShikokuError) as refused:  # players do not run tournaments
            next(iter(entrants.values())).start_round(created.tournament_id)
        assert refused.value.reason == "NOT_HOST"
        (table,) = host.start_round(created.tournament_id).rounds[0].tables
        seats = {seat: entrants[p] for seat, p in enumerate(table.player_ids, start=1)}
        assert RandomPlayer(table.table_id, seats, seed=5).play() > 50
        deadline = time.monotonic() + 20
        while not client.get_tournament(created.tournament_id).rounds[0].finished:
            assert time.monotonic() < deadline, "the result was never recorded"
            time.sleep(0.2)
        standings = client.standings(created.tournament_id)
        result = game_result(client.state(table.table_id))
        assert result is not None
        worth = {p: result.net_worths[seat] for seat, p in enumerate(table.player_ids, start=1)}
        assert {s.player_id: s.net_worth for s in standings} == worth
        assert [s.position for s in standings] == [1, 2, 3, 4]
        rows = client.export_standings(created.tournament_id).splitlines()
        assert rows[0].startswith("position,player_id") and len(rows) == 5


def test_closing_the_client_ends_its_watches_instead_of_reconnecting(system: System) -> None:
    """Closing the channel cancels the streams; a watch that opened one again on the closed
    channel could crash the process (SIGSEGV in grpc), so each ends its iteration instead."""
    client = Client(system.gateway, api_key=system.api_key)
    host = client.with_credential(client.register_host("Closer").credential)
    entrants = [client.register_player(name).player_id for name in ("Ama", "Bo")]
    tournament = host.create_tournament("Closing", entrants, table_size=2)
    table = seat_table(client, 3)
    ended: dict[str, object] = {}

    def follow(name: str, items: Any) -> None:
        try:
            ended[name] = sum(1 for _ in items)
        except Exception as error:  # what a reconnection on the closed channel raises
            ended[name] = error

    game_watch = client.watch(table.game_id, heartbeat_seconds=1)
    followers = [
        threading.Thread(
            target=follow,
            args=(
                "tournament",
                client.watch_tournament(tournament.tournament_id, heartbeat_seconds=1),
            ),
        ),
        threading.Thread(target=follow, args=("game", game_watch)),
    ]
    for follower in followers:
        follower.start()
    time.sleep(1.5)  # both streams open, a heartbeat or more received
    client.close()
    for follower in followers:
        follower.join(timeout=10)
    assert not any(f.is_alive() for f in followers)
    assert all(isinstance(count, int) and count > 0 for count in ended.values()), ended
    assert game_watch.connections == 1
    with pytest.raises(ShikokuError) as closed:
        client.get_table(table.table_id)
    assert closed.value.code == grpc.StatusCode.CANCELLED


def test_seats_ready_up_and_the_host_ends_the_game(system: System) -> None:
    """SetReady starts a full table by itself; a seat acts from a LegalAction with a choice;
    the host ends the game as it stands."""
    with Client(system.gateway, api_key=system.api_key) as client:
        created = client.create_table(2, lobby_pb2.TableOptions(fixed_seat_order=True))
        table_id = created.table.table_id
        seats = {}
        for name in ("Ada", "Brunel"):
            joined = client.join_table(table_id, name)
            seats[joined.seat] = client.with_credential(joined.seat_token)
        assert seats[1].set_ready(table_id).status == lobby_pb2.TABLE_STATUS_OPEN
        assert seats[2].set_ready(table_id).status == lobby_pb2.TABLE_STATUS_STARTED
        game_id = client.get_table(table_id).game_id
        bid = next(
            a
            for a in client.legal_actions(game_id).actions
            if a.WhichOneof("action") == "place_bid"
        )
        with pytest.raises(ValueError, match="outside"):
            seats[bid.seat].act(game_id, bid, price=bid.place_bid.max_price + 5)
        answer = seats[bid.seat].act(game_id, bid, price=bid.place_bid.min_price + 5)
        placed = answer.events[0].payload
        assert placed["price"] == bid.place_bid.min_price + 5
        client.with_credential(created.host_token).end_game(table_id)
        result = game_result(client.state(game_id))
        assert result is not None and result.reason == "ended"


def test_a_start_whose_answer_was_lost_returns_the_game_it_started(system: System) -> None:
    lost = FirstCallFails(
        FakeError(grpc.StatusCode.UNAVAILABLE, []), True, "StartTable", "table_id"
    )
    with Client(system.gateway, api_key=system.api_key, interceptors=[lost]) as client:
        created = client.create_table(2)
        table_id = created.table.table_id
        for name in ("Ada", "Brunel"):
            client.join_table(table_id, name)
        started = client.with_credential(created.host_token).start_table(table_id)
        assert lost.sent == [table_id, table_id]  # started by the first, refused to the second
        assert started.game_id == table_id
        assert started.table.status == lobby_pb2.TABLE_STATUS_STARTED
        assert client.state(started.game_id).version > 0
