"""Every access rule of the public API, through the real gateway: for each, a caller it lets
through and callers it refuses, with the reason a client sees. A refused call writes nothing."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from infra.config import redis_client
from infra.eventstore import EventStore, NewEvent
from services.lobby.domain import players
from services.lobby.shell.accounts import SCHEMA
from services.lobby.shell.credentials import credential_hash, new_credential
from shikoku.v1 import game_pb2, lobby_pb2, lobby_pb2_grpc
from shikoku_sdk.channel import keyed_channel
from tests.e2e.api import PASS, Client, System, auth, expect_error, started_table
from tests.e2e.launch import SHIKOKU, issue_api_key

pytestmark = pytest.mark.e2e

UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
DENIED = grpc.StatusCode.PERMISSION_DENIED
INVALID = grpc.StatusCode.INVALID_ARGUMENT


@dataclass
class World:
    """Two running games (A and B), a table not yet started (C), a table closed to spectators
    (D, running), registered players and a tournament."""

    client: Client
    game_a: str
    seats_a: list[str]
    host_a: str
    game_b: str
    seats_b: list[str]
    host_b: str
    table_c: str
    seats_c: list[str]
    host_c: str
    game_d: str
    seats_d: list[str]
    host: str  # a registered host
    other_host: str
    player: str  # a registered player seated nowhere
    revoked: str  # a registered player whose credential was revoked
    expired: str  # a registered player whose credential has expired
    tournament: str  # the registered host's

    def credential(self, name: str) -> str:
        if name == "seat A out of turn":
            acting = acting_seat(self, self.game_a)
            return next(t for n, t in enumerate(self.seats_a, start=1) if n != acting)
        return {
            "anonymous": "",
            "garbage": "t-nothing~not-a-credential",
            "seat A1": self.seats_a[0],
            "host A": self.host_a,
            "seat B1": self.seats_b[0],
            "host B": self.host_b,
            "seat C1": self.seats_c[0],
            "host C": self.host_c,
            "seat D1": self.seats_d[0],
            "registered host": self.host,
            "other registered host": self.other_host,
            "registered player": self.player,
            "revoked player": self.revoked,
            "expired player": self.expired,
        }[name]


def expired_player(redis_url: str) -> str:
    """The credential of a player who registered longer ago than credentials last (written to
    the lobby's store as registering then would have: the servers' clocks cannot be moved)."""
    player_id = f"p-{secrets.token_hex(6)}"
    credential = new_credential(player_id)
    long_ago = int(time.time() * 1000) - (players.CREDENTIAL_DAYS + 1) * 24 * 3600 * 1000
    events = players.register(player_id, "Late", "player", credential_hash(credential), long_ago)

    async def store() -> None:
        redis = redis_client(redis_url)
        await EventStore(redis, "player").append(
            player_id, 0, [NewEvent(kind, SCHEMA, data) for kind, data in events]
        )
        await redis.aclose()

    asyncio.run(store())
    return credential


def register(client: Client, name: str, host: bool = False) -> lobby_pb2.RegisterPlayerResponse:
    role = lobby_pb2.ROLE_HOST if host else lobby_pb2.ROLE_PLAYER
    return client.lobby.RegisterPlayer(
        lobby_pb2.RegisterPlayerRequest(display_name=name, role=role)
    )


@pytest.fixture(scope="module")
def world(system: System) -> Iterator[World]:
    client = Client(system)
    game_a, seats_a, host_a = started_table(client)
    game_b, seats_b, host_b = started_table(client)
    created = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=3))
    table_c = created.table.table_id
    seats_c = [
        client.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=table_c, player_name=f"c{n}")
        ).seat_token
        for n in (1, 2, 3)
    ]
    closed = client.lobby.CreateTable(
        lobby_pb2.CreateTableRequest(
            seat_count=2, options=lobby_pb2.TableOptions(closed_to_spectators=True)
        )
    )
    seats_d = [
        client.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=closed.table.table_id, player_name=f"d{n}")
        ).seat_token
        for n in (1, 2)
    ]
    game_d = client.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=closed.table.table_id),
        metadata=auth(closed.host_token),
    ).game_id
    host, other_host = register(client, "Director", host=True), register(client, "Other", True)
    entrants = [register(client, f"entrant {n}").player_id for n in range(3)]
    tournament = client.lobby.CreateTournament(
        lobby_pb2.CreateTournamentRequest(name="Cup", player_ids=entrants, table_size=3),
        metadata=auth(host.credential),
    )
    revoked = register(client, "Gone").credential
    client.lobby.RevokeCredential(lobby_pb2.RevokeCredentialRequest(), metadata=auth(revoked))
    yield World(
        client,
        game_a,
        seats_a,
        host_a,
        game_b,
        seats_b,
        host_b,
        table_c,
        seats_c,
        created.host_token,
        game_d,
        seats_d,
        host.credential,
        other_host.credential,
        register(client, "Loner").credential,
        revoked,
        expired_player(system.redis_url),
        tournament.tournament_id,
    )
    client.channel.close()
    client.redis.close()


def act(world: World, credential: str, game_id: str = "") -> object:
    request = game_pb2.SubmitCommandRequest(game_id=game_id or world.game_a, command=PASS)
    return world.client.game.SubmitCommand(request, metadata=auth(credential))


def acting_seat(world: World, game_id: str) -> int:
    legal = world.client.game.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id=game_id), metadata=auth(world.seats_a[0])
    )
    return legal.actions[0].seat


Call = Callable[[World, str], object]

REFUSALS: list[tuple[str, Call, str, grpc.StatusCode, str]] = [
    # Acting in a game: only a seat of that game, for itself.
    ("act", act, "anonymous", UNAUTHENTICATED, "MISSING_CREDENTIAL"),
    ("act", act, "garbage", UNAUTHENTICATED, "INVALID_CREDENTIAL"),
    ("act", act, "revoked player", UNAUTHENTICATED, "CREDENTIAL_EXPIRED_OR_REVOKED"),
    ("act", act, "expired player", UNAUTHENTICATED, "CREDENTIAL_EXPIRED_OR_REVOKED"),
    ("act", act, "host A", DENIED, "NOT_A_SEAT"),
    ("act", act, "registered player", DENIED, "NOT_A_SEAT"),
    ("act", act, "seat B1", DENIED, "WRONG_TABLE"),
    ("act", act, "seat A out of turn", grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN"),
    (
        "act on a table not started",
        lambda w, c: act(w, c, w.table_c),
        "seat C1",
        DENIED,
        "NOT_YOUR_GAME",
    ),
    # Administering a table: only its host.
    (
        "start",
        lambda w, c: w.client.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=w.table_c), metadata=auth(c)
        ),
        "seat C1",
        DENIED,
        "NOT_HOST",
    ),
    (
        "start",
        lambda w, c: w.client.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=w.table_c), metadata=auth(c)
        ),
        "host A",
        DENIED,
        "WRONG_TABLE",
    ),
    (
        "end",
        lambda w, c: w.client.lobby.EndGame(
            lobby_pb2.EndGameRequest(table_id=w.game_a), metadata=auth(c)
        ),
        "anonymous",
        UNAUTHENTICATED,
        "MISSING_CREDENTIAL",
    ),
    (
        "abandon",
        lambda w, c: w.client.lobby.AbandonTable(
            lobby_pb2.AbandonTableRequest(table_id=w.game_a), metadata=auth(c)
        ),
        "seat A1",
        DENIED,
        "NOT_HOST",
    ),
    (
        "replace a seat",
        lambda w, c: w.client.lobby.ReplaceSeat(
            lobby_pb2.ReplaceSeatRequest(table_id=w.game_a, seat=1, player_id="p-x"),
            metadata=auth(c),
        ),
        "registered host",
        DENIED,
        "NOT_HOST",
    ),
    # A seat's own business: only its holder.
    (
        "ready",
        lambda w, c: w.client.lobby.SetReady(
            lobby_pb2.SetReadyRequest(table_id=w.table_c, ready=True), metadata=auth(c)
        ),
        "host C",
        DENIED,
        "NOT_A_SEAT",
    ),
    (
        "leave",
        lambda w, c: w.client.lobby.LeaveTable(
            lobby_pb2.LeaveTableRequest(table_id=w.table_c), metadata=auth(c)
        ),
        "seat A1",
        DENIED,
        "WRONG_TABLE",
    ),
    # Watching a table closed to spectators: only its seats and host.
    (
        "watch a closed table",
        lambda w, c: w.client.game.GetState(
            game_pb2.GetStateRequest(game_id=w.game_d), metadata=auth(c)
        ),
        "anonymous",
        DENIED,
        "CLOSED_TO_SPECTATORS",
    ),
    (
        "list a closed table's actions",
        lambda w, c: w.client.game.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id=w.game_d), metadata=auth(c)
        ),
        "seat A1",
        DENIED,
        "CLOSED_TO_SPECTATORS",
    ),
    # Tournaments: created by registered hosts, run by their own host.
    (
        "create a tournament",
        lambda w, c: w.client.lobby.CreateTournament(
            lobby_pb2.CreateTournamentRequest(name="x", table_size=3), metadata=auth(c)
        ),
        "registered player",
        DENIED,
        "NOT_HOST",
    ),
    (
        "start a round",
        lambda w, c: w.client.lobby.StartRound(
            lobby_pb2.StartRoundRequest(tournament_id=w.tournament), metadata=auth(c)
        ),
        "other registered host",
        DENIED,
        "NOT_HOST",
    ),
    (
        "revoke",
        lambda w, c: w.client.lobby.RevokeCredential(
            lobby_pb2.RevokeCredentialRequest(), metadata=auth(c)
        ),
        "anonymous",
        UNAUTHENTICATED,
        "MISSING_CREDENTIAL",
    ),
    # A request that names nothing is malformed, whoever sends it.
    (
        "act without a game",
        lambda w, c: w.client.game.SubmitCommand(
            game_pb2.SubmitCommandRequest(command=PASS), metadata=auth(c)
        ),
        "seat A1",
        INVALID,
        "MISSING_GAME_ID",
    ),
    (
        "start without a table",
        lambda w, c: w.client.lobby.StartTable(lobby_pb2.StartTableRequest(), metadata=auth(c)),
        "host A",
        INVALID,
        "MISSING_TABLE_ID",
    ),
]


@pytest.mark.parametrize(
    ("what", "call", "who", "code", "reason"),
    REFUSALS,
    ids=[f"{what}: {who}" for what, _c, who, _s, _r in REFUSALS],
)
def test_refused(
    world: World, what: str, call: Call, who: str, code: grpc.StatusCode, reason: str
) -> None:
    before = {game: world.client.stream_length(game) for game in (world.game_a, world.game_b)}
    expect_error(lambda: call(world, world.credential(who)), code, reason)
    after = {game: world.client.stream_length(game) for game in before}
    assert after == before, f"{what} by {who} was refused but wrote events"


def test_a_seat_acts_for_itself_in_turn(world: World) -> None:
    seat = acting_seat(world, world.game_a)
    before = world.client.stream_length(world.game_a)
    act(world, world.seats_a[seat - 1])
    assert world.client.stream_length(world.game_a) > before
    # A registered player's own credential acts for their seat too (tests/e2e/test_players.py).


def test_the_host_administers_and_seats_mind_their_own(world: World) -> None:
    lobby = world.client.lobby
    ready = lobby.SetReady(
        lobby_pb2.SetReadyRequest(table_id=world.table_c, ready=False),
        metadata=auth(world.seats_c[0]),
    )
    assert not ready.seats[0].ready
    left = lobby.LeaveTable(
        lobby_pb2.LeaveTableRequest(table_id=world.table_c), metadata=auth(world.seats_c[1])
    )
    assert sum(seat.player_name != "" for seat in left.seats) == 2
    started = lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=world.table_c), metadata=auth(world.host_c)
    )
    assert started.game_id == world.table_c


def test_a_closed_table_shows_itself_to_its_seats(world: World) -> None:
    state = world.client.game.GetState(
        game_pb2.GetStateRequest(game_id=world.game_d), metadata=auth(world.seats_d[0])
    )
    assert state.version > 0
    # ...and an open table to anyone.
    assert world.client.game.GetState(game_pb2.GetStateRequest(game_id=world.game_b)).version


def test_tournaments_are_run_by_their_host(world: World) -> None:
    started = world.client.lobby.StartRound(
        lobby_pb2.StartRoundRequest(tournament_id=world.tournament), metadata=auth(world.host)
    )
    assert len(started.rounds) == 1 and started.rounds[0].tables


def test_api_keys(system: System) -> None:
    """Every call needs a key; unknown and revoked keys are refused; health checks need none."""
    listing = lobby_pb2.ListTablesRequest(page_size=1)

    def list_with(api_key: str) -> object:
        with keyed_channel(system.gateway, api_key) as channel:
            return lobby_pb2_grpc.LobbyServiceStub(channel).ListTables(listing, timeout=10)

    assert list_with(system.api_key) is not None
    with grpc.insecure_channel(system.gateway) as bare:
        health = health_pb2_grpc.HealthStub(bare).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    expect_error(lambda: list_with(""), UNAUTHENTICATED, "MISSING_API_KEY")
    expect_error(lambda: list_with("k-000000000000.nope"), UNAUTHENTICATED, "INVALID_API_KEY")
    expect_error(lambda: list_with("not a key"), UNAUTHENTICATED, "INVALID_API_KEY")
    key = issue_api_key(system.redis_url, "short-lived")
    key_id = key.split(".")[0]
    subprocess.run(
        [str(SHIKOKU), "api-key", "revoke", key_id],
        env=dict(os.environ, REDIS_URL=system.redis_url),
        check=True,
        capture_output=True,
    )
    expect_error(lambda: list_with(key), UNAUTHENTICATED, "API_KEY_REVOKED")


def test_a_credential_sent_where_none_is_needed_is_still_checked(world: World) -> None:
    listing = lobby_pb2.ListTablesRequest(page_size=1)
    assert world.client.lobby.ListTables(listing, metadata=auth(world.seats_a[0])).tables
    expect_error(
        lambda: world.client.lobby.ListTables(listing, metadata=auth("t-nothing~forged")),
        UNAUTHENTICATED,
        "INVALID_CREDENTIAL",
    )
    expect_error(
        lambda: world.client.lobby.GetTable(
            lobby_pb2.GetTableRequest(table_id=world.game_a), metadata=auth(world.revoked)
        ),
        UNAUTHENTICATED,
        "CREDENTIAL_EXPIRED_OR_REVOKED",
    )


def test_only_keys_the_operator_allows_register_hosts(system: System) -> None:
    """A host runs tables and tournaments: registering as one takes an application key issued
    with --hosts; any key registers players."""

    def register_with(api_key: str, role: lobby_pb2.Role.ValueType) -> object:
        with keyed_channel(system.gateway, api_key) as channel:
            request = lobby_pb2.RegisterPlayerRequest(display_name="Someone", role=role)
            return lobby_pb2_grpc.LobbyServiceStub(channel).RegisterPlayer(request, timeout=10)

    players_only = issue_api_key(system.redis_url, "a player app")
    assert register_with(players_only, lobby_pb2.ROLE_PLAYER) is not None
    expect_error(
        lambda: register_with(players_only, lobby_pb2.ROLE_HOST),
        grpc.StatusCode.PERMISSION_DENIED,
        "HOSTS_NOT_ALLOWED",
    )
    for_hosts = issue_api_key(system.redis_url, "the venue's app", "--hosts")
    assert register_with(for_hosts, lobby_pb2.ROLE_HOST) is not None
