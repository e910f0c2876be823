"""What the rules service counts: commands decided, by type and outcome; rejections by reason;
commands decided again after losing an append race, and those given up; the games played here
lately; its caches' sizes (read when scraped)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from prometheus_client import Counter, Gauge

from infra.metrics import watch_cache

COMMANDS = Counter(
    "shikoku_commands",
    "Commands decided, by command type and outcome (accepted, rejected; duplicate: a command "
    "id already applied, answered from the log)",
    ["command", "outcome"],
)
REJECTIONS = Counter(
    "shikoku_command_rejections", "Commands the rules refused, by reason code", ["reason"]
)
RETRIES = Counter(
    "shikoku_command_retries",
    "Commands decided again because another writer appended first (a version conflict)",
)
CONTENDED = Counter(
    "shikoku_commands_contended",
    "Commands given up (CONTENDED) after losing the append race on every attempt",
)
ACTIVE_GAMES = Gauge(
    "shikoku_games_active",
    "Games this rules process accepted a command for in the last ACTIVE_SECONDS (with "
    "round-robin balancing every replica sees nearly every game: take the max, not the sum)",
)

#: A game is active while it had a command in this long.
ACTIVE_SECONDS = 300.0
#: Most games remembered as active (a bound on memory, far above any tournament).
ACTIVE_KEPT = 100_000


class ActiveGames:
    """The games that had a command accepted lately: one dict write per command; the count is
    made when metrics are scraped (in their thread: copying the times is one step under the
    GIL, so the loop's writes cannot change them underneath)."""

    def __init__(self, seconds: float = ACTIVE_SECONDS) -> None:
        self._seconds = seconds
        self._last: OrderedDict[str, float] = OrderedDict()

    def played(self, game_id: str) -> None:
        self._last[game_id] = time.monotonic()
        self._last.move_to_end(game_id)
        if len(self._last) > ACTIVE_KEPT:
            self._last.popitem(last=False)

    def count(self) -> int:
        horizon = time.monotonic() - self._seconds
        return sum(1 for at in list(self._last.values()) if at >= horizon)


def watch(
    active: ActiveGames, states: Callable[[], int], timelines: Callable[[], int], capacity: int
) -> None:
    """Reports the active games and the sizes of the state and timeline caches (each holding
    at most `capacity` games) when scraped."""
    ACTIVE_GAMES.set_function(active.count)
    watch_cache("rules_states", states, capacity)
    watch_cache("rules_timelines", timelines, capacity)
