"""A hosted tournament through the gateway: registered players (8 in `make test`, 24 in `make
soak`), two rounds of tables of four, every game played to its end by random players, results
and standings; and clocks that run out under both policies."""

from __future__ import annotations

import csv
import io
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from typing import cast

import grpc
import psutil
import pytest

from infra.eventstore import Entries, stream_key
from shikoku.v1 import game_pb2, lobby_pb2
from shikoku_sdk import Client as SdkClient
from shikoku_sdk import RandomPlayer
from tests.e2e.api import (
    PASS,
    Client,
    System,
    auth,
    document,
    expect_error,
    open_table,
    started_table,
)
from tests.e2e.launch import start_system, stop_system
from tests.e2e.test_players import register
from tests.scale import scaled

pytestmark = pytest.mark.e2e

CLOCKED = "tables:clocked"  # the lobby's set of clocked tables that have started
#: Players of the two-round tournament, in tables of four: two tables a round, six in `make soak`.
TOURNAMENT_PLAYERS = 4 * min(6, scaled(2))
TABLES = 20  # of 2 players: StartRound's games take a while to start, room for a kill midway


def play_table(system: System, game_id: str, credentials: dict[int, str], seed: int) -> int:
    with SdkClient(system.gateway, api_key=system.api_key) as client:
        seats = {seat: client.with_credential(token) for seat, token in credentials.items()}
        return RandomPlayer(game_id, seats, seed).play()


