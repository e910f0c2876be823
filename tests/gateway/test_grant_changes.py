"""Grants forgotten by the table's own events: the gateway's access check on a real grpc.aio
server, in front of the lobby's real servicers on another (counting the credential checks that
reach it), following the lobby's announcements in a real Redis. A seat checked once is not
checked again while nothing changes at its table, however long it plays; the moment its table
changes (here: the seat is left, through another gateway), its grants are gone."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
import redis.asyncio

from gateway.api_keys import ApiKeys
from gateway.auth import Authorization
from infra.call_chain import CallChain
from infra.grpc_types import Context
from shikoku.internal.v1 import lobby_pb2 as internal_lobby_pb2
from shikoku.internal.v1 import lobby_pb2_grpc as internal_lobby_pb2_grpc
from shikoku.v1 import lobby_pb2, lobby_pb2_grpc
from shikoku_sdk.errors import ShikokuError
from tests.gateway.lobby_behind import CountingCredentials, LobbyBehind, lobby_behind

SET_READY = "/shikoku.v1.LobbyService/SetReady"
GRANT_SECONDS = 0.3  # while not following: the old per-credential lapse


class HookedCredentials(CountingCredentials):
    """The lobby's servicer, running `during` while a check is under way."""

    during: Callable[[], None] = staticmethod(lambda: None)

    async def Authorize(
        self, request: internal_lobby_pb2.AuthorizeRequest, context: Context
    ) -> internal_lobby_pb2.Grant:
        self.during()
        return await super().Authorize(request, context)


@dataclass
class Setup:
    authorization: Authorization
    gateway: grpc.aio.Channel
    lobby: lobby_pb2_grpc.LobbyServiceAsyncStub
    credentials: HookedCredentials
    api_key: str

    async def set_ready(self, token: str) -> str:
        """SetReady as the gateway admits it: "OK", or the refusal's reason."""
        call: grpc.aio.UnaryUnaryMultiCallable[lobby_pb2.SetReadyRequest, bytes]
        call = self.gateway.unary_unary(
            SET_READY, lobby_pb2.SetReadyRequest.SerializeToString, None
        )
        request = lobby_pb2.SetReadyRequest(table_id=self.table_id, ready=True)
        metadata = [("x-api-key", self.api_key), ("authorization", f"Bearer {token}")]
        try:
            await call(request, metadata=metadata)
        except grpc.aio.AioRpcError as error:
            return ShikokuError.from_rpc_error(error).reason or error.code().name
        return "OK"

    table_id: str = ""

    async def seated(self, name: str) -> lobby_pb2.JoinTableResponse:
        """`name` seated at a new table of three, now the table `set_ready` names."""
        created = await self.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=3))
        self.table_id = created.table.table_id
        join = lobby_pb2.JoinTableRequest(table_id=self.table_id, player_name=name)
        return await self.lobby.JoinTable(join)


async def _admitted(request: lobby_pb2.SetReadyRequest, context: object) -> bytes:
    return b""


@pytest.fixture
async def setup(redis_client: redis.asyncio.Redis) -> AsyncIterator[Setup]:
    async with (
        lobby_behind(redis_client, HookedCredentials) as lobby,
        authorized(redis_client, lobby) as setup,
    ):
        yield setup


@asynccontextmanager
async def authorized(
    redis_client: redis.asyncio.Redis, lobby: LobbyBehind[HookedCredentials]
) -> AsyncIterator[Setup]:
    """The gateway's access check on a server of its own, in front of `lobby`, following the
    lobby's announcements."""
    credentials, lobby_channel = lobby.credentials, lobby.channel
    keys = ApiKeys(redis_client)
    _issued, api_key = await keys.issue("players")
    authorization = Authorization(
        keys,
        internal_lobby_pb2_grpc.CredentialServiceStub(lobby_channel),
        grant_seconds=GRANT_SECONDS,
        redis=redis_client,
    )
    server = grpc.aio.server(interceptors=[CallChain(admissions=[authorization])])
    handler: grpc.RpcMethodHandler[Any, Any] = grpc.unary_unary_rpc_method_handler(
        _admitted, request_deserializer=lobby_pb2.SetReadyRequest.FromString
    )
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("shikoku.v1.LobbyService", {"SetReady": handler})]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    following = asyncio.create_task(authorization.follow_grant_changes())
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield Setup(
                authorization,
                channel,
                lobby_pb2_grpc.LobbyServiceStub(lobby_channel),
                credentials,
                api_key,
            )
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await server.stop(None)


