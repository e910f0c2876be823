"""`Client`: the Shikoku 1889 public API over one gRPC channel, with retries and resumption."""

from __future__ import annotations

import contextlib
import copy
import math
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

import grpc
from google.protobuf import json_format

from shikoku.v1 import (
    game_pb2,
    game_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
    routes_pb2,
    routes_pb2_grpc,
)
from shikoku_sdk.channel import BALANCED, api_key_from_env, with_api_key
from shikoku_sdk.errors import ShikokuError

Response = TypeVar("Response")

# Worth trying again: the call may not have reached the server, its answer was lost, or it
# lost a race with a concurrent change (ABORTED, which wrote nothing).
TRANSIENT = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.ABORTED}
)
# A watch reconnects after these too (CANCELLED: the connection was dropped, e.g. by us).
WATCH_RECONNECT = TRANSIENT | {grpc.StatusCode.CANCELLED, grpc.StatusCode.RESOURCE_EXHAUSTED}
GAME_ENDED = "GameEnded"


@dataclass(frozen=True)
class Update:
    """One event of a watched game; `state` is the game's state after it, when the server sent
    one (with include_state: on the last event of each batch)."""

    event: game_pb2.GameEvent
    state: game_pb2.GameState | None = None


def state_document(state: game_pb2.GameState) -> dict[str, Any]:
    """The state document (players, corporations, market, board...) as plain Python values.
    Numbers come as floats, as JSON has them."""
    return json_format.MessageToDict(state.state)


