"""What the gateway counts: calls refused by the rate limits and calls let through uncharged
(Redis did not answer the limiter); and, read when scraped, the games watched and their
watchers, the game streams open, and the sizes of its caches."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import Counter, Gauge

from infra.metrics import watch_cache

RATE_LIMITED = Counter(
    "shikoku_rate_limited_calls",
    "Calls refused with RESOURCE_EXHAUSTED RATE_LIMITED: their caller's bucket was empty",
)
UNCHARGED = Counter(
    "shikoku_rate_limit_uncharged_calls",
    "Calls let through without charging their bucket because Redis did not answer the limiter",
)
WATCHED_GAMES = Gauge(
    "shikoku_watched_games", "Games this gateway reads the log of for its watchers (one feed each)"
)
WATCHERS = Gauge("shikoku_game_watchers", "Streams following a game's feed (StreamEvents, Watch)")
OPEN_STREAMS = Gauge(
    "shikoku_game_streams_open", "Game streams open through this gateway, counted by the quota"
)


def watch(
    *,
    watched_games: Callable[[], int],
    watchers: Callable[[], int],
    open_streams: Callable[[], int],
    caches: dict[str, tuple[Callable[[], int], int]],
) -> None:
    """Reports these when scraped; `caches` by name: (their size, their capacity)."""
    WATCHED_GAMES.set_function(watched_games)
    WATCHERS.set_function(watchers)
    OPEN_STREAMS.set_function(open_streams)
    for name, (size, capacity) in caches.items():
        watch_cache(name, size, capacity)
