"""The lobby's real servicers on a grpc.aio server of their own, on a real Redis, as the
gateway's access check sees them behind it: for tests of the gateway's interceptors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Generic, TypeVar

import grpc
import redis.asyncio

from infra.call_chain import FailuresAsStatus
from infra.eventstore import EventStore
from infra.grpc_types import Context
from services.lobby.shell.accounts import PlayerRepository
from services.lobby.shell.repository import TableRepository
from services.lobby.shell.server import CredentialServicer, LobbyServicer
from services.lobby.shell.tournaments_service import TournamentRepository, Tournaments
from shikoku.internal.v1 import lobby_pb2 as internal_lobby_pb2
from shikoku.internal.v1 import lobby_pb2_grpc as internal_lobby_pb2_grpc
from shikoku.internal.v1 import rules_pb2_grpc
from shikoku.v1 import lobby_pb2_grpc


class CountingCredentials(CredentialServicer):
    """The lobby's own servicer, counting the lookups that reach it."""

    asked = 0

    async def Authorize(
        self, request: internal_lobby_pb2.AuthorizeRequest, context: Context
    ) -> internal_lobby_pb2.Grant:
        self.asked += 1
        return await super().Authorize(request, context)


Credentials = TypeVar("Credentials", bound=CredentialServicer)


@dataclass
class LobbyBehind(Generic[Credentials]):
    credentials: Credentials  # its credential servicer, as the test made it
    channel: grpc.aio.Channel  # to the lobby: its CredentialService and LobbyService


@asynccontextmanager
async def lobby_behind(
    redis_client: redis.asyncio.Redis, credentials_type: type[Credentials]
) -> AsyncIterator[LobbyBehind[Credentials]]:
    """The lobby serving its CredentialService (a `credentials_type`) and its LobbyService;
    no rules service behind it (RegisterPlayer, CreateTable and JoinTable ask none)."""
    tables = TableRepository(EventStore(redis_client, "table"), redis_client)
    players = PlayerRepository(EventStore(redis_client, "player"))
    tournaments = TournamentRepository(EventStore(redis_client, "tournament"), redis_client)
    credentials = credentials_type(tables, players, tournaments)
    server = grpc.aio.server(interceptors=[FailuresAsStatus()])
    internal_lobby_pb2_grpc.add_CredentialServiceServicer_to_server(credentials, server)
    nowhere = grpc.aio.insecure_channel("127.0.0.1:9")
    lobby = LobbyServicer(
        tables,
        players,
        rules_pb2_grpc.RulesServiceStub(nowhere),
        Tournaments(tournaments, tables, players),
        redis_client,
    )
    lobby_pb2_grpc.add_LobbyServiceServicer_to_server(lobby, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield LobbyBehind(credentials, channel)
    finally:
        await channel.close(None)
        await nowhere.close(None)
        await server.stop(None)