class Client:
    """A client of the gateway at `address`, acting with `credential` (a player credential, or a
    seat or host token) when one is given, as the client application whose key is `api_key`
    (default: $SHIKOKU_API_KEY). Use it as a context manager, or call `close()`.

    Reads, `act`, `register_player`, `create_table` and `join_table` are retried on UNAVAILABLE,
    DEADLINE_EXCEEDED and ABORTED (and after the delay a RESOURCE_EXHAUSTED asks for); the
    writes among them carry one command or request id across their retries, so the server acts
    once. Other calls are not retried. Every refusal is raised as `ShikokuError`.
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
        self.credential = credential
        self.timeout = timeout
        self.attempts = attempts
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(self._channel)
        self.games = game_pb2_grpc.GameServiceStub(self._channel)
        self.routes = routes_pb2_grpc.RoutesServiceStub(self._channel)

    # -- the channel ------------------------------------------------------------------------

    def with_credential(self, credential: str) -> Client:
        """A view of this client acting with another credential over the same channel (closing
        the view leaves the channel open)."""
        view = copy.copy(self)
        view.credential = credential
        view._owns_channel = False
        return view

    def close(self) -> None:
        if self._owns_channel:
            self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.credential}"),) if self.credential else ()

    def _call(
        self, rpc: Callable[..., Response], request: object, *, retry: bool = False
    ) -> Response:
        """One unary call; with `retry`, tried again (the same request) on transient errors."""
        for attempt in range(1, self.attempts + 1):
            try:
                return rpc(request, metadata=self._metadata(), timeout=self.timeout)
            except grpc.RpcError as raw:
                error = ShikokuError.from_rpc_error(raw)
                again = error.code in TRANSIENT or (
                    error.code == grpc.StatusCode.RESOURCE_EXHAUSTED
                    and error.retry_delay is not None
                )
                if not retry or not again or attempt == self.attempts:
                    raise error from None
                time.sleep(_backoff(attempt, error))
        raise AssertionError("unreachable")

    # -- lobby ------------------------------------------------------------------------------

    def register_player(
        self, display_name: str, role: lobby_pb2.Role.ValueType = lobby_pb2.ROLE_PLAYER
    ) -> lobby_pb2.RegisterPlayerResponse:
        request = lobby_pb2.RegisterPlayerRequest(
            display_name=display_name, role=role, request_id=_new_id()
        )
        return self._call(self.lobby.RegisterPlayer, request, retry=True)

    def create_table(
        self,
        seat_count: int,
        options: lobby_pb2.TableOptions | None = None,
        display_name: str = "",
    ) -> lobby_pb2.CreateTableResponse:
        request = lobby_pb2.CreateTableRequest(
            seat_count=seat_count, options=options, display_name=display_name, request_id=_new_id()
        )
        return self._call(self.lobby.CreateTable, request, retry=True)

    def join_table(
        self, table_id: str, player_name: str, seat: int = 0
    ) -> lobby_pb2.JoinTableResponse:
        request = lobby_pb2.JoinTableRequest(
            table_id=table_id, player_name=player_name, seat=seat, request_id=_new_id()
        )
        return self._call(self.lobby.JoinTable, request, retry=True)

    def set_ready(self, table_id: str, ready: bool = True) -> lobby_pb2.Table:
        return self._call(
            self.lobby.SetReady, lobby_pb2.SetReadyRequest(table_id=table_id, ready=ready)
        )

    def start_table(self, table_id: str) -> lobby_pb2.StartTableResponse:
        return self._call(self.lobby.StartTable, lobby_pb2.StartTableRequest(table_id=table_id))

    def end_game(self, table_id: str) -> lobby_pb2.Table:
        """Ends the table's running game where it stands (the host's credential)."""
        return self._call(self.lobby.EndGame, lobby_pb2.EndGameRequest(table_id=table_id))

    def get_table(self, table_id: str) -> lobby_pb2.Table:
        request = lobby_pb2.GetTableRequest(table_id=table_id)
        return self._call(self.lobby.GetTable, request, retry=True)

    def list_tables(
        self,
        status: lobby_pb2.TableStatus.ValueType = lobby_pb2.TABLE_STATUS_UNSPECIFIED,
        tournament_id: str = "",
        page_size: int = 50,
    ) -> Iterator[lobby_pb2.Table]:
        """Every table (newest first), fetching page after page as the iteration goes."""
        token = ""
        while True:
            request = lobby_pb2.ListTablesRequest(
                page_size=page_size, page_token=token, status=status, tournament_id=tournament_id
            )
            page = self._call(self.lobby.ListTables, request, retry=True)
            yield from page.tables
            token = page.next_page_token
            if not token:
                return

    # -- games ------------------------------------------------------------------------------

    def state(self, game_id: str, version: int = 0) -> game_pb2.GameState:
        """The game's state at `version` (0: the latest)."""
        request = game_pb2.GetStateRequest(game_id=game_id, version=version)
        return self._call(self.games.GetState, request, retry=True)

    def legal_actions(self, game_id: str) -> game_pb2.ListLegalActionsResponse:
        request = game_pb2.ListLegalActionsRequest(game_id=game_id)
        return self._call(self.games.ListLegalActions, request, retry=True)

    def act(
        self, game_id: str, command: game_pb2.Command, command_id: str | None = None
    ) -> game_pb2.SubmitCommandResponse:
        """Submits `command` for the seat of this client's credential. Retries carry the same
        command id (a new UUID unless given), so the server applies the command at most once."""
        request = game_pb2.SubmitCommandRequest(
            game_id=game_id, command=command, command_id=command_id or _new_id()
        )
        return self._call(self.games.SubmitCommand, request, retry=True)

    def best_routes(self, game_id: str, corporation: str) -> routes_pb2.RouteSolution:
        request = routes_pb2.OptimizeRequest(game_id=game_id, corporation=corporation)
        return self._call(self.routes.Optimize, request, retry=True)

    def watch(
        self,
        game_id: str,
        from_version: int = 1,
        include_state: bool = False,
        *,
        heartbeat_seconds: int = 5,
        until_end: bool = True,
    ) -> Watch:
        """The game's events from `from_version` on, live (see `Watch`)."""
        return Watch(self, game_id, from_version, include_state, heartbeat_seconds, until_end)


