"""Turn notifications on the whole system (`shikoku run`, real processes): registered players
set a webhook on a local receiver (loopback allowed for the test only), play a whole game with
the SDK's random player, and each is told `game_started`, `your_turn` once for each time their
seat came to act, and `game_ended`; every message signed under that player's secret and
carrying an id the receiver can deduplicate by."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from shikoku.v1 import game_pb2, lobby_pb2
from shikoku_sdk import Client as SdkClient
from shikoku_sdk import RandomPlayer
from tests.e2e.api import Client, System, auth
from tests.e2e.launch import start_system, stop_system

pytestmark = pytest.mark.e2e

SEATS = 3
ARRIVAL_SECONDS = 30.0
#: Turns the players wait to be told of before acting (then the bot plays at its own speed).
WAITED_TURNS = 6
#: Within one version: the start is told before a turn, a turn before the end.
ORDER = {"game_started": 0, "your_turn": 1, "game_ended": 2}


class Hook(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def receiver() -> Iterator[tuple[str, list[tuple[dict[str, str], bytes]]]]:
    received: list[tuple[dict[str, str], bytes]] = []
    handler = type("Recording", (Hook,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    server.shutdown()


@pytest.fixture(scope="module")
def system(redis_url: str) -> Iterator[System]:
    # Reading the game back at every version is hundreds of calls: above the default limits.
    system = start_system(
        redis_url,
        SHIKOKU_WEBHOOK_ALLOW_LOOPBACK="1",
        SHIKOKU_RATE_PER_SECOND="10000",
        SHIKOKU_RATE_BURST="10000",
    )
    yield system
    stop_system(system)


@pytest.fixture
def client(system: System) -> Iterator[Client]:
    client = Client(system)
    yield client
    client.channel.close()
    client.redis.close()


class Inbox:
    """What the receiver has been sent, as documents."""

    def __init__(self, received: list[tuple[dict[str, str], bytes]]) -> None:
        self._received = received

    def told(self, event: str, player_id: str, least: int) -> bool:
        return any(
            m["event"] == event and m["player_id"] == player_id and m["version"] >= least
            for m in (json.loads(body) for _, body in list(self._received))
        )

    def wait_for(self, event: str, player_id: str, least: int = 0) -> None:
        """Until `player_id` is told `event` of a version `least` or later."""
        deadline = time.monotonic() + ARRIVAL_SECONDS
        while not self.told(event, player_id, least):
            assert time.monotonic() < deadline, f"{player_id} never told {event} (>= {least})"
            time.sleep(0.05)


def turns_came(client: Client, game_id: str, reader_token: str) -> dict[int, int]:
    """How many times each seat came to act: versions where it acts and did not just before
    (one GetState a version, as one of the game's seats)."""
    came: dict[int, int] = {}
    acting_before: set[int] = set()
    for version in range(1, client.stream_length(game_id) + 1):
        state = client.game.GetState(
            game_pb2.GetStateRequest(game_id=game_id, version=version),
            metadata=auth(reader_token),
        )
        acting = set(state.acting_seats)
        for seat in acting - acting_before:
            came[seat] = came.get(seat, 0) + 1
        acting_before = acting
    return came


def test_each_player_is_told_of_the_start_each_turn_once_and_the_end(
    system: System, client: Client, receiver: tuple[str, list[tuple[dict[str, str], bytes]]]
) -> None:
    url, received = receiver
    players = [
        client.lobby.RegisterPlayer(lobby_pb2.RegisterPlayerRequest(display_name=f"P{n}"))
        for n in range(1, SEATS + 1)
    ]
    secrets = {}
    for player in players:
        target = client.lobby.SetNotificationTarget(
            lobby_pb2.SetNotificationTargetRequest(
                url=url, format=lobby_pb2.NOTIFICATION_FORMAT_GENERIC
            ),
            metadata=auth(player.credential),
        )
        assert target.url == url and len(target.secret) >= 32
        secrets[player.player_id] = target.secret.encode()
    created = client.lobby.CreateTable(
        lobby_pb2.CreateTableRequest(
            seat_count=SEATS, options=lobby_pb2.TableOptions(fixed_seat_order=True)
        )
    )
    table_id = created.table.table_id
    seat_of = {}
    for seat, player in enumerate(players, 1):
        client.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=table_id, player_name=f"P{seat}", seat=seat),
            metadata=auth(player.credential),
        )
        seat_of[player.player_id] = seat

    game_id = client.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(created.host_token)
    ).game_id

    inbox = Inbox(received)
    player_at = {seat: player_id for player_id, seat in seat_of.items()}
    for player in players:
        inbox.wait_for("game_started", player.player_id)
    with SdkClient(system.gateway, api_key=system.api_key) as sdk:
        seats = {seat_of[p.player_id]: sdk.with_credential(p.credential) for p in players}
        bot = RandomPlayer(game_id, seats, seed=5)
        # As people play: a seat that comes to act is told so before it acts, for the first
        # turns; then the bot plays the game out at its own speed.
        acting_since: dict[int, int] = {}
        waited = 0
        versions = [client.stream_length(game_id)]
        while True:
            acting = sdk.state(game_id).acting_seats
            acting_since = {seat: acting_since.get(seat, versions[-1]) for seat in acting}
            for seat, since in acting_since.items():
                if waited < WAITED_TURNS:
                    inbox.wait_for("your_turn", player_at[seat], since)
                    waited += 1
            if not bot.step(lambda answer, _seconds: versions.append(answer.version)):
                break
    for player in players:
        inbox.wait_for("game_ended", player.player_id)
    time.sleep(1.0)  # anything late would come now
    ours = [(headers, body) for headers, body in list(received) if b'"' + game_id.encode() in body]
    documents = [json.loads(body) for _, body in ours]
    for headers, body in ours:
        document = json.loads(body)
        expected = hmac.new(secrets[document["player_id"]], body, hashlib.sha256).hexdigest()
        assert headers["x-shikoku-signature"] == f"sha256={expected}"
        assert document["game_id"] == game_id and document["table_id"] == table_id
        # The board page of the game on this system's web entrypoint (the page keeps the key).
        assert document["link"] == f"http://{system.web}/?game={game_id}"
    ids = [d["notification_id"] for d in documents]
    unique = {d["notification_id"]: d for d in documents}  # at least once: a repeat keeps its id
    assert len(unique) >= len(set(seat_of)) * 2
    came = turns_came(client, game_id, players[0].credential)
    for player in players:
        mine = [d for d in unique.values() if d["player_id"] == player.player_id]
        in_order = sorted(mine, key=lambda d: (d["version"], ORDER[d["event"]]))
        events = [d["event"] for d in in_order]
        assert events[0] == "game_started", events
        assert events[-1] == "game_ended", events
        turns = [d for d in mine if d["event"] == "your_turn"]
        assert turns, events
        for turn in turns:  # told only when the seat must act
            state = client.game.GetState(
                game_pb2.GetStateRequest(game_id=game_id, version=turn["version"]),
                metadata=auth(player.credential),
            )
            assert seat_of[player.player_id] in state.acting_seats, turn
        # no storm: never more than once per time the seat came to act
        assert len(turns) <= came.get(seat_of[player.player_id], 0)
    assert len(ids) - len(unique) <= len(unique) // 10  # repeats are the exception


