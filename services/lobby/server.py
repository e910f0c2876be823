"""The lobby service process: tables, seats and the credentials that go with them."""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import time
from collections.abc import Iterable
from typing import cast

import grpc
from redis.asyncio import Redis

from services.lobby import tables
from services.lobby.credentials import credential_hash, new_credential, table_of
from services.projections.game_summaries import Summary, SummaryProjector, read_summary
from shikoku.config import Addresses, redis_client
from shikoku.eventstore import EventStore, NewEvent, VersionConflict
from shikoku.grpc_errors import abort, from_rpc_error
from shikoku.grpc_server import Context, serve
from shikoku.internal.v1 import lobby_pb2 as internal_lobby_pb2
from shikoku.internal.v1 import lobby_pb2_grpc as internal_lobby_pb2_grpc
from shikoku.internal.v1 import rules_pb2, rules_pb2_grpc
from shikoku.metadata import bearer_token
from shikoku.rejection import Kind, Rejected
from shikoku.v1 import lobby_pb2, lobby_pb2_grpc

SCHEMA = 1
MAX_ATTEMPTS = 5


TABLES_INDEX = "tables:index"
DEFAULT_PAGE, MAX_PAGE = 50, 200


def game_summary(summary: Summary | None) -> lobby_pb2.GameSummary | None:
    if summary is None:
        return None
    document = summary.document
    result = document.get("result") or {}
    return lobby_pb2.GameSummary(
        version=summary.version,
        round=str(document["round"].get("type", "")),
        round_number=int(document["round"].get("number", 0)),
        operating=str(document["round"].get("operating", "")),
        phase=str(document["phase"]),
        acting_seats=document["acting_seats"],
        finished=bool(document["finished"]),
        end_reason=str(result.get("reason", "")),
        net_worths={int(seat): int(worth) for seat, worth in result.get("net_worths", {}).items()},
    )


def table_to_proto(table: tables.Table, summary: Summary | None = None) -> lobby_pb2.Table:
    status = lobby_pb2.TABLE_STATUS_OPEN
    if table.started:
        finished = summary is not None and summary.document["finished"]
        status = lobby_pb2.TABLE_STATUS_FINISHED if finished else lobby_pb2.TABLE_STATUS_STARTED
    message = lobby_pb2.Table(
        table_id=table.table_id,
        display_name=table.display_name,
        seat_count=len(table.seats),
        options=lobby_pb2.TableOptions(
            beginner_game=table.beginner_game,
            fixed_seat_order=table.fixed_seat_order,
            trust_submitted_revenue=table.trust_submitted_revenue,
            undo_allowed=table.undo_allowed,
        ),
        seats=[
            lobby_pb2.Seat(number=s.number, player_name=s.player_name, taken=s.taken)
            for s in table.seats
        ],
        status=status,
        game_id=table.game_id,
    )
    if (game := game_summary(summary)) is not None:
        message.game.CopyFrom(game)
    return message


class TableRepository:
    def __init__(self, store: EventStore, redis: Redis) -> None:
        self._store = store
        self._redis = redis

    async def index(self, table_id: str) -> None:
        await self._redis.zadd(TABLES_INDEX, {table_id: time.time()})

    async def page(self, start: int, count: int) -> list[str]:
        """Table ids, newest first."""
        ids = cast(list[bytes], await self._redis.zrevrange(TABLES_INDEX, start, start + count - 1))
        return [table_id.decode() for table_id in ids]

    async def count(self) -> int:
        return int(await self._redis.zcard(TABLES_INDEX))

    async def summary(self, table: tables.Table) -> Summary | None:
        return await read_summary(self._redis, table.game_id) if table.started else None

    async def load(self, table_id: str) -> tuple[int, tables.Table]:
        events = await self._store.read(table_id) if table_id else []
        table = tables.fold((e.type, e.payload) for e in events)
        if not table.exists:
            raise Rejected(
                "TABLE_NOT_FOUND", f"no table {table_id!r}", Kind.NOT_FOUND, {"table_id": table_id}
            )
        return len(events), table

    async def append(
        self, table_id: str, version: int, events: list[tables.LobbyEvent]
    ) -> tables.Table:
        await self._store.append(
            table_id, version, [NewEvent(kind, SCHEMA, data) for kind, data in events]
        )
        return (await self.load(table_id))[1]


class Principal:
    def __init__(self, table: tables.Table, version: int, seat: tables.Seat | None) -> None:
        self.table = table
        self.version = version
        self.seat = seat  # None for the host

    @property
    def is_host(self) -> bool:
        return self.seat is None


