"""Unary calls to the web entrypoint over real HTTP on loopback, in each protocol a browser may
speak (Connect JSON as plain `fetch` sends it, Connect binary, gRPC-Web), answered by the real
gateway and services behind it; several calls on one kept-alive connection."""

from __future__ import annotations

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.rpc import error_details_pb2

from shikoku.server.lobby_connect import LobbyServiceClient
from shikoku.v1 import lobby_pb2
from tests.e2e.api import System
from tests.web.wire import (
    api_headers,
    connect_json,
    connection,
    envelope,
    error_info,
    grpc_web,
    post,
)

pytestmark = pytest.mark.e2e


def test_connect_json_creates_a_table_the_lobby_then_knows(web_api: System) -> None:
    conn = connection(web_api.web)
    created = connect_json(
        conn, "LobbyService/CreateTable", {"seatCount": 3}, api_headers(web_api.api_key)
    )
    assert created.status == 200, created.body
    assert created.headers["content-type"] == "application/json"
    table = created.json()["table"]
    assert table["tableId"].startswith("t-")
    assert table["status"] == "TABLE_STATUS_OPEN"
    assert created.json()["hostToken"].startswith(table["tableId"] + "~")

    # Proto field names are read too, and the table is the lobby's own.
    fetched = connect_json(
        conn, "LobbyService/GetTable", {"table_id": table["tableId"]}, api_headers(web_api.api_key)
    )
    assert fetched.status == 200, fetched.body
    assert fetched.json()["tableId"] == table["tableId"]
    assert [seat["number"] for seat in fetched.json()["seats"]] == [1, 2, 3]


def test_connect_binary_on_the_wire(web_api: System) -> None:
    conn = connection(web_api.web)
    request = lobby_pb2.CreateTableRequest(seat_count=2).SerializeToString()
    headers = {**api_headers(web_api.api_key), "content-type": "application/proto"}
    answer = post(conn, "/shikoku.v1.LobbyService/CreateTable", request, headers)
    assert answer.status == 200, answer.body
    assert answer.headers["content-type"] == "application/proto"
    created = lobby_pb2.CreateTableResponse.FromString(answer.body)
    assert created.table.seat_count == 2
    assert created.table.status == lobby_pb2.TABLE_STATUS_OPEN


async def test_the_generated_connect_client_calls_and_gets_rich_errors(web_api: System) -> None:
    headers = {"x-api-key": web_api.api_key}
    async with LobbyServiceClient(f"http://{web_api.web}") as lobby:
        created = await lobby.create_table(
            lobby_pb2.CreateTableRequest(seat_count=4), headers=headers
        )
        assert created.table.seat_count == 4
        with pytest.raises(ConnectError) as refused:
            await lobby.create_table(lobby_pb2.CreateTableRequest(seat_count=9), headers=headers)
    assert refused.value.code == Code.INVALID_ARGUMENT
    info, bad_request = refused.value.details
    assert info.type_name == "google.rpc.ErrorInfo"
    reason = error_details_pb2.ErrorInfo.FromString(info.message_bytes).reason
    assert reason == "INVALID_SEAT_COUNT"
    assert bad_request.type_name == "google.rpc.BadRequest"
    violations = error_details_pb2.BadRequest.FromString(bad_request.message_bytes)
    assert violations.field_violations[0].field == "seat_count"


def test_grpc_web_answers_a_message_then_its_status_in_the_body(web_api: System) -> None:
    conn = connection(web_api.web)
    headers = api_headers(web_api.api_key)
    answer = grpc_web(
        conn, "LobbyService/CreateTable", lobby_pb2.CreateTableRequest(seat_count=5), headers
    )
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/grpc-web+proto"
    [message] = answer.messages
    assert lobby_pb2.CreateTableResponse.FromString(message).table.seat_count == 5
    assert answer.trailers["grpc-status"] == "0"

    refused = grpc_web(
        conn, "LobbyService/CreateTable", lobby_pb2.CreateTableRequest(seat_count=9), headers
    )
    assert refused.messages == []
    assert refused.grpc_status == 3  # INVALID_ARGUMENT
    status = refused.rich_status()
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info) and info.reason == "INVALID_SEAT_COUNT"


async def test_the_generated_client_speaks_grpc_web_too(web_api: System) -> None:
    headers = {"x-api-key": web_api.api_key}
    async with LobbyServiceClient(f"http://{web_api.web}", protocol=ProtocolType.GRPC_WEB) as lobby:
        created = await lobby.create_table(
            lobby_pb2.CreateTableRequest(seat_count=6), headers=headers
        )
    assert created.table.seat_count == 6


def test_one_connection_carries_many_calls_of_every_kind(web_api: System) -> None:
    conn = connection(web_api.web)
    headers = api_headers(web_api.api_key)
    sockets = []
    answers = []
    for _ in range(2):
        answers.append(connect_json(conn, "LobbyService/ListTables", {}, headers))
        sockets.append(conn.sock)
        refused = connect_json(conn, "LobbyService/CreateTable", {"seatCount": 9}, headers)
        answers.append(refused)
        sockets.append(conn.sock)
        request = lobby_pb2.ListTablesRequest(page_size=1)
        web = grpc_web(conn, "LobbyService/ListTables", request, headers)
        assert web.grpc_status == 0
        sockets.append(conn.sock)
        binary = {**headers, "content-type": "application/proto"}
        body = request.SerializeToString()
        answers.append(post(conn, "/shikoku.v1.LobbyService/ListTables", body, binary))
        sockets.append(conn.sock)
    assert [answer.status for answer in answers] == [200, 400, 200] * 2
    assert all(answer.headers.get("connection", "") != "close" for answer in answers)
    assert sockets[0] is not None
    assert all(sock is sockets[0] for sock in sockets), "a call opened a new connection"


def test_a_stream_request_is_enveloped_even_on_a_kept_alive_connection(web_api: System) -> None:
    conn = connection(web_api.web)
    headers = {
        **api_headers(web_api.api_key),
        "content-type": "application/connect+json",
        "connect-timeout-ms": "300",
    }
    for _ in range(3):
        answer = post(
            conn,
            "/shikoku.v1.GameService/StreamEvents",
            envelope(b'{"gameId": "t-none"}'),
            headers,
        )
        assert answer.status == 200
        first = conn.sock
        assert first is not None
    assert conn.sock is first
    unary = connect_json(conn, "LobbyService/ListTables", {}, api_headers(web_api.api_key))
    assert unary.status == 200 and conn.sock is first


def test_an_error_names_our_reason_in_the_detail_and_its_debug_form(web_api: System) -> None:
    conn = connection(web_api.web)
    answer = connect_json(
        conn, "LobbyService/CreateTable", {"seatCount": 9}, api_headers(web_api.api_key)
    )
    assert answer.status == 400
    error = answer.json()
    assert error["code"] == "invalid_argument"
    assert "9" in error["message"]
    info = error_info(error)
    assert info["reason"] == "INVALID_SEAT_COUNT"
    assert info["domain"] == "shikoku.1889"
    violations = next(d for d in error["details"] if d["type"] == "google.rpc.BadRequest")
    assert violations["debug"]["fieldViolations"][0]["field"] == "seat_count"