def wait_for(check: object, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_a_two_round_tournament(system: System, client: Client) -> None:
    host = register(client, "Director", host=True)
    entrants = {
        p.player_id: p for p in (register(client, f"Player {n}") for n in range(TOURNAMENT_PLAYERS))
    }
    created = client.lobby.CreateTournament(
        lobby_pb2.CreateTournamentRequest(
            name="Shikoku Open",
            player_ids=list(entrants),
            table_size=4,
            rounds=2,
            first_round=lobby_pb2.SEATING_METHOD_RANDOM,
            # Spectators see each game 3 actions behind, and all of it once it has ended.
            table_options=lobby_pb2.TableOptions(spectator_delay_actions=3),
        ),
        metadata=auth(host.credential),
    )
    tournament_id = created.tournament_id
    expect_error(  # players do not run tournaments
        lambda: client.lobby.StartRound(
            lobby_pb2.StartRoundRequest(tournament_id=tournament_id),
            metadata=auth(next(iter(entrants.values())).credential),
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_HOST",
    )
    for number in (1, 2):
        started = client.lobby.StartRound(
            lobby_pb2.StartRoundRequest(tournament_id=tournament_id),
            metadata=auth(host.credential),
        )
        round_ = started.rounds[-1]
        assert round_.number == number and len(round_.tables) == TOURNAMENT_PLAYERS // 4
        assert sorted(p for t in round_.tables for p in t.player_ids) == sorted(entrants)
        listed = client.lobby.ListTables(
            lobby_pb2.ListTablesRequest(page_size=200, tournament_id=tournament_id)
        ).tables
        assert {t.table_id for t in listed} == {
            t.table_id for r in started.rounds for t in r.tables
        }
        assert all(t.options.spectator_delay_actions == 3 for t in listed)
        jobs = []
        for index, table in enumerate(round_.tables):
            credentials = {
                seat: entrants[player_id].credential
                for seat, player_id in enumerate(table.player_ids, start=1)
            }
            jobs.append((table.table_id, credentials, 100 * number + index))
        with ThreadPoolExecutor(3) as pool:
            taken = list(pool.map(lambda job: play_table(system, *job), jobs))
        assert all(actions > 50 for actions in taken)

        def recorded(number: int = number) -> bool:
            request = lobby_pb2.GetTournamentRequest(tournament_id=tournament_id)
            return client.lobby.GetTournament(request).rounds[number - 1].finished

        wait_for(recorded)

    final = client.lobby.GetTournament(lobby_pb2.GetTournamentRequest(tournament_id=tournament_id))
    assert final.round_count == 2 and final.finished
    expect_error(  # two rounds played: no third
        lambda: client.lobby.StartRound(
            lobby_pb2.StartRoundRequest(tournament_id=tournament_id),
            metadata=auth(host.credential),
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TOURNAMENT_OVER",
    )
    # Each recorded result is the game's own final net worths.
    for round_ in final.rounds:
        for table in round_.tables:
            state = document(
                client.game.GetState(game_pb2.GetStateRequest(game_id=table.table_id)).state
            )
            by_seat = {n["seat"]: n["net_worth"] for n in state["result"]["net_worths"]}
            expected = {p: by_seat[seat] for seat, p in enumerate(table.player_ids, start=1)}
            assert dict(table.net_worths) == expected
            assert table.end_reason == state["result"]["reason"]
    # Standings: four points for a table's richest down to one, summed over both rounds.
    points: dict[str, float] = dict.fromkeys(entrants, 0.0)
    for round_ in final.rounds:
        for table in round_.tables:
            worths = dict(table.net_worths)
            for player_id, worth in worths.items():
                above = sum(1 for w in worths.values() if w > worth)
                tied = sum(1 for w in worths.values() if w == worth)
                shared = [len(worths) - rank for rank in range(above, above + tied)]
                points[player_id] += sum(shared) / tied
    standings = list(final.standings)
    assert {s.player_id: s.points for s in standings} == pytest.approx(points)
    assert [s.points for s in standings] == sorted((s.points for s in standings), reverse=True)
    assert all(s.games == 2 for s in standings)
    exported = client.lobby.ExportStandings(
        lobby_pb2.ExportStandingsRequest(
            tournament_id=tournament_id, format=lobby_pb2.STANDINGS_FORMAT_CSV
        )
    )
    rows = list(csv.DictReader(io.StringIO(exported.content)))
    assert [row["player_id"] for row in rows] == [s.player_id for s in standings]


def test_a_round_whose_lobby_was_killed_midway_is_finished_by_the_retry(redis_url: str) -> None:
    """The lobby process is SIGKILLed while StartRound starts the round's games; `shikoku run`
    starts it again, and the SDK's retry of the call (the same request id) finishes the round:
    one round, each of its tables made and started once, none left over. A new StartRound
    answers the same round."""
    system = start_system(redis_url, SHIKOKU_RATE_PER_SECOND="10000", SHIKOKU_RATE_BURST="10000")
    client = Client(system)
    try:
        host = register(client, "Director", host=True)
        entrants = [register(client, f"Player {n}").player_id for n in range(TABLES * 2)]
        clock = lobby_pb2.ClockOptions(
            bank_seconds=600, increment_seconds=10, policy=lobby_pb2.CLOCK_POLICY_FLAG
        )
        tournament_id = client.lobby.CreateTournament(
            lobby_pb2.CreateTournamentRequest(
                name="Kill Cup",
                player_ids=entrants,
                table_size=2,
                table_options=lobby_pb2.TableOptions(clock=clock),
            ),
            metadata=auth(host.credential),
        ).tournament_id
        (lobby,) = (
            process
            for process in psutil.Process(system.process.pid).children()
            if "services.lobby.shell.server" in process.cmdline()
        )
        with (
            SdkClient(system.gateway, api_key=system.api_key, attempts=12) as sdk,
            ThreadPoolExecutor(1) as pool,
        ):
            director = sdk.with_credential(host.credential)
            answer = pool.submit(director.start_round, tournament_id)
            # Stopped as soon as a table of the round is started (its clock watched), counted,
            # then killed.
            deadline = time.monotonic() + 30
            while not client.redis.scard(CLOCKED) and time.monotonic() < deadline:
                time.sleep(0.001)
            lobby.send_signal(signal.SIGSTOP)
            started_when_killed = int(client.redis.scard(CLOCKED))
            lobby.kill()
            lobby.wait(10)
            started = answer.result(timeout=120)
            again = director.start_round(tournament_id)
        assert 0 < started_when_killed < TABLES, "the kill came after the round was done"
        (round_,) = started.rounds
        table_ids = [table.table_id for table in round_.tables]
        assert len(table_ids) == TABLES and all(table_ids) and again == started
        assert sorted(p for table in round_.tables for p in table.player_ids) == sorted(entrants)
        for table_id in table_ids:
            events = cast(Entries, client.redis.xrange(stream_key("table", table_id)))
            kinds = [fields[b"t"] for _id, fields in events]
            assert kinds == [b"TableCreated", b"SeatTaken", b"SeatTaken", b"TableStarted"]
            game = cast(Entries, client.redis.xrange(stream_key("game", table_id), count=1))
            assert game[0][1][b"t"] == b"GameCreated"
        listed = cast(list[bytes], client.redis.zrange("tables:index", 0, -1))
        clocked = cast(set[bytes], client.redis.smembers(CLOCKED))
        assert sorted(m.decode() for m in listed) == sorted(table_ids)  # none left over
        assert sorted(m.decode() for m in clocked) == sorted(table_ids)
        assert any("lobby exited (signal 9)" in line for line in system.output)
    finally:
        client.channel.close()
        client.redis.close()
        stop_system(system)


@pytest.mark.parametrize("policy", [lobby_pb2.CLOCK_POLICY_FLAG, lobby_pb2.CLOCK_POLICY_FORFEIT])
def test_a_clock_running_out(client: Client, policy: lobby_pb2.ClockPolicy.ValueType) -> None:
    clock = lobby_pb2.ClockOptions(bank_seconds=1, increment_seconds=0, policy=policy)
    options = lobby_pb2.TableOptions(fixed_seat_order=True, clock=clock)
    created = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=2, options=options))
    table_id = created.table.table_id
    for name in ("Slow", "Fast"):
        client.lobby.JoinTable(lobby_pb2.JoinTableRequest(table_id=table_id, player_name=name))
    client.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(created.host_token)
    )

    def ran_out() -> bool:
        table = client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id))
        return table.seats[0].ran_out != ""

    wait_for(ran_out, 15)
    table = client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id))
    state = document(client.game.GetState(game_pb2.GetStateRequest(game_id=table_id)).state)
    if policy == lobby_pb2.CLOCK_POLICY_FLAG:
        assert table.seats[0].ran_out == "flagged" and table.seats[1].ran_out == ""
        assert state["result"] is None  # the game goes on
    else:
        assert table.seats[0].ran_out == "forfeited"
        assert state["result"]["reason"] == "ended"