class Refusing(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(500)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_receiver_that_fails_is_retried_and_its_host_sees_the_failures(
    client: Client,
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host = client.lobby.RegisterPlayer(
            lobby_pb2.RegisterPlayerRequest(display_name="Director", role=lobby_pb2.ROLE_HOST)
        )
        players = [
            client.lobby.RegisterPlayer(lobby_pb2.RegisterPlayerRequest(display_name=name))
            for name in ("Failing", "Quiet")
        ]
        client.lobby.SetNotificationTarget(
            lobby_pb2.SetNotificationTargetRequest(
                url=f"http://127.0.0.1:{server.server_address[1]}/hook",
                format=lobby_pb2.NOTIFICATION_FORMAT_SLACK,
            ),
            metadata=auth(players[0].credential),
        )
        tournament = client.lobby.CreateTournament(
            lobby_pb2.CreateTournamentRequest(
                name="Failing hooks", player_ids=[p.player_id for p in players], table_size=2
            ),
            metadata=auth(host.credential),
        )
        client.lobby.StartRound(
            lobby_pb2.StartRoundRequest(tournament_id=tournament.tournament_id),
            metadata=auth(host.credential),
        )
        request = lobby_pb2.GetNotificationHealthRequest(tournament_id=tournament.tournament_id)
        deadline = time.monotonic() + ARRIVAL_SECONDS
        while True:
            health = {
                h.player_id: h
                for h in client.lobby.GetNotificationHealth(
                    request, metadata=auth(host.credential)
                ).players
            }
            failing = health[players[0].player_id]
            if failing.failed_attempts >= 2:  # tried, and tried again
                break
            assert time.monotonic() < deadline, failing
            time.sleep(0.2)
        assert failing.has_target and failing.format == lobby_pb2.NOTIFICATION_FORMAT_SLACK
        assert "500" in failing.last_error and failing.last_error_at_ms > 0
        assert failing.delivered == 0
        quiet = health[players[1].player_id]
        assert not quiet.has_target and quiet.failed_attempts == 0
        assert quiet.display_name == "Quiet"
    finally:
        server.shutdown()
