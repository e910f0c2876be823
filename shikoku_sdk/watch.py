"""`Watch`: a game's events, live and in order, resumed by itself after a broken connection."""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc

from shikoku.v1 import game_pb2
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.retries import WATCH_RECONNECT, backoff

if TYPE_CHECKING:
    from shikoku_sdk.client import Client

GAME_ENDED = "GameEnded"


@dataclass(frozen=True)
class Update:
    """One event of a watched game; `state` is the game's state after it, when the server sent
    one (with include_state: on the last event of each batch)."""

    event: game_pb2.GameEvent
    state: game_pb2.GameState | None = None


class Watch:
    """An iterator of `Update`s: every event of a game once, in order, from a version onward.

    A broken stream (or one silent for more than twice the heartbeat interval) is reconnected
    from the last version seen + 1, so nothing is missed or repeated. Heartbeats are not
    yielded. With `until_end` the iteration stops after the game's last event (GameEnded), or
    at once when started past the end of a finished game; otherwise it goes on until
    `close()`. `disconnect()` drops the current connection (the watch then reconnects), e.g.
    to test resumption. Made by `Client.watch`.
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
            self._call = self._client.games.WatchGame(request, metadata=self._client.metadata())
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
            time.sleep(backoff(failures, error) if failures > 1 else 0.0)


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
