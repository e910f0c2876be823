"""`Client`: the Shikoku 1889 public API over one gRPC channel, with retries and resumption."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, TypeVar

import grpc

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
from shikoku_sdk.calls import Call, Response, Route
from shikoku_sdk.channel import BALANCED, api_key_from_env, credential_metadata, with_api_key
from shikoku_sdk.commands import Choices
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.retries import reconnect_after, retry_after, stream_ended, worth_retrying
from shikoku_sdk.watch import Watch

Stream = TypeVar("Stream")


class ChannelLife:
    """Whether a client's channel is still open, shared by the client and its views. A stream
    is opened only under its lock and never once the channel is closed: grpc can crash the
    process (SIGSEGV) when a call is made on a channel being closed, which is what a watch
    reconnecting after `close()` cancelled it would do."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.closed = threading.Event()

    def open_stream(self, open_call: Callable[[], Stream]) -> Stream | None:
        """`open_call()`'s stream, or None once the channel is closed."""
        with self._lock:
            return None if self.closed.is_set() else open_call()

    def close(self, channel: grpc.Channel) -> None:
        """Closes `channel` once no stream is being opened on it; no stream opens after."""
        with self._lock:
            if not self.closed.is_set():
                self.closed.set()
                channel.close()


class Client:
    """A client of the gateway at `address`, acting with `credential` (a player credential, or a
    seat or host token) when one is given, as the client application whose key is `api_key`
    (default: $SHIKOKU_API_KEY), sent as `x-api-key` on every call. Use it as a context
    manager, or call `close()`; `with_credential` gives a view acting for someone else over the
    same channel.

    Reads, `act` and the lobby calls that create something (`register_player`, `create_table`,
    `join_table`, `replace_seat`, `create_tournament`, `start_round`), and `set_ready` and
    `start_table`, are retried on UNAVAILABLE, DEADLINE_EXCEEDED and ABORTED (and after the
    delay a RESOURCE_EXHAUSTED asks for), up to `attempts` times; the writes among them carry
    one command or request id across their retries, so the server acts once. Other calls are
    not retried. Every refusal is raised as `ShikokuError`. `shikoku_sdk.aio.Client` is the
    same over grpc.aio, its methods coroutines.
    """

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
        channel = (
            grpc.secure_channel(address, channel_credentials, options=BALANCED)
            if channel_credentials
            else grpc.insecure_channel(address, options=BALANCED)
        )
        channel = with_api_key(channel, api_key_from_env() if api_key is None else api_key)
        self._channel = grpc.intercept_channel(channel, *interceptors) if interceptors else channel
        self._owns_channel = True
        self.life = ChannelLife()
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

    def close(self) -> None:
        """Closes the channel (unless this client is a view made by `with_credential`); the
        watches over it end instead of reconnecting."""
        if self._owns_channel:
            self.life.close(self._channel)

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The call metadata naming this client's credential (the API key is added by the
        channel)."""
        return credential_metadata(self.credential)

    def _call(self, call: Call[Response]) -> Response:
        """Performs `call`, trying it again as `retry_after` decides."""
        rpc = getattr(getattr(self, call.service), call.method)
        attempt = 0
        while True:
            attempt += 1
            if self.life.closed.is_set():
                raise ShikokuError(grpc.StatusCode.CANCELLED, "the client is closed")
            try:
                answer: Response = rpc(call.request, metadata=self.metadata(), timeout=self.timeout)
                return answer
            except grpc.RpcError as raw:
                error = ShikokuError.from_rpc_error(raw)
                delay = retry_after(call.retry, error, attempt, self.attempts)
                if delay is None:
                    raise error from None
                self.life.closed.wait(delay)

    # -- players and hosts ------------------------------------------------------------------

    def register_player(
        self, display_name: str, role: lobby_pb2.Role.ValueType = lobby_pb2.ROLE_PLAYER
    ) -> lobby_pb2.RegisterPlayerResponse:
        """Registers a player (or, with ROLE_HOST and an API key that allows hosts, a host):
        the answer's `credential` acts for every seat they take (`with_credential`)."""
        return self._call(calls.register_player(display_name, role))

    def register_host(self, display_name: str) -> lobby_pb2.RegisterPlayerResponse:
        """Registers a host, who creates tournaments and administers their tables."""
        return self.register_player(display_name, lobby_pb2.ROLE_HOST)

    def revoke_credential(self) -> None:
        """Revokes this client's registered credential: it no longer works anywhere."""
        self._call(calls.revoke_credential())

    # -- tables -----------------------------------------------------------------------------

    def create_table(
        self,
        seat_count: int,
        options: lobby_pb2.TableOptions | None = None,
        display_name: str = "",
    ) -> lobby_pb2.CreateTableResponse:
        """A new table of `seat_count` (2-6) seats; the answer's `host_token` administers it."""
        return self._call(calls.create_table(seat_count, options, display_name))

    def join_table(
        self, table_id: str, player_name: str, seat: int = 0
    ) -> lobby_pb2.JoinTableResponse:
        """Takes `seat` (0: the lowest free one); the answer's `seat_token` acts for it (a
        registered player's own credential does too)."""
        return self._call(calls.join_table(table_id, player_name, seat))

    def leave_table(self, table_id: str) -> lobby_pb2.Table:
        """Gives up this client's seat before the table starts (a seat's credential)."""
        return self._call(calls.leave_table(table_id))

    def set_ready(self, table_id: str, ready: bool = True) -> lobby_pb2.Table:
        """Marks this client's seat ready (or not); the table starts by itself once every seat
        is taken and ready."""
        return self._call(calls.set_ready(table_id, ready))

    def start_table(self, table_id: str) -> lobby_pb2.StartTableResponse:
        """Starts the table and its game (the host's credential). Safe to retry: a retry that
        finds the table started by the attempt whose answer was lost returns that game."""
        try:
            return self._call(calls.start_table(table_id, retry=False))
        except ShikokuError as error:
            if not worth_retrying(error):
                raise
        try:
            return self._call(calls.start_table(table_id, retry=True))
        except ShikokuError as error:
            if not calls.started_elsewhere(error):
                raise
            return calls.started(self.get_table(table_id))

    def end_game(self, table_id: str) -> lobby_pb2.Table:
        """Ends the table's running game where it stands (the host's credential)."""
        return self._call(calls.end_game(table_id))

    def abandon_table(self, table_id: str) -> lobby_pb2.Table:
        """Closes the table (the host's credential); a running game ends as it stands."""
        return self._call(calls.abandon_table(table_id))

    def replace_seat(self, table_id: str, seat: int, player_id: str) -> lobby_pb2.JoinTableResponse:
        """Gives a taken seat to another registered player (the host's credential)."""
        return self._call(calls.replace_seat(table_id, seat, player_id))

    def get_table(self, table_id: str) -> lobby_pb2.Table:
        """The table's seats, status and, once started, its game's summary."""
        return self._call(calls.get_table(table_id))

    def list_tables(
        self,
        status: lobby_pb2.TableStatus.ValueType = lobby_pb2.TABLE_STATUS_UNSPECIFIED,
        tournament_id: str = "",
        page_size: int = 50,
    ) -> Iterator[lobby_pb2.Table]:
        """Every table (newest first), fetching page after page as the iteration goes."""
        token = ""
        while True:
            page = self._call(calls.list_tables(status, tournament_id, page_size, token))
            yield from page.tables
            token = page.next_page_token
            if not token:
                return

    # -- tournaments ------------------------------------------------------------------------

    def create_tournament(
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
        return self._call(call)

    def start_round(self, tournament_id: str) -> lobby_pb2.Tournament:
        """Seats, creates and starts the tournament's next round (its host's credential)."""
        return self._call(calls.start_round(tournament_id))

    def get_tournament(self, tournament_id: str) -> lobby_pb2.Tournament:
        """The tournament's rounds, tables, results so far and standings."""
        return self._call(calls.get_tournament(tournament_id))

    def standings(self, tournament_id: str) -> list[lobby_pb2.Standing]:
        """Every player's standing after the results recorded so far, best first."""
        return list(self.get_tournament(tournament_id).standings)

    def export_standings(
        self,
        tournament_id: str,
        format: lobby_pb2.StandingsFormat.ValueType = lobby_pb2.STANDINGS_FORMAT_CSV,
    ) -> str:
        """The standings as CSV (or JSON) text."""
        return self._call(calls.export_standings(tournament_id, format)).content

    def watch_tournament(
        self, tournament_id: str, heartbeat_seconds: int = 15
    ) -> Iterator[lobby_pb2.WatchTournamentResponse]:
        """The tournament as it plays (WatchTournament): the tournament first, then each change
        of a table of its current round, and the tournament again when a round starts or a
        result is recorded; heartbeats are yielded too, so a caller can redraw. A broken
        stream is opened again (it starts with the tournament, so nothing is lost); the
        iteration ends when the caller stops it, the client is closed or a call is refused."""
        request = calls.watch_tournament(tournament_id, heartbeat_seconds)
        failures = 0
        while True:
            call = self.life.open_stream(
                lambda: self.lobby.WatchTournament(request, metadata=self.metadata())
            )
            if call is None:
                return
            try:
                for item in call:
                    failures = 0
                    yield item
                error = stream_ended()
            except grpc.RpcError as raw:
                error = ShikokuError.from_rpc_error(raw)
            finally:
                call.cancel()  # type: ignore[no-untyped-call, unused-ignore]
            if self.life.closed.is_set():
                return
            failures += 1
            delay = reconnect_after(error, failures, self.attempts)
            if delay is None:
                raise error
            self.life.closed.wait(delay)

    # -- notifications ----------------------------------------------------------------------

    def set_notification_target(
        self,
        url: str,
        format: lobby_pb2.NotificationFormat.ValueType = lobby_pb2.NOTIFICATION_FORMAT_GENERIC,
    ) -> lobby_pb2.NotificationTarget:
        """Where this client's registered player is told of their turns (an empty url removes
        it); the answer carries the generic format's signing secret, shown only here."""
        return self._call(calls.set_notification_target(url, format))

    def notification_health(self, tournament_id: str) -> list[lobby_pb2.NotificationHealth]:
        """How each player's notifications have fared, in the tournament's player order (its
        host's credential)."""
        return list(self._call(calls.notification_health(tournament_id)).players)

    # -- games ------------------------------------------------------------------------------

    def state(self, game_id: str, version: int = 0) -> game_pb2.GameState:
        """The game's state at `version` (0: the latest)."""
        return self._call(calls.state(game_id, version))

    def legal_actions(self, game_id: str) -> game_pb2.ListLegalActionsResponse:
        """What the seats that must act may do now (every action, in one page)."""
        return self._call(calls.legal_actions(game_id))

    def act(
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
        """Submits a command for the seat of this client's credential: `action` is a Command,
        or a LegalAction taken with the choices given and the defaults of `to_command` for the
        rest; a run_routes option without `routes` runs the best routes `best_routes` finds.
        With `include_legal_actions`, the answer's `legal_actions` lists what may be done after
        the command (no second call needed).

        Idempotent: every attempt carries one command id (a new UUID unless given), so
        however often a lost answer makes it retry, the server applies the command once and
        answers a repeat with the first answer."""
        corporation = calls.routes_needed(action, routes)
        if corporation:
            routes = self.best_routes(game_id, corporation).routes
        choices = Choices(price, par, count, kind, routes)
        return self._call(calls.act(game_id, action, command_id, choices, include_legal_actions))

    def best_routes(self, game_id: str, corporation: str) -> routes_pb2.RouteSolution:
        """The routes that earn `corporation` the most at the game's latest version."""
        return self._call(calls.best_routes(game_id, corporation))

    def title(self, name: str = "1889") -> title_pb2.Title:
        """The title's data (TitleService.GetTitle): its map, tiles, trains, phases and
        privates."""
        return self._call(calls.title(name))

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
        (see `Watch`)."""
        return Watch(self, game_id, from_version, include_state, heartbeat_seconds, until_end)