class Watch:
    """An iterator of `Update`s: every event of a game once, in order, from a version onward.

    A broken stream (or one silent for more than twice the heartbeat interval) is reconnected
    from the last version seen + 1, so nothing is missed or repeated. Heartbeats are not
    yielded. With `until_end` the iteration stops after the game's last event (GameEnded), or
    at once when started past the end of a finished game; otherwise it goes on until
    `close()`. `disconnect()` drops the current connection (the watch then reconnects), e.g.
    to test resumption.
    """

    reconnect_attempts = 10

    def __init__(
        self,
        client: Client,
        game_id: str,
        from_version: int,
        include_state: bool,
        heartbeat_seconds: int,
        until_end: bool,
    ) -> None:
        self._client = client
        self.game_id = game_id
        self.last_version = from_version - 1
        self.include_state = include_state
        self.heartbeat_seconds = heartbeat_seconds
        self.until_end = until_end
        self.connections = 0
        self._call: Any = None
        self._closed = False
        self._updates = self._run()

    def __iter__(self) -> Watch:
        return self

    def __next__(self) -> Update:
        return next(self._updates)

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def disconnect(self) -> None:
        """Drops the current connection; the next item comes over a new one."""
        if self._call is not None:
            self._call.cancel()

    def close(self) -> None:
        """Ends the watch (from any thread: an iteration in progress stops)."""
        self._closed = True
        self.disconnect()
        with contextlib.suppress(ValueError):  # "generator already executing": it will stop
            self._updates.close()

    def _over_already(self) -> bool:
        """Whether the game ended at or before the version to start after."""
        latest = self._client.state(self.game_id)
        return not latest.acting_seats and latest.version <= self.last_version

    def _run(self) -> Generator[Update, None, None]:
        if self.until_end and self._over_already():
            return  # nothing will ever come
        failures = 0
        while not self._closed:
            request = game_pb2.WatchGameRequest(
                game_id=self.game_id,
                from_version=self.last_version + 1,
                include_state=self.include_state,
                heartbeat_seconds=self.heartbeat_seconds,
            )
            self._call = self._client.games.WatchGame(request, metadata=self._client._metadata())
            self.connections += 1
            alive = _Watchdog(self._call, 2 * self.heartbeat_seconds + 1)
            try:
                for response in self._call:
                    alive.beat()
                    failures = 0
                    if not response.HasField("event"):
                        continue  # a heartbeat: the connection is alive
                    if response.event.version <= self.last_version:
                        continue
                    self.last_version = response.event.version
                    state = response.state if response.HasField("state") else None
                    alive.hold()  # the consumer's time is not the server's silence
                    yield Update(response.event, state)
                    alive.beat()
                    if self.until_end and response.event.type == GAME_ENDED:
                        return
                # The server ended the stream (it never does unless shutting down): resume.
                error = ShikokuError(grpc.StatusCode.UNAVAILABLE, "the stream ended")
            except grpc.RpcError as raw:
                error = ShikokuError.from_rpc_error(raw)
            finally:
                alive.stop()
                self._call.cancel()
            failures += 1
            if self._closed:
                return
            if error.code not in WATCH_RECONNECT or failures > self.reconnect_attempts:
                raise error
            time.sleep(_backoff(failures, error) if failures > 1 else 0.0)


class _Watchdog:
    """Cancels a streaming call that has been silent for `limit` seconds (heartbeats included),
    so that a dead connection is noticed and replaced."""

    def __init__(self, call: Any, limit: float) -> None:
        self._call = call
        self._limit = limit
        self._last = time.monotonic()
        self._stopped = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    def beat(self) -> None:
        self._last = time.monotonic()

    def hold(self) -> None:
        """Not silent until the next beat (the consumer is busy with an item)."""
        self._last = math.inf

    def stop(self) -> None:
        self._stopped.set()

    def _watch(self) -> None:
        while not self._stopped.wait(min(self._limit, 1.0)):
            if time.monotonic() - self._last > self._limit:
                self._call.cancel()
                return


def _backoff(attempt: int, error: ShikokuError) -> float:
    if error.retry_delay is not None:
        return error.retry_delay
    return float(min(0.1 * 2 ** (attempt - 1), 5.0))


def _new_id() -> str:
    """A fresh request or command id: retries of one call reuse it, so it takes effect once."""
    return str(uuid.uuid4())
