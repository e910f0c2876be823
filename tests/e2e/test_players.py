"""Registered players and hosts through the gateway: credentials, seats, replacement."""

from __future__ import annotations

import time

import grpc
import pytest

from shikoku.v1 import game_pb2, lobby_pb2
from shikoku_sdk.errors import ShikokuError
from tests.e2e.api import PASS, Client, auth, document, expect_error

pytestmark = pytest.mark.e2e


def register(client: Client, name: str, host: bool = False) -> lobby_pb2.RegisterPlayerResponse:
    role = lobby_pb2.ROLE_HOST if host else lobby_pb2.ROLE_PLAYER
    return client.lobby.RegisterPlayer(
        lobby_pb2.RegisterPlayerRequest(display_name=name, role=role)
    )


def test_players_hosts_and_a_replaced_seat(client: Client) -> None:
    host = register(client, "Director", host=True)
    alice, bob, carol = (register(client, name) for name in ("Alice", "Bob", "Carol"))
    assert alice.credential.startswith(alice.player_id) and alice.expires_at_ms > 0
    created = client.lobby.CreateTable(
        lobby_pb2.CreateTableRequest(
            seat_count=2, options=lobby_pb2.TableOptions(fixed_seat_order=True)
        ),
        metadata=auth(host.credential),
    )
    table_id = created.table.table_id
    join = lobby_pb2.JoinTableRequest(table_id=table_id)
    seat_a = client.lobby.JoinTable(join, metadata=auth(alice.credential))
    assert seat_a.table.seats[0].player_name == "Alice"
    expect_error(  # one seat per player at a table
        lambda: client.lobby.JoinTable(join, metadata=auth(alice.credential)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SEAT_ALREADY_HELD",
    )
    client.lobby.JoinTable(join, metadata=auth(bob.credential))
    expect_error(  # a plain player is not the host
        lambda: client.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(bob.credential)
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_HOST",
    )
    # The registered host administers the table with their own credential.
    game_id = client.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(host.credential)
    ).game_id

    def submit(credential: str) -> game_pb2.SubmitCommandResponse:
        request = game_pb2.SubmitCommandRequest(game_id=game_id, command=PASS)
        return client.game.SubmitCommand(request, metadata=auth(credential))

    submit(alice.credential)  # a player's credential acts for their seat
    expect_error(
        lambda: submit(carol.credential),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_A_SEAT",
    )
    # Bob drops out: the host gives his seat to Carol.
    replaced = client.lobby.ReplaceSeat(
        lobby_pb2.ReplaceSeatRequest(table_id=table_id, seat=2, player_id=carol.player_id),
        metadata=auth(host.credential),
    )
    assert replaced.table.seats[1].player_name == "Carol"
    expect_error(lambda: submit(bob.credential), grpc.StatusCode.PERMISSION_DENIED, "NOT_A_SEAT")
    submit(carol.credential)
    state = document(client.game.GetState(game_pb2.GetStateRequest(game_id=game_id)).state)
    assert state["round"]["offer"][0]["price"] == 15  # both passed: the TR price drops

    client.lobby.RevokeCredential(
        lobby_pb2.RevokeCredentialRequest(), metadata=auth(alice.credential)
    )
    expect_error(
        lambda: submit(alice.credential),
        grpc.StatusCode.UNAUTHENTICATED,
        "CREDENTIAL_EXPIRED_OR_REVOKED",
    )
    expect_error(
        lambda: register(client, ""), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_DISPLAY_NAME"
    )


def test_a_table_starts_itself_when_every_seat_is_ready(client: Client) -> None:
    created = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=2))
    table_id = created.table.table_id
    tokens = [
        client.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=table_id, player_name=name)
        ).seat_token
        for name in ("Alice", "Bob")
    ]

    def ready(token: str, is_ready: bool = True) -> lobby_pb2.Table:
        request = lobby_pb2.SetReadyRequest(table_id=table_id, ready=is_ready)
        return client.lobby.SetReady(request, metadata=auth(token))

    table = ready(tokens[0])
    assert [s.ready for s in table.seats] == [True, False]
    assert table.status == lobby_pb2.TABLE_STATUS_OPEN
    assert not ready(tokens[0], False).seats[0].ready  # changed their mind
    ready(tokens[0])
    expect_error(  # a host token holds no seat
        lambda: ready(created.host_token),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_A_SEAT",
    )
    table = ready(tokens[1])
    assert table.status == lobby_pb2.TABLE_STATUS_STARTED and table.game_id
    state = client.game.GetState(game_pb2.GetStateRequest(game_id=table.game_id))
    assert len(document(state.state)["players"]) == 2
    expect_error(
        lambda: ready(tokens[0], False),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TABLE_STARTED",
    )