async def authenticate(repo: TableRepository, credential: str) -> Principal:
    invalid = Rejected("INVALID_CREDENTIAL", "the credential is not valid", Kind.UNAUTHENTICATED)
    table_id = table_of(credential)
    if table_id is None:
        raise invalid
    try:
        version, table = await repo.load(table_id)
    except Rejected:
        raise invalid from None
    digest = credential_hash(credential)
    if secrets.compare_digest(digest, table.host_credential_hash):
        return Principal(table, version, None)
    seat = table.seat_of(digest)
    if seat is None:
        raise invalid
    return Principal(table, version, seat)


class LobbyServicer(lobby_pb2_grpc.LobbyServiceServicer):
    def __init__(self, repo: TableRepository, rules: rules_pb2_grpc.RulesServiceAsyncStub) -> None:
        self._repo = repo
        self._rules = rules

    async def CreateTable(
        self, request: lobby_pb2.CreateTableRequest, context: Context
    ) -> lobby_pb2.CreateTableResponse:
        table_id = f"t-{secrets.token_hex(6)}"
        host_credential = new_credential(table_id)
        try:
            events = tables.create(
                table_id,
                request.seat_count,
                request.display_name,
                request.options.beginner_game,
                request.options.fixed_seat_order,
                credential_hash(host_credential),
                request.options.trust_submitted_revenue,
                request.options.undo_allowed,
            )
            table = await self._repo.append(table_id, 0, events)
            await self._repo.index(table_id)
        except Rejected as rejection:
            await abort(context, rejection)
            raise
        return lobby_pb2.CreateTableResponse(
            table=table_to_proto(table), host_token=host_credential
        )

    async def ListTables(
        self, request: lobby_pb2.ListTablesRequest, context: Context
    ) -> lobby_pb2.ListTablesResponse:
        size = request.page_size or DEFAULT_PAGE
        if not 1 <= size <= MAX_PAGE or (request.page_token and not request.page_token.isdigit()):
            raise Rejected(
                "INVALID_PAGE",
                f"page_size is 1 to {MAX_PAGE} and page_token comes from a previous page",
                Kind.INVALID_ARGUMENT,
                {"field": "page_size" if not 1 <= size <= MAX_PAGE else "page_token"},
            )
        position = int(request.page_token or 0)
        found: list[lobby_pb2.Table] = []
        exhausted = False
        while len(found) < size and not exhausted:
            ids = await self._repo.page(position, size)
            exhausted = len(ids) < size
            for table_id in ids:
                position += 1
                _version, table = await self._repo.load(table_id)
                message = table_to_proto(table, await self._repo.summary(table))
                if request.status in (lobby_pb2.TABLE_STATUS_UNSPECIFIED, message.status):
                    found.append(message)
                    if len(found) == size:
                        break
        more = not exhausted or position < await self._repo.count()
        return lobby_pb2.ListTablesResponse(
            tables=found, next_page_token=str(position) if more and found else ""
        )

    async def GetTable(
        self, request: lobby_pb2.GetTableRequest, context: Context
    ) -> lobby_pb2.Table:
        try:
            _version, table = await self._repo.load(request.table_id)
        except Rejected as rejection:
            await abort(context, rejection)
            raise
        return table_to_proto(table, await self._repo.summary(table))

    async def JoinTable(
        self, request: lobby_pb2.JoinTableRequest, context: Context
    ) -> lobby_pb2.JoinTableResponse:
        seat_credential = new_credential(request.table_id)
        try:
            for _attempt in range(MAX_ATTEMPTS):
                version, table = await self._repo.load(request.table_id)
                events = tables.join(
                    table, request.player_name, request.seat, credential_hash(seat_credential)
                )
                try:
                    table = await self._repo.append(request.table_id, version, events)
                except VersionConflict:
                    continue
                return lobby_pb2.JoinTableResponse(
                    table=table_to_proto(table),
                    seat=events[0][1]["seat"],
                    seat_token=seat_credential,
                )
            raise Rejected("CONTENDED", "the table changed while joining; try again")
        except Rejected as rejection:
            await abort(context, rejection)
            raise

    async def LeaveTable(
        self, request: lobby_pb2.LeaveTableRequest, context: Context
    ) -> lobby_pb2.Table:
        try:
            principal = await self._principal_for(request.table_id, context)
            if principal.seat is None:
                raise Rejected(
                    "NOT_A_SEAT", "only a seat token can leave its seat", Kind.PERMISSION_DENIED
                )
            events = tables.leave(principal.table, principal.seat)
            table = await self._repo.append(request.table_id, principal.version, events)
        except (Rejected, VersionConflict) as error:
            await abort(context, _rejection(error))
            raise
        return table_to_proto(table)

    async def StartTable(
        self, request: lobby_pb2.StartTableRequest, context: Context
    ) -> lobby_pb2.StartTableResponse:
        try:
            principal = await self._principal_for(request.table_id, context)
            if not principal.is_host:
                raise Rejected(
                    "NOT_HOST", "only the table's host can start it", Kind.PERMISSION_DENIED
                )
            table = principal.table
            game_id = table.table_id  # one game per table; also makes a retried start idempotent
            events = tables.start(table, game_id)
            players = [
                rules_pb2.GamePlayer(seat=s.number, name=s.player_name)
                for s in table.seats
                if s.taken
            ]
            try:
                await self._rules.CreateGame(
                    rules_pb2.CreateGameRequest(
                        game_id=game_id,
                        players=players,
                        beginner_game=table.beginner_game,
                        fixed_seat_order=table.fixed_seat_order,
                        trust_submitted_revenue=table.trust_submitted_revenue,
                        undo_allowed=table.undo_allowed,
                    ),
                    timeout=10,
                )
            except grpc.aio.AioRpcError as error:
                raise from_rpc_error(error) or Rejected(
                    "RULES_UNAVAILABLE",
                    f"the rules service failed: {error.details()}",
                    Kind.FAILED_PRECONDITION,
                ) from error
            table = await self._repo.append(request.table_id, principal.version, events)
        except (Rejected, VersionConflict) as error:
            await abort(context, _rejection(error))
            raise
        return lobby_pb2.StartTableResponse(table=table_to_proto(table), game_id=game_id)

    async def EndGame(self, request: lobby_pb2.EndGameRequest, context: Context) -> lobby_pb2.Table:
        try:
            principal = await self._principal_for(request.table_id, context)
            if not principal.is_host:
                raise Rejected(
                    "NOT_HOST", "only the table's host can end its game", Kind.PERMISSION_DENIED
                )
            if not principal.table.started:
                raise Rejected("TABLE_NOT_STARTED", f"table {request.table_id} has no game yet")
            try:
                await self._rules.EndGame(
                    rules_pb2.EndGameRequest(game_id=principal.table.game_id), timeout=10
                )
            except grpc.aio.AioRpcError as error:
                raise from_rpc_error(error) or Rejected(
                    "RULES_UNAVAILABLE", f"the rules service failed: {error.details()}"
                ) from error
        except Rejected as rejection:
            await abort(context, rejection)
            raise
        return table_to_proto(principal.table)

    async def _principal_for(self, table_id: str, context: Context) -> Principal:
        principal = await authenticate(self._repo, bearer_token(context.invocation_metadata()))
        if principal.table.table_id != table_id:
            raise Rejected(
                "WRONG_TABLE", f"the credential is not for table {table_id}", Kind.PERMISSION_DENIED
            )
        return principal


