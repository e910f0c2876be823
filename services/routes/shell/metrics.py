"""What the routes service counts of its solver pool: the searches it holds (read when scraped)
against the most it takes, how long the searches it took lasted (waiting and running), those it
refused by reason, and the pools it started again after a worker died."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import Counter, Gauge, Histogram

SEARCHES = Gauge(
    "shikoku_route_searches",
    "Route searches in the solver pool: running in a worker or waiting for one",
)
SEARCH_PLACES = Gauge(
    "shikoku_route_search_places",
    "The most route searches the pool holds (SHIKOKU_ROUTES_WORKERS + SHIKOKU_ROUTES_QUEUE)",
)
SEARCH_SECONDS = Histogram(
    "shikoku_route_search_seconds",
    "Route searches sent to the pool, from taken to answered (waiting for a worker included)",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
REFUSED = Counter(
    "shikoku_route_searches_refused",
    "Route searches refused, by reason (SOLVER_BUSY: the pool was full; SOLVER_LOST: the "
    "worker died)",
    ["reason"],
)
POOLS_REPLACED = Counter(
    "shikoku_route_pools_replaced", "Solver pools started again because a worker process died"
)


def watch_pool(searches: Callable[[], int], places: int) -> None:
    SEARCHES.set_function(searches)
    SEARCH_PLACES.set(places)
