"""Tournament day through the gateway: a two-round tournament of tables of two watched by the
host's WatchTournament (a table's update within a second of a command, the next round), each
player's WatchPlayer (their live table, whose turn), the game-players record, ForfeitSeat on a
seat whose clock ran out (last at its table), and StartRound after the last round."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

import grpc
import pytest

from services.projections.game_summaries import game_players_key
from shikoku.v1 import game_pb2, lobby_pb2
from tests.e2e.api import PASS, Client, auth, expect_error
from tests.e2e.launch import start_system, stop_system
from tests.e2e.test_players import register

pytestmark = pytest.mark.e2e


class Watch:
    """A server stream read on a thread of its own into a queue."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.items: queue.Queue[Any] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for item in self.stream:
                self.items.put(item)
        except grpc.RpcError:
            pass

    def next_that(self, check: Any, seconds: float) -> Any:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                item = self.items.get(timeout=left)
            except queue.Empty:
                break
            if check(item):
                return item
        raise AssertionError(f"nothing of the kind within {seconds} s")


@pytest.fixture
def watches() -> Iterator[list[Watch]]:
    opened: list[Watch] = []
    yield opened
    for watch in opened:
        watch.stream.cancel()


def test_a_host_watches_two_rounds_and_forfeits_seats_that_ran_out(
    client: Client, watches: list[Watch]
) -> None:
    host = register(client, "Director", host=True)
    entrants = {p.player_id: p for p in (register(client, f"Player {n}") for n in range(4))}
    clock = lobby_pb2.ClockOptions(bank_seconds=3, policy=lobby_pb2.CLOCK_POLICY_FLAG)
    created = client.lobby.CreateTournament(
        lobby_pb2.CreateTournamentRequest(
            name="Night Cup",
            player_ids=list(entrants),
            table_size=2,
            rounds=2,
            table_options=lobby_pb2.TableOptions(clock=clock),
        ),
        metadata=auth(host.credential),
    )
    assert created.round_count == 2 and not created.finished
    tournament_id = created.tournament_id
    watch = Watch(
        client.lobby.WatchTournament(
            lobby_pb2.WatchTournamentRequest(tournament_id=tournament_id, heartbeat_seconds=1)
        )
    )
    watches.append(watch)
    first = watch.next_that(lambda item: item.HasField("tournament"), 10)
    assert first.tournament.tournament_id == tournament_id and not first.tournament.rounds

    for number in (1, 2):
        request = lobby_pb2.StartRoundRequest(tournament_id=tournament_id)
        started = client.lobby.StartRound(request, metadata=auth(host.credential))
        again = client.lobby.StartRound(request, metadata=auth(host.credential))
        assert again.rounds == started.rounds and len(started.rounds) == number
        round_ = started.rounds[-1]
        seen = watch.next_that(
            lambda item, n=number: item.HasField("tournament") and len(item.tournament.rounds) == n,
            10,
        )
        assert [t.table_id for t in seen.tournament.rounds[-1].tables] == [
            t.table_id for t in round_.tables
        ]
        table = round_.tables[0]
        players = client.redis.hgetall(game_players_key(table.table_id))
        assert players == {
            b"table_id": table.table_id.encode(),
            b"tournament_id": tournament_id.encode(),
            b"round": str(number).encode(),
            b"seat:1": table.player_ids[0].encode(),
            b"seat:2": table.player_ids[1].encode(),
        }
        # Whose turn it is, on the player's own stream.
        acting = client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table.table_id))
        seat = acting.game.acting_seats[0]
        player = entrants[table.player_ids[seat - 1]]
        own = Watch(
            client.lobby.WatchPlayer(
                lobby_pb2.WatchPlayerRequest(), metadata=auth(player.credential)
            )
        )
        watches.append(own)
        mine = own.next_that(lambda item: len(item.tables) == 1, 10)
        assert mine.tables[0].table.table_id == table.table_id and mine.tables[0].your_turn
        assert mine.your_turn_count == 1 and mine.tables[0].seat == seat

        # A command: the host's watch shows the table moved within a second.
        before = acting.game.version
        submitted_at = time.monotonic()
        client.game.SubmitCommand(
            game_pb2.SubmitCommandRequest(game_id=table.table_id, command=PASS),
            metadata=auth(player.credential),
        )
        moved = watch.next_that(
            lambda item, t=table.table_id, v=before: (
                item.HasField("table") and item.table.table_id == t and item.table.game.version > v
            ),
            5,
        )
        assert time.monotonic() - submitted_at < 1.0
        assert moved.table.game.moved_at_ms > 0
        assert moved.table.seats[0].HasField("clock")  # as the host sees it
        own.next_that(lambda item: not item.tables or not item.tables[0].your_turn, 5)

        # Forfeits: refused while time is left, then for the seat that must act once it is out.
        time.sleep(3.5)  # the acting seats' banks have run out
        for each in round_.tables:
            now = client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=each.table_id))
            out = now.game.acting_seats[0]
            waiting = 3 - out
            refused = lobby_pb2.ForfeitSeatRequest(table_id=each.table_id, seat=waiting)
            expect_error(
                partial(client.lobby.ForfeitSeat, refused, metadata=auth(host.credential)),
                grpc.StatusCode.FAILED_PRECONDITION,
                "NOT_OUT_OF_TIME",
            )
            forfeited = client.lobby.ForfeitSeat(
                lobby_pb2.ForfeitSeatRequest(table_id=each.table_id, seat=out),
                metadata=auth(host.credential),
            )
            assert forfeited.seats[out - 1].ran_out == "forfeited"
        recorded = watch.next_that(
            lambda item, n=number: (
                item.HasField("tournament") and item.tournament.rounds[n - 1].finished
            ),
            15,
        )
        for result in recorded.tournament.rounds[-1].tables:
            assert len(result.forfeited) == 1 and result.end_reason == "forfeit"

    assert recorded.tournament.finished
    standings = recorded.tournament.standings
    last_place = {s.player_id for s in standings if s.points == min(p.points for p in standings)}
    assert last_place  # the forfeiting players share the bottom of each table
    expect_error(
        lambda: client.lobby.StartRound(
            lobby_pb2.StartRoundRequest(tournament_id=tournament_id),
            metadata=auth(host.credential),
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TOURNAMENT_OVER",
    )
    watch.next_that(lambda item: item.HasField("heartbeat"), 5)


def test_the_lobbys_streams_count_against_the_callers_stream_quota(redis_url: str) -> None:
    system = start_system(redis_url, SHIKOKU_STREAMS_PER_CALLER="2")
    client = Client(system)
    streams: list[Any] = []
    try:
        player = register(client, "Watcher")
        metadata = auth(player.credential)
        for _ in range(2):
            stream: Any = client.lobby.WatchPlayer(
                lobby_pb2.WatchPlayerRequest(), metadata=metadata
            )
            next(stream)  # open, and counted
            streams.append(stream)
        refused: Any = client.lobby.WatchTournament(
            lobby_pb2.WatchTournamentRequest(tournament_id="tn-none"), metadata=metadata
        )
        with pytest.raises(grpc.RpcError) as caught:
            next(refused)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        streams.pop().cancel()
        time.sleep(0.5)
        again: Any = client.lobby.WatchPlayer(lobby_pb2.WatchPlayerRequest(), metadata=metadata)
        assert next(again).your_turn_count == 0  # a closed stream gives its place back
        streams.append(again)
    finally:
        for stream in streams:
            stream.cancel()
        client.channel.close()
        client.redis.close()
        stop_system(system)