def _rejection(error: Exception) -> Rejected:
    if isinstance(error, Rejected):
        return error
    return Rejected("CONTENDED", "the table changed during the call; try again")


class CredentialServicer(internal_lobby_pb2_grpc.CredentialServiceServicer):
    def __init__(self, repo: TableRepository) -> None:
        self._repo = repo

    async def Resolve(
        self, request: internal_lobby_pb2.ResolveRequest, context: Context
    ) -> internal_lobby_pb2.Principal:
        try:
            principal = await authenticate(self._repo, request.token)
        except Rejected as rejection:
            await abort(context, rejection)
            raise
        role = internal_lobby_pb2.Principal.ROLE_HOST
        if principal.seat is not None:
            role = internal_lobby_pb2.Principal.ROLE_SEAT
        return internal_lobby_pb2.Principal(
            role=role,
            table_id=principal.table.table_id,
            seat=principal.seat.number if principal.seat else 0,
            game_id=principal.table.game_id,
        )


async def main() -> None:
    addresses = Addresses.from_env()
    redis = redis_client()
    repo = TableRepository(EventStore(redis, "table"), redis)
    projector = SummaryProjector(redis, f"lobby-{socket.gethostname()}-{os.getpid()}")
    stopping = asyncio.Event()
    projecting = asyncio.create_task(projector.run(stopping))
    channel = grpc.aio.insecure_channel(addresses.rules)
    rules = rules_pb2_grpc.RulesServiceStub(channel)

    def register(server: grpc.aio.Server) -> Iterable[str]:
        lobby_pb2_grpc.add_LobbyServiceServicer_to_server(LobbyServicer(repo, rules), server)
        internal_lobby_pb2_grpc.add_CredentialServiceServicer_to_server(
            CredentialServicer(repo), server
        )
        return [
            lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name,
            internal_lobby_pb2.DESCRIPTOR.services_by_name["CredentialService"].full_name,
        ]

    async def stop() -> None:
        stopping.set()
        await projecting
        await channel.close(None)
        await redis.aclose()

    await serve("lobby", addresses.lobby, register, on_stop=stop)


if __name__ == "__main__":
    asyncio.run(main())