async def until(condition: object, seconds: float = 5.0) -> None:
    start = time.monotonic()
    while not (condition() if callable(condition) else condition):
        assert time.monotonic() - start < seconds
        await asyncio.sleep(0.01)


async def test_a_grant_lasts_until_its_table_changes_and_not_a_moment_longer(setup: Setup) -> None:
    await until(lambda: setup.authorization.following)
    joined = await setup.seated("Ann")
    assert await setup.set_ready(joined.seat_token) == "OK"
    asked = setup.credentials.asked
    for _ in range(3):  # well past GRANT_SECONDS: while following, the grant holds
        assert [await setup.set_ready(joined.seat_token) for _ in range(10)] == ["OK"] * 10
        await asyncio.sleep(GRANT_SECONDS)
    assert setup.credentials.asked == asked

    # Another seat joins: the table changed, so its grants are checked again, once.
    await setup.lobby.JoinTable(
        lobby_pb2.JoinTableRequest(table_id=setup.table_id, player_name="Ben")
    )
    await until(lambda: not setup.authorization.credentials_remembered)
    assert [await setup.set_ready(joined.seat_token) for _ in range(5)] == ["OK"] * 5
    assert setup.credentials.asked == asked + 1

    # The seat is left, by a call that never went through this gateway: refused at once.
    leave = lobby_pb2.LeaveTableRequest(table_id=setup.table_id)
    await setup.lobby.LeaveTable(leave, metadata=[("authorization", f"Bearer {joined.seat_token}")])
    start = time.monotonic()
    while (reason := await setup.set_ready(joined.seat_token)) == "OK":
        assert time.monotonic() - start < 2.0, "the left seat's grant outlived the change"
        await asyncio.sleep(0.01)
    assert reason in {"INVALID_CREDENTIAL", "NOT_A_SEAT"}


async def test_without_announcements_grants_lapse_after_a_few_seconds(setup: Setup) -> None:
    await until(lambda: setup.authorization.following)
    setup.authorization.following = False  # as when the subscription is lost
    joined = await setup.seated("Ann")
    assert await setup.set_ready(joined.seat_token) == "OK"
    asked = setup.credentials.asked
    assert await setup.set_ready(joined.seat_token) == "OK"
    assert setup.credentials.asked == asked
    await asyncio.sleep(GRANT_SECONDS + 0.05)
    assert await setup.set_ready(joined.seat_token) == "OK"
    assert setup.credentials.asked == asked + 1


async def test_a_check_under_way_is_remembered_unless_its_own_table_changed_meanwhile(
    setup: Setup,
) -> None:
    await until(lambda: setup.authorization.following)
    joined = await setup.seated("Ann")
    await until(lambda: not setup.authorization.credentials_remembered)
    # Other tables change while the seat is checked (a tournament starting, say): kept.
    setup.credentials.during = lambda: setup.authorization.heard("t-another")
    assert await setup.set_ready(joined.seat_token) == "OK"
    asked = setup.credentials.asked
    assert await setup.set_ready(joined.seat_token) == "OK"
    assert setup.credentials.asked == asked
    # Its own table changes while it is checked again: that answer is not kept.
    setup.authorization.heard(setup.table_id)
    setup.credentials.during = lambda: setup.authorization.heard(setup.table_id)
    assert await setup.set_ready(joined.seat_token) == "OK"
    setup.credentials.during = lambda: None
    assert await setup.set_ready(joined.seat_token) == "OK"
    assert setup.credentials.asked == asked + 2
