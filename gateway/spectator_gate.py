"""Keeping spectators where their table puts them: the lobby says how far behind a caller
watches a game (or refuses them), and the game's log says what that lets them see."""

from __future__ import annotations

import grpc

from gateway.spectating import SpectatorView
from shikoku.eventstore import EventStore
from shikoku.forwarding import relay_error
from shikoku.grpc_server import Context
from shikoku.internal.v1 import lobby_pb2 as internal_lobby_pb2
from shikoku.internal.v1 import lobby_pb2_grpc as internal_lobby_pb2_grpc
from shikoku.metadata import optional_bearer_token
from shikoku.rejection import Kind, Rejected


class SpectatorGate:
    def __init__(
        self,
        credentials: internal_lobby_pb2_grpc.CredentialServiceAsyncStub,
        events: EventStore,
    ) -> None:
        self._credentials = credentials
        self._events = events

    async def delay(self, game_id: str, context: Context) -> int:
        """How many actions behind the caller watches `game_id` (0: as it stands)."""
        token = optional_bearer_token(context.invocation_metadata())
        try:
            terms = await self._credentials.CheckWatching(
                internal_lobby_pb2.ResolveRequest(token=token, game_id=game_id), timeout=5
            )
        except grpc.aio.AioRpcError as error:
            await relay_error(error, context)
            raise
        return terms.delay_actions

    async def _view(self, game_id: str, delay: int) -> SpectatorView:
        return SpectatorView(delay).see_all(await self._events.read(game_id))

    async def visible_version(self, game_id: str, requested: int, context: Context) -> int:
        """The version to show for a request of `requested` (0: the latest the caller may
        see, which is 0 again for a caller who sees the game as it stands)."""
        delay = await self.delay(game_id, context)
        if not delay:
            return requested
        view = await self._view(game_id, delay)
        if requested > view.visible:
            raise _beyond(view, delay)
        return requested or view.visible

    async def require_present(self, game_id: str, context: Context) -> None:
        """Refuses a caller who may not see the game as it stands now."""
        delay = await self.delay(game_id, context)
        if delay:
            view = await self._view(game_id, delay)
            if view.visible < view.latest:
                raise _beyond(view, delay)


def _beyond(view: SpectatorView, delay: int) -> Rejected:
    return Rejected(
        "BEYOND_SPECTATOR_DELAY",
        f"spectators of this table watch {delay} actions behind: up to version {view.visible}",
        Kind.PERMISSION_DENIED,
        {"visible_version": view.visible, "delay_actions": delay},
    )
