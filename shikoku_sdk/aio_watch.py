"""`shikoku_sdk.aio.Watch`: a game's events, live and in order, over grpc.aio, resumed by itself
after a broken connection. Its bookkeeping is `shikoku_sdk.watch.Resumption`'s, as the sync
`Watch`'s; a silent stream is noticed by a timeout on each read instead of a thread."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

import grpc

from shikoku_sdk.aio_channel import dropped
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.retries import stream_ended
from shikoku_sdk.watch import Resumption, Update

if TYPE_CHECKING:
    from shikoku_sdk.aio_client import Client


class Watch(Resumption):
    """An async iterator of `Update`s (`async for update in client.watch(game_id)`): every event
    of a game once, in order, from a version onward, as `shikoku_sdk.Watch`: reconnected from
    the last version seen + 1 after a broken stream or one silent for more than twice the
    heartbeat interval; heartbeats are not yielded; with `until_end` it stops after the game's
    last event. `disconnect()` drops the current connection (the watch reconnects); `close()`
    (or leaving `async with`) ends it. Made by `shikoku_sdk.aio.Client.watch`."""

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

    def __aiter__(self) -> Watch:
        return self

    async def __anext__(self) -> Update:
        return await anext(self._updates)

    async def __aenter__(self) -> Watch:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def disconnect(self) -> None:
        """Drops the current connection; the next item comes over a new one."""
        if self._call is not None:
            self._call.cancel()

    async def close(self) -> None:
        """Ends the watch (from any task: an iteration in progress stops)."""
        self._closed = True
        self.disconnect()
        with contextlib.suppress(RuntimeError):  # "already running": it stops by itself
            await self._updates.aclose()

    async def _next_response(self, responses: Any) -> Any:
        """The stream's next answer; TimeoutError after `silence_limit` seconds without one."""
        async with asyncio.timeout(self.silence_limit):
            return await anext(responses)

    async def _run(self) -> AsyncGenerator[Update, None]:
        if self.until_end and self.over_already(await self._client.state(self.game_id)):
            return
        while not self._closed:
            request = self.request()
            self._call = self._client.games.WatchGame(request, metadata=self._client.metadata())
            responses = aiter(self._call)
            try:
                while True:
                    update = self.receive(await self._next_response(responses))
                    if update is None:
                        continue
                    yield update
                    if self.last(update):
                        return
            except StopAsyncIteration:
                error = stream_ended()
            except TimeoutError:
                error = ShikokuError(grpc.StatusCode.CANCELLED, "the stream fell silent")
            except grpc.RpcError as raw:
                error = ShikokuError.from_rpc_error(raw)
            except asyncio.CancelledError:
                error = dropped()
            finally:
                self._call.cancel()
            if self._closed:
                return
            delay = self.reconnect_after(error)
            if delay is None:
                raise error
            await asyncio.sleep(delay)
