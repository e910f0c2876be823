"""The optimal assignment of a corporation's trains to disjoint routes.

1. Every legal route is enumerated once (`candidates`), up to the largest stop count among the
   trains, each with its track as a bitset and its revenue for every value class.
2. Per train type the routes are grouped by revenue; a greedy assignment gives a lower bound on
   the optimum, and routes that cannot be part of any optimal assignment are dropped (`pools`).
   The rest are ranked and indexed by bitsets.
3. Branch and bound over the trains in their given order (`assign`).

Ties. Among assignments of maximum total revenue the solver returns the first in this order:
compare the trains in their given order, each by its route's revenue (higher first), then by the
route's `order.walk_key` in its smaller direction (smaller first); running no route comes after
every route (a train never runs a route that earns nothing).

`Solution.routes` lists the trains that run, in train order, each route written in the direction
with the smaller `walk_key`. `Solution.candidates` is the number of routes enumerated.
"""

from __future__ import annotations

from services.routes.assign import IDLE, FirstOptimal, Optimum
from services.routes.candidates import (
    DeadlineExceeded,
    RouteRecord,
    enumerate_routes,
    revenue_of,
    route_walk,
)
from services.routes.graph import Route, Solution, TrackGraph
from services.routes.index import GraphIndex, build_index
from services.routes.order import canonical
from services.routes.pools import Buckets, Conflicts, Pool, bucket, greedy, make_pool

#: When out of time, the fallback assignment looks at this many of the routes found.
FALLBACK_ROUTES = 20_000


def solve(graph: TrackGraph, deadline: float | None = None) -> Solution:
    """The maximum-revenue assignment of `graph.trains` to disjoint routes.

    `deadline` is a `time.monotonic()` value; past it the best assignment found so far is
    returned with `proven=False`.
    """
    index = build_index(graph)
    trains = graph.trains
    if not trains:
        return Solution((), 0, True, 0)
    stops = [t.stops for t in trains]
    max_stops = None if None in stops else max(s for s in stops if s is not None)
    enum = enumerate_routes(index, max_stops, deadline)

    types: list[tuple[str, int | None]] = []
    train_type: list[int] = []
    for train in trains:
        key = (train.name, train.stops)
        if key not in types:
            types.append(key)
        train_type.append(types.index(key))
    value_class = {name: k for k, cls in enumerate(enum.classes) for name in cls}
    classes = [value_class[t.name] for t in trains]

    def grouped(routes: list[RouteRecord], until: float | None) -> list[Buckets]:
        return [bucket(routes, value_class[name], s, until) for name, s in types]

    def cut_short() -> Solution:
        # Out of time: a greedy assignment over (a bounded share of) the routes found so far.
        some = grouped(enum.routes[:FALLBACK_ROUTES], None)
        _, chosen = _greedy([some[t] for t in train_type])
        return _solution(index, classes, chosen, False, len(enum.routes))

    if not enum.complete:
        return cut_short()
    try:
        type_buckets = grouped(enum.routes, deadline)
    except DeadlineExceeded:
        return cut_short()
    lower, best = _greedy([type_buckets[t] for t in train_type])
    upper = sum(type_buckets[t].top for t in train_type)
    conflicts = Conflicts(enum.connections)
    try:
        pools = [
            make_pool(tb, lower - (upper - tb.top), conflicts, deadline) for tb in type_buckets
        ]
        optimum = Optimum(pools, train_type, deadline, at_least=lower)
        optimum.run()
        if optimum.best is not None:
            best = _chosen(pools, train_type, optimum.best)
        choice = FirstOptimal(pools, train_type, deadline, max(optimum.best_total, 0)).run()
        assert choice is not None, "the optimum is reachable"
        best = _chosen(pools, train_type, choice)
    except DeadlineExceeded:
        return _solution(index, classes, best, False, len(enum.routes))
    return _solution(index, classes, best, True, len(enum.routes))


def _greedy(buckets: list[Buckets]) -> tuple[int, dict[int, RouteRecord]]:
    """The better of two greedy assignments: trains by best route first, and in given order."""
    by_bound = sorted(range(len(buckets)), key=lambda i: (-buckets[i].top, i))
    return max(
        (greedy(buckets, order) for order in (by_bound, list(range(len(buckets))))),
        key=lambda found: found[0],
    )


def _chosen(pools: list[Pool], train_type: list[int], choice: list[int]) -> dict[int, RouteRecord]:
    return {i: pools[train_type[i]].records[p] for i, p in enumerate(choice) if p != IDLE}


def _solution(
    index: GraphIndex,
    classes: list[int],
    chosen: dict[int, RouteRecord],
    proven: bool,
    candidates: int,
) -> Solution:
    routes = []
    for i in sorted(chosen):
        rec = chosen[i]
        nodes, segs = canonical(*route_walk(rec))
        routes.append(
            Route(
                train=i,
                nodes=tuple(index.nodes[n].id for n in nodes),
                segments=tuple(index.segments[s].id for s in segs),
                revenue=revenue_of(rec, classes[i]),
            )
        )
    return Solution(tuple(routes), sum(r.revenue for r in routes), proven, candidates)