def test_a_table_shows_each_seats_clock(client: Client) -> None:
    clock = lobby_pb2.ClockOptions(
        bank_seconds=600, increment_seconds=5, policy=lobby_pb2.CLOCK_POLICY_FLAG
    )
    options = lobby_pb2.TableOptions(fixed_seat_order=True, clock=clock)
    table_id, tokens, host_token = open_table(client, 2, options)
    before = client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id))
    assert not before.seats[0].HasField("clock")  # no game, no clock yet
    client.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(host_token)
    )
    time.sleep(0.3)
    first, second = client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id)).seats
    assert first.clock.running and not second.clock.running  # seat 1 opens the auction
    assert 300 <= first.clock.used_ms < 600_000
    assert first.clock.remaining_ms == 600_000 - first.clock.used_ms
    assert second.clock.remaining_ms == 600_000 and second.clock.used_ms == 0
    assert abs(first.clock.as_of_ms - time.time() * 1000) < 10_000

    client.game.SubmitCommand(
        game_pb2.SubmitCommandRequest(game_id=table_id, command=PASS), metadata=auth(tokens[0])
    )
    first, second = client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id)).seats
    assert second.clock.running and not first.clock.running
    assert first.clock.remaining_ms == 600_000  # the increment pays the turn back, to the bank


def test_spectators_kept_behind_do_not_see_whose_clock_runs(client: Client) -> None:
    clock = lobby_pb2.ClockOptions(
        bank_seconds=600, increment_seconds=0, policy=lobby_pb2.CLOCK_POLICY_FLAG
    )
    options = lobby_pb2.TableOptions(clock=clock, spectator_delay_actions=2)
    table_id, tokens, host_token = started_table(client, 2, options)
    request = lobby_pb2.GetTableRequest(table_id=table_id)
    assert not any(seat.HasField("clock") for seat in client.lobby.GetTable(request).seats)
    for credential in (tokens[1], host_token):  # the table's own see the clocks
        seats = client.lobby.GetTable(request, metadata=auth(credential)).seats
        assert all(seat.HasField("clock") for seat in seats)
        assert sum(seat.clock.running for seat in seats) == 1