def test_the_host_abandons_a_running_table(client: Client) -> None:
    created = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=2))
    table_id, host_token = created.table.table_id, created.host_token
    tokens = [
        client.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=table_id, player_name=name)
        ).seat_token
        for name in ("Alice", "Bob")
    ]
    game_id = client.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(host_token)
    ).game_id
    abandon = lobby_pb2.AbandonTableRequest(table_id=table_id)
    expect_error(
        lambda: client.lobby.AbandonTable(abandon, metadata=auth(tokens[0])),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_HOST",
    )
    abandoned = client.lobby.AbandonTable(abandon, metadata=auth(host_token))
    assert abandoned.status == lobby_pb2.TABLE_STATUS_ABANDONED
    state = document(client.game.GetState(game_pb2.GetStateRequest(game_id=game_id)).state)
    assert state["result"]["reason"]
    length = client.stream_length(game_id)
    expect_error(  # the game is over: nothing more is written
        lambda: client.game.SubmitCommand(
            game_pb2.SubmitCommandRequest(game_id=game_id, command=PASS),
            metadata=auth(tokens[0]),
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "GAME_OVER",
    )
    assert client.stream_length(game_id) == length
    expect_error(
        lambda: client.lobby.AbandonTable(abandon, metadata=auth(host_token)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TABLE_ABANDONED",
    )
    listed = client.lobby.ListTables(
        lobby_pb2.ListTablesRequest(page_size=100, status=lobby_pb2.TABLE_STATUS_ABANDONED)
    )
    assert [t.table_id for t in listed.tables] == [table_id]


def test_a_replaced_seat_is_refused_at_once(client: Client) -> None:
    """A gateway remembers what a credential was granted rather than asking the lobby on every
    call, until the lobby announces a change of its table: a seat given to someone else is
    refused to its old holder as soon as the announcement arrives (well within a second, not
    the SHIKOKU_GRANT_SECONDS a gateway that misses announcements keeps grants)."""
    host = register(client, "Director", host=True)
    alice, bob, carol = (register(client, name) for name in ("Alice", "Bob", "Carol"))
    created = client.lobby.CreateTable(
        lobby_pb2.CreateTableRequest(
            seat_count=2, options=lobby_pb2.TableOptions(fixed_seat_order=True)
        ),
        metadata=auth(host.credential),
    )
    table_id = created.table.table_id
    for player in (alice, bob):
        join = lobby_pb2.JoinTableRequest(table_id=table_id)
        client.lobby.JoinTable(join, metadata=auth(player.credential))
    game_id = client.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(host.credential)
    ).game_id
    submit = game_pb2.SubmitCommandRequest(game_id=game_id, command=PASS)

    def reason_for_bob() -> str:
        try:
            client.game.SubmitCommand(submit, metadata=auth(bob.credential))
        except grpc.RpcError as error:
            return ShikokuError.from_rpc_error(error).reason
        return "OK"

    # Seat 1 bids first: Bob's seat is granted (and remembered), then refused by the rules.
    assert reason_for_bob() == "NOT_YOUR_TURN"
    client.lobby.ReplaceSeat(
        lobby_pb2.ReplaceSeatRequest(table_id=table_id, seat=2, player_id=carol.player_id),
        metadata=auth(host.credential),
    )
    replaced_at = time.monotonic()
    reasons = [reason_for_bob()]
    while reasons[-1] != "NOT_A_SEAT":
        assert reasons[-1] == "NOT_YOUR_TURN", reasons
        assert time.monotonic() - replaced_at < 1.0, "still acting for the seat"
        time.sleep(0.02)
        reasons.append(reason_for_bob())
