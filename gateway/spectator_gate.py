"""Keeping spectators where their table puts them: the call's grant says how far behind the
caller watches a game, and the game's log says what that lets them see."""

from __future__ import annotations

from collections import OrderedDict

from gateway.auth import current_grant
from gateway.caching import remember
from gateway.spectating import SpectatorView
from infra.eventlog import EventLog
from kernel.rejection import Kind, Rejected

# Games whose spectator view is kept up to date between reads (a few ints per action each).
VIEWS = 2_000


class SpectatorGate:
    def __init__(self, events: EventLog) -> None:
        self._events = events
        self._views: OrderedDict[tuple[str, int], SpectatorView] = OrderedDict()

    async def _view(self, game_id: str, delay: int) -> SpectatorView:
        """The game's view for spectators `delay` actions behind, brought up to date by reading
        only the events it has not seen yet."""
        key = (game_id, delay)
        view = self._views.get(key) or SpectatorView(delay)
        view.see_all(await self._events.read(game_id, view.latest + 1))
        return remember(self._views, key, view, VIEWS)

    async def visible_version(self, game_id: str, requested: int) -> int:
        """The version to show for a request of `requested` (0: the latest the caller may
        see, which is 0 again for a caller who sees the game as it stands)."""
        delay = current_grant().delay_actions
        if not delay:
            return requested
        view = await self._view(game_id, delay)
        if requested > view.visible:
            raise _beyond(view, delay)
        return requested or view.visible

    async def require_present(self, game_id: str) -> None:
        """Refuses a caller who may not see the game as it stands now."""
        delay = current_grant().delay_actions
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
