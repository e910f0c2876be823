"""The Connect side's forwarder built from a service's descriptor (`gateway.web.services`),
served by its generated Connect application on uvicorn (real sockets): a method a subclass
defines wins, every other is passed on to the gateway (here an address where nothing listens,
so a forwarded call ends UNAVAILABLE, as the Connect error of the gateway's channel)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import grpc
import pytest
import uvicorn

from gateway.web.services import Forwarder, connect_application, connect_name
from gateway.web.upstream import Context
from shikoku.v1 import lobby_pb2
from shikoku_dev.redis_server import free_port
from tests.web.wire import api_headers, connect_json, connection

pytestmark = pytest.mark.io

LOBBY = lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"]


class Lobby(Forwarder):
    async def list_tables(
        self, request: lobby_pb2.ListTablesRequest, ctx: Context
    ) -> lobby_pb2.ListTablesResponse:
        return lobby_pb2.ListTablesResponse(next_page_token="answered here")


@pytest.fixture
async def web() -> AsyncIterator[str]:
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{free_port()}")  # nothing listens there
    app = connect_application(LOBBY, channel, Lobby)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_level="error")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        assert not serving.done(), "uvicorn did not start"
        await asyncio.sleep(0.02)
    yield f"127.0.0.1:{port}"
    server.should_exit = True
    await serving
    await channel.close(None)


def call(address: str, method: str) -> tuple[int, dict[str, str]]:
    answer = connect_json(
        connection(address),
        f"LobbyService/{method}",
        {},
        {**api_headers(), "connect-timeout-ms": "3000"},
    )
    return answer.status, json.loads(answer.body)


async def test_a_method_the_subclass_defines_wins_and_the_others_go_to_the_gateway(
    web: str,
) -> None:
    status, body = await asyncio.to_thread(call, web, "ListTables")
    assert (status, body) == (200, {"nextPageToken": "answered here"})
    status, body = await asyncio.to_thread(call, web, "GetTable")
    assert body["code"] == "unavailable", body  # passed on, to a gateway that is not there


async def test_every_method_of_the_service_is_a_method_of_the_forwarder() -> None:
    # Async: a grpc.aio channel needs the running loop (a synchronous test found none once an
    # earlier test had closed the thread's default loop).
    channel = grpc.aio.insecure_channel("127.0.0.1:1")
    try:
        forwarder = Lobby(LOBBY, channel)
        assert type(forwarder).__dict__["list_tables"] is Lobby.list_tables
        assert "list_tables" not in vars(forwarder)  # not shadowed by a generated one
        names = [connect_name(method.name) for method in LOBBY.methods]
        assert "end_game" in names and "register_player" in names
        assert all(callable(getattr(forwarder, name)) for name in names)
    finally:
        await channel.close(None)
