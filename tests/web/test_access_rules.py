"""The web entrypoint grants and refuses exactly what the gRPC gateway does: a sample of methods,
each called with the same request and credentials over gRPC and over Connect JSON, must end the
same way (the same code and ErrorInfo reason, or both answered)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from gateway.auth import RULES
from gateway.public_api import public_methods
from shikoku.v1 import game_pb2, lobby_pb2, routes_pb2
from shikoku_sdk.errors import ShikokuError
from tests.e2e.api import PASS, Client, System, started_table
from tests.web.wire import (
    END_STREAM,
    api_headers,
    connect_json,
    connection,
    envelope,
    error_info,
    frames,
    post,
)

pytestmark = pytest.mark.e2e

# Connect spells the gRPC codes in lower case, and CANCELLED with one L.
Outcome = tuple[str, str]  # (code, reason); ("ok", "") when answered
ANSWERED: Outcome = ("ok", "")


@dataclass
class Tables:
    game: str  # a started game
    seats: list[str]
    host: str
    other_seat: str  # a seat of another game
    closed: str  # a started game closed to spectators
    open_table: str  # a table not started, with a free seat
    open_host: str


@pytest.fixture(scope="module")
def tables(web_api: System) -> Tables:
    client = Client(web_api)
    game, seats, host = started_table(client)
    _, others, _ = started_table(client)
    closed, _, _ = started_table(client, options=lobby_pb2.TableOptions(closed_to_spectators=True))
    created = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=3))
    client.channel.close()
    return Tables(game, seats, host, others[0], closed, created.table.table_id, created.host_token)


Case = Callable[[Tables], tuple[str, Message, str]]  # (method path, request, credential)

CASES: dict[str, Case] = {
    "start without a credential": lambda t: (
        "/shikoku.v1.LobbyService/StartTable",
        lobby_pb2.StartTableRequest(table_id=t.open_table),
        "",
    ),
    "start by a seat of another table": lambda t: (
        "/shikoku.v1.LobbyService/StartTable",
        lobby_pb2.StartTableRequest(table_id=t.open_table),
        t.other_seat,
    ),
    "start without a table id": lambda t: (
        "/shikoku.v1.LobbyService/StartTable",
        lobby_pb2.StartTableRequest(),
        t.open_host,
    ),
    "end a game by a seat": lambda t: (
        "/shikoku.v1.LobbyService/EndGame",
        lobby_pb2.EndGameRequest(table_id=t.game),
        t.seats[0],
    ),
    "ready by the host": lambda t: (
        "/shikoku.v1.LobbyService/SetReady",
        lobby_pb2.SetReadyRequest(table_id=t.open_table),
        t.open_host,
    ),
    "revoke a table token": lambda t: (
        "/shikoku.v1.LobbyService/RevokeCredential",
        lobby_pb2.RevokeCredentialRequest(),
        t.seats[0],
    ),
    "a tournament by a seat": lambda t: (
        "/shikoku.v1.LobbyService/CreateTournament",
        lobby_pb2.CreateTournamentRequest(name="cup"),
        t.seats[0],
    ),
    "get a table anonymously": lambda t: (
        "/shikoku.v1.LobbyService/GetTable",
        lobby_pb2.GetTableRequest(table_id=t.game),
        "",
    ),
    "command by the host": lambda t: (
        "/shikoku.v1.GameService/SubmitCommand",
        game_pb2.SubmitCommandRequest(game_id=t.game, command=PASS),
        t.host,
    ),
    "command by a seat of another game": lambda t: (
        "/shikoku.v1.GameService/SubmitCommand",
        game_pb2.SubmitCommandRequest(game_id=t.game, command=PASS),
        t.other_seat,
    ),
    "command with an unknown token": lambda t: (
        "/shikoku.v1.GameService/SubmitCommand",
        game_pb2.SubmitCommandRequest(game_id=t.game, command=PASS),
        f"{t.game}~not-the-secret",
    ),
    "state of a closed game, anonymously": lambda t: (
        "/shikoku.v1.GameService/GetState",
        game_pb2.GetStateRequest(game_id=t.closed),
        "",
    ),
    "state of an open game, anonymously": lambda t: (
        "/shikoku.v1.GameService/GetState",
        game_pb2.GetStateRequest(game_id=t.game),
        "",
    ),
    "legal actions of a closed game, by a seat of another": lambda t: (
        "/shikoku.v1.GameService/ListLegalActions",
        game_pb2.ListLegalActionsRequest(game_id=t.closed),
        t.other_seat,
    ),
    "watch a closed game, anonymously": lambda t: (
        "/shikoku.v1.GameService/WatchGame",
        game_pb2.WatchGameRequest(game_id=t.closed),
        "",
    ),
    "routes of a closed game, anonymously": lambda t: (
        "/shikoku.v1.RoutesService/Optimize",
        routes_pb2.OptimizeRequest(game_id=t.closed, corporation="AR"),
        "",
    ),
}


def over_grpc(system: System, path: str, request: Message, token: str) -> Outcome:
    method = public_methods()[path]
    metadata: tuple[tuple[str, str | bytes], ...] = (("x-api-key", system.api_key),)
    if token:
        metadata += (("authorization", f"Bearer {token}"),)
    serializers = (method.request.SerializeToString, method.response.FromString)
    with grpc.insecure_channel(system.gateway) as channel:
        try:
            if method.streaming:
                stream: Any = channel.unary_stream(path, *serializers)(
                    request, metadata=metadata, timeout=10
                )
                next(stream)
                stream.cancel()
            else:
                channel.unary_unary(path, *serializers)(request, metadata=metadata, timeout=10)
        except grpc.RpcError as error:
            code = error.code()
            name = "canceled" if code == grpc.StatusCode.CANCELLED else code.name.lower()
            return name, ShikokuError.from_rpc_error(error).reason
    return ANSWERED


def over_web(system: System, path: str, request: Message, token: str) -> Outcome:
    method = public_methods()[path]
    document = json_format.MessageToDict(request)
    headers = api_headers(system.api_key, token=token)
    conn = connection(system.web)
    if not method.streaming:
        answer = connect_json(conn, path.removeprefix("/shikoku.v1."), document, headers)
        if answer.status == 200:
            return ANSWERED
        error = answer.json()
        return error["code"], error_info(error)["reason"]
    streamed = post(
        conn,
        path,
        envelope(json.dumps(document).encode()),
        {**headers, "content-type": "application/connect+json", "connect-timeout-ms": "3000"},
    )
    flags, first = frames(streamed.body)[0]
    if not flags & END_STREAM:
        return ANSWERED
    error = json.loads(first)["error"]
    return error["code"], error_info(error)["reason"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_call_ends_the_same_over_the_web_as_over_grpc(
    web_api: System, tables: Tables, case: str
) -> None:
    path, request, token = CASES[case](tables)
    assert path in RULES
    expected = over_grpc(web_api, path, request, token)
    assert over_web(web_api, path, request, token) == expected


def test_the_sample_covers_refusals_of_every_kind_and_some_answers(
    web_api: System, tables: Tables
) -> None:
    outcomes = {over_grpc(web_api, *CASES[case](tables)) for case in CASES}
    codes = {code for code, _ in outcomes}
    assert {"unauthenticated", "permission_denied", "invalid_argument", "ok"} <= codes
    reasons = {reason for _, reason in outcomes}
    assert {"MISSING_CREDENTIAL", "NOT_HOST", "NOT_A_SEAT", "CLOSED_TO_SPECTATORS"} <= reasons
