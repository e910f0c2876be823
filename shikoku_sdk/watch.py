"""`Watch`: a game's events, live and in order, resumed by itself after a broken connection."""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import grpc

from shikoku.v1 import game_pb2
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.retries import reconnect_after, stream_ended

if TYPE_CHECKING:
    from shikoku_sdk.client import Client

GAME_ENDED = "GameEnded"


@dataclass(frozen=True)
class Update:
    """One event of a watched game; `state` is the game's state after it, when the server sent
    one (with include_state: on the last event of each batch)."""

    event: game_pb2.GameEvent
    state: game_pb2.GameState | None = None


class Resumption:
    """A watch's bookkeeping, whatever does its I/O (`Watch`, `shikoku_sdk.aio.Watch`): the
    request that resumes after the last version seen, which answers are new events, when the
    watch is over and how long to wait before reconnecting.

    `last_version` is the last event's version seen, `connections` how many streams were
    opened; a stream silent for more than `silence_limit` seconds (heartbeats included) is
    taken for dead."""

    reconnect_attempts = 10

    def __init__(
        self,
        game_id: str,
        from_version: int,
        include_state: bool,
        heartbeat_seconds: int,
        until_end: bool,
    ) -> None:
        self.game_id = game_id
        self.last_version = from_version - 1
        self.include_state = include_state
        self.heartbeat_seconds = heartbeat_seconds
        self.until_end = until_end
        self.connections = 0
        self._failures = 0

    @property
    def silence_limit(self) -> float:
        """Seconds without any answer after which the stream is dropped and opened again."""
        return float(2 * self.heartbeat_seconds + 1)

    def over_already(self, latest: game_pb2.GameState) -> bool:
        """Whether nothing will ever come: with `until_end`, the game (`latest`, its state as
        it stands) ended at or before the version to start after."""
        return self.until_end and not latest.acting_seats and latest.version <= self.last_version

    def request(self) -> game_pb2.WatchGameRequest:
        """The request of the next connection (counted), from the version after the last."""
        self.connections += 1
        return game_pb2.WatchGameRequest(
            game_id=self.game_id,
            from_version=self.last_version + 1,
            include_state=self.include_state,
            heartbeat_seconds=self.heartbeat_seconds,
        )

    def receive(self, response: game_pb2.WatchGameResponse) -> Update | None:
        """The update an answer brings, or None for a heartbeat or an event already seen."""
        self._failures = 0
        if not response.HasField("event") or response.event.version <= self.last_version:
            return None
        self.last_version = response.event.version
        state = response.state if response.HasField("state") else None
        return Update(response.event, state)

    def last(self, update: Update) -> bool:
        """Whether the watch ends after `update` (with `until_end`: the game's end)."""
        return self.until_end and update.event.type == GAME_ENDED

    def reconnect_after(self, error: ShikokuError) -> float | None:
        """Seconds to wait before reconnecting after the stream failed with `error`, or None
        to give up and raise it."""
        self._failures += 1
        return reconnect_after(error, self._failures, self.reconnect_attempts)


class Watch(Resumption):
    """An iterator of `Update`s: every event of a game once, in order, from a version onward.

    A broken stream (or one silent for more than twice the heartbeat interval) is reconnected
    from the last version seen + 1, so nothing is missed or repeated. Heartbeats are not
    yielded. With `until_end` the iteration stops after the game's last event (GameEnded), or
    at once when started past the end of a finished game; otherwise it goes on until
    `close()`. `disconnect()` drops the current connection (the watch then reconnects), e.g.
    to test resumption. Made by `Client.watch`.
    """

    def __init__(
        self,
        client: Client,
        game_id: str,
        from_version: int,
        include_state: bool,
        heartbeat_seconds: int,
        until_end: bool,
    ) -> None:
        super().__init__(game_id, from_version, include_state, heartbeat_seconds, until_end)
        self._client = client
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

    def _run(self) -> Generator[Update, None, None]:
        if self.until_end and self.over_already(self._client.state(self.game_id)):
            return
        life = self._client.life
        while not self._closed:
            self._call = life.open_stream(
                partial(
                    self._client.games.WatchGame, self.request(), metadata=self._client.metadata()
                )
            )
            if self._call is None:
                return  # the client is closed
            alive = _Watchdog(self._call, self.silence_limit)
            try:
                for response in self._call:
                    alive.beat()
                    update = self.receive(response)
                    if update is None:
                        continue
                    alive.hold()  # the consumer's time is not the server's silence
                    yield update
                    alive.beat()
                    if self.last(update):
                        return
                error = stream_ended()
            except grpc.RpcError as raw:
                error = ShikokuError.from_rpc_error(raw)
            finally:
                alive.stop()
                self._call.cancel()
            if self._closed or life.closed.is_set():
                return
            delay = self.reconnect_after(error)
            if delay is None:
                raise error
            life.closed.wait(delay)


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
