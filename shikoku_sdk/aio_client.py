"""`shikoku_sdk.aio.Client`: `shikoku_sdk.Client` over grpc.aio, every method a coroutine (its
streams async iterators). What it sends and how it retries are `Client`'s (`shikoku_sdk.calls`,
`shikoku_sdk.retries`); only the I/O is its own."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncGenerator, Sequence
from types import TracebackType
from typing import Any

import grpc
import grpc.aio

from shikoku.v1 import (
    game_pb2,
    game_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
    routes_pb2,
    routes_pb2_grpc,
    title_pb2,
    title_pb2_grpc,
)
from shikoku_sdk import calls
from shikoku_sdk.aio_channel import dropped, keyed_aio_channel
from shikoku_sdk.aio_watch import Watch
from shikoku_sdk.calls import Call, Response, Route
from shikoku_sdk.channel import credential_metadata
from shikoku_sdk.commands import Choices
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.retries import reconnect_after, retry_after, stream_ended, worth_retrying


class Client:
    """A client of the gateway at `address` over grpc.aio: `shikoku_sdk.Client`'s methods, with
    the same names and arguments, as coroutines (`list_tables` and `watch_tournament` async
    iterators, `watch` an async iterator of `Update`s); the same retries, request ids and
    errors (`ShikokuError`). Use it as `async with Client(...) as client:`, or
    `await client.close()`; create it in the event loop that uses it. `interceptors` are
    grpc.aio client interceptors."""

    def __init__(
        self,
        address: str,
        credential: str | None = None,
        *,
        api_key: str | None = None,
        channel_credentials: grpc.ChannelCredentials | None = None,
        interceptors: Sequence[Any] = (),
        timeout: float = 30.0,
        attempts: int = 5,
    ) -> None:
        self._channel = keyed_aio_channel(
            address, api_key, channel_credentials=channel_credentials, interceptors=interceptors
        )
        self._owns_channel = True
        self.credential = credential
        self.timeout = timeout
        self.attempts = attempts
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(self._channel)
        self.games = game_pb2_grpc.GameServiceStub(self._channel)
        self.routes = routes_pb2_grpc.RoutesServiceStub(self._channel)
        self.titles = title_pb2_grpc.TitleServiceStub(self._channel)

    # -- the channel ------------------------------------------------------------------------

    def with_credential(self, credential: str) -> Client:
        """A view of this client acting with another credential over the same channel (closing
        the view leaves the channel open)."""
        view = copy.copy(self)
        view.credential = credential
        view._owns_channel = False
        return view

    async def close(self) -> None:
        """Closes the channel (unless this client is a view made by `with_credential`)."""
        if self._owns_channel:
            await self._channel.close(None)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The call metadata naming this client's credential (the API key is added by the
        channel)."""
        return credential_metadata(self.credential)

    async def _call(self, call: Call[Response]) -> Response:
        """Performs `call`, trying it again as `retry_after` decides."""
        rpc = getattr(getattr(self, call.service), call.method)
        attempt = 0
        while True:
            attempt += 1
            try:
                answer: Response = await rpc(
                    call.request, metadata=self.metadata(), timeout=self.timeout
                )
                return answer
            except grpc.RpcError as raw:
                error = ShikokuError.from_rpc_error(raw)
            delay = retry_after(call.retry, error, attempt, self.attempts)
            if delay is None:
                raise error
            await asyncio.sleep(delay)

    # -- players and hosts ------------------------------------------------------------------

    async def register_player(
        self, display_name: str, role: lobby_pb2.Role.ValueType = lobby_pb2.ROLE_PLAYER
    ) -> lobby_pb2.RegisterPlayerResponse:
        """Registers a player (or, with ROLE_HOST, a host); see `shikoku_sdk.Client`."""
        return await self._call(calls.register_player(display_name, role))

    async def register_host(self, display_name: str) -> lobby_pb2.RegisterPlayerResponse:
        """Registers a host, who creates tournaments and administers their tables."""
        return await self.register_player(display_name, lobby_pb2.ROLE_HOST)

    async def revoke_credential(self) -> None:
        """Revokes this client's registered credential: it no longer works anywhere."""
        await self._call(calls.revoke_credential())

    # -- tables -----------------------------------------------------------------------------

    async def create_table(
        self,
        seat_count: int,
        options: lobby_pb2.TableOptions | None = None,
        display_name: str = "",
    ) -> lobby_pb2.CreateTableResponse:
        """A new table of `seat_count` (2-6) seats; the answer's `host_token` administers it."""
        return await self._call(calls.create_table(seat_count, options, display_name))

    async def join_table(
        self, table_id: str, player_name: str, seat: int = 0
    ) -> lobby_pb2.JoinTableResponse:
        """Takes `seat` (0: the lowest free one); the answer's `seat_token` acts for it."""
        return await self._call(calls.join_table(table_id, player_name, seat))

    async def leave_table(self, table_id: str) -> lobby_pb2.Table:
        """Gives up this client's seat before the table starts (a seat's credential)."""
        return await self._call(calls.leave_table(table_id))

    async def set_ready(self, table_id: str, ready: bool = True) -> lobby_pb2.Table:
        """Marks this client's seat ready (or not)."""
        return await self._call(calls.set_ready(table_id, ready))

    async def start_table(self, table_id: str) -> lobby_pb2.StartTableResponse:
        """Starts the table and its game (the host's credential); safe to retry, as
        `shikoku_sdk.Client.start_table`."""
        try:
            return await self._call(calls.start_table(table_id, retry=False))
        except ShikokuError as error:
            if not worth_retrying(error):
                raise
        try:
            return await self._call(calls.start_table(table_id, retry=True))
        except ShikokuError as error:
            if not calls.started_elsewhere(error):
                raise
            return calls.started(await self.get_table(table_id))

    async def end_game(self, table_id: str) -> lobby_pb2.Table:
        """Ends the table's running game where it stands (the host's credential)."""
        return await self._call(calls.end_game(table_id))

    async def abandon_table(self, table_id: str) -> lobby_pb2.Table:
        """Closes the table (the host's credential); a running game ends as it stands."""
        return await self._call(calls.abandon_table(table_id))

    async def replace_seat(
        self, table_id: str, seat: int, player_id: str
    ) -> lobby_pb2.JoinTableResponse:
        """Gives a taken seat to another registered player (the host's credential)."""
        return await self._call(calls.replace_seat(table_id, seat, player_id))

    async def get_table(self, table_id: str) -> lobby_pb2.Table:
        """The table's seats, status and, once started, its game's summary."""
        return await self._call(calls.get_table(table_id))

    async def list_tables(
        self,
        status: lobby_pb2.TableStatus.ValueType = lobby_pb2.TABLE_STATUS_UNSPECIFIED,
        tournament_id: str = "",
        page_size: int = 50,
    ) -> AsyncGenerator[lobby_pb2.Table, None]:
        """Every table (newest first), fetching page after page as the iteration goes
        (`async for table in client.list_tables()`)."""
        token = ""
        while True:
            page = await self._call(calls.list_tables(status, tournament_id, page_size, token))
            for table in page.tables:
                yield table
            token = page.next_page_token
            if not token:
                return

    # -- tournaments ------------------------------------------------------------------------

    async def create_tournament(
        self,
        name: str,
        player_ids: Sequence[str],
        table_size: int,
        first_round: lobby_pb2.SeatingMethod.ValueType = lobby_pb2.SEATING_METHOD_RANDOM,
        seed_order: Sequence[str] = (),
        table_options: lobby_pb2.TableOptions | None = None,
        rounds: int = 0,
    ) -> lobby_pb2.Tournament:
        """A tournament of registered players playing `rounds` rounds (0: one), with a
        registered host's credential."""
        call = calls.create_tournament(
            name, player_ids, table_size, first_round, seed_order, table_options, rounds
        )
        return await self._call(call)

    async def start_round(self, tournament_id: str) -> lobby_pb2.Tournament:
        """Seats, creates and starts the tournament's next round (its host's credential)."""
        return await self._call(calls.start_round(tournament_id))

    async def get_tournament(self, tournament_id: str) -> lobby_pb2.Tournament:
        """The tournament's rounds, tables, results so far and standings."""
        return await self._call(calls.get_tournament(tournament_id))

    async def standings(self, tournament_id: str) -> list[lobby_pb2.Standing]:
        """Every player's standing after the results recorded so far, best first."""
        return list((await self.get_tournament(tournament_id)).standings)

    async def export_standings(
        self,
        tournament_id: str,
        format: lobby_pb2.StandingsFormat.ValueType = lobby_pb2.STANDINGS_FORMAT_CSV,
    ) -> str:
        """The standings as CSV (or JSON) text."""
        return (await self._call(calls.export_standings(tournament_id, format))).content

    async def watch_tournament(
        self, tournament_id: str, heartbeat_seconds: int = 15
    ) -> AsyncGenerator[lobby_pb2.WatchTournamentResponse, None]:
        """The tournament as it plays, heartbeats included, reopened after a broken stream, as
        `shikoku_sdk.Client.watch_tournament` (`async for item in ...`)."""
        request = calls.watch_tournament(tournament_id, heartbeat_seconds)
        failures = 0
        while True:
            call = self.lobby.WatchTournament(request, metadata=self.metadata())
            try:
                async for item in call:
                    failures = 0
                    yield item
                error = stream_ended()
            except grpc.RpcError as raw:
                error = ShikokuError.from_rpc_error(raw)
            except asyncio.CancelledError:
                error = dropped()
            finally:
                call.cancel()
            failures += 1
            delay = reconnect_after(error, failures, self.attempts)
            if delay is None:
                raise error
            await asyncio.sleep(delay)

    # -- notifications ----------------------------------------------------------------------

    async def set_notification_target(
        self,
        url: str,
        format: lobby_pb2.NotificationFormat.ValueType = lobby_pb2.NOTIFICATION_FORMAT_GENERIC,
    ) -> lobby_pb2.NotificationTarget:
        """Where this client's registered player is told of their turns (an empty url removes
        it); the answer carries the generic format's signing secret, shown only here."""
        return await self._call(calls.set_notification_target(url, format))

    async def notification_health(self, tournament_id: str) -> list[lobby_pb2.NotificationHealth]:
        """How each player's notifications have fared (the tournament host's credential)."""
        return list((await self._call(calls.notification_health(tournament_id))).players)

    # -- games ------------------------------------------------------------------------------

    async def state(self, game_id: str, version: int = 0) -> game_pb2.GameState:
        """The game's state at `version` (0: the latest)."""
        return await self._call(calls.state(game_id, version))

    async def legal_actions(self, game_id: str) -> game_pb2.ListLegalActionsResponse:
        """What the seats that must act may do now (every action, in one page)."""
        return await self._call(calls.legal_actions(game_id))

    async def act(
        self,
        game_id: str,
        action: game_pb2.Command | game_pb2.LegalAction,
        command_id: str | None = None,
        *,
        price: int | None = None,
        par: int | None = None,
        count: int | None = None,
        kind: game_pb2.DividendKind.ValueType | None = None,
        routes: Sequence[Route] | None = None,
        include_legal_actions: bool = False,
    ) -> game_pb2.SubmitCommandResponse:
        """Submits a command for the seat of this client's credential, idempotently (one
        command id for every attempt), as `shikoku_sdk.Client.act`."""
        corporation = calls.routes_needed(action, routes)
        if corporation:
            routes = (await self.best_routes(game_id, corporation)).routes
        choices = Choices(price, par, count, kind, routes)
        call = calls.act(game_id, action, command_id, choices, include_legal_actions)
        return await self._call(call)

    async def best_routes(self, game_id: str, corporation: str) -> routes_pb2.RouteSolution:
        """The routes that earn `corporation` the most at the game's latest version."""
        return await self._call(calls.best_routes(game_id, corporation))

    async def title(self, name: str = "1889") -> title_pb2.Title:
        """The title's data (TitleService.GetTitle)."""
        return await self._call(calls.title(name))

    def watch(
        self,
        game_id: str,
        from_version: int = 1,
        include_state: bool = False,
        *,
        heartbeat_seconds: int = 5,
        until_end: bool = True,
    ) -> Watch:
        """The game's events from `from_version` on, live, resumed after a broken connection
        (see `shikoku_sdk.aio.Watch`): `async for update in client.watch(game_id)`."""
        return Watch(self, game_id, from_version, include_state, heartbeat_seconds, until_end)
