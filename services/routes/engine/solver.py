"""The optimal assignment of a corporation's trains to disjoint routes.

1. Every legal route is enumerated once (`candidates`), up to the largest stop count among the
   trains, each with its track as a bitset and its revenue for every value class.
2. Per train type the routes are grouped by revenue; a greedy assignment gives a lower bound on
   the optimum, and routes that cannot be part of any optimal assignment are dropped (`pools`).
3. Branch and bound over the trains in their given order (`assign`): first the optimum total,
   then the first assignment in tie-break order that reaches it.

When the enumeration passes `QUICK_AFTER` routes, the solver first builds a quick answer: each
train in turn (most centres first) takes the best route among the first few thousand found when
always trying the most valuable centres first. That answer is what a deadline (or `MAX_ROUTES`)
falls back on, and its total is a lower bound that shrinks the pools of the exact search.

A single train on such a board is not enumerated further: `deep` searches its best route from
route ends, memoised, with the quick answer as its first lower bound (same optimum, same
tie-break). Nor is one D-train beside limited trains past `BESIDE_AFTER` routes: `beside`
lists the others' routes only and searches the D's from their ends beside them.

Ties. Among assignments of maximum total revenue the solver returns the first in this order:
compare the trains in their given order, each by its route's revenue (higher first), then by the
route's `order.walk_key` in its smaller direction (smaller first); running no route comes after
every route (a train never runs a route that earns nothing).

`Solution.routes` lists the trains that run, in train order, each route written in the direction
with the smaller `walk_key`. `Solution.candidates` is the number of routes enumerated (for one
train on a large board, plus the states `deep` searched).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

from services.routes.engine import beside, deep
from services.routes.engine.assign import IDLE, FirstOptimal, Optimum
from services.routes.engine.candidates import (
    DeadlineExceeded,
    Enumeration,
    RouteRecord,
    enumerate_routes,
    revenue_of,
    route_walk,
)
from services.routes.engine.deadline import Deadline
from services.routes.engine.graph import Route, Solution, TrackGraph, Train
from services.routes.engine.index import GraphIndex, build_index
from services.routes.engine.order import canonical
from services.routes.engine.pools import Buckets, Conflicts, Pool, bucket, greedy, make_pool

#: Past this many routes the search is a long one: build a quick answer first.
QUICK_AFTER = 40_000
#: How many routes each train's quick search looks at.
QUICK_ROUTES = 8_000
#: One D-train beside limited trains: past this many routes of all trains, the D's routes are
#: no longer listed but searched from their ends beside the others' (`beside`).
BESIDE_AFTER = 400_000
#: When out of time without a quick answer, the greedy fallback looks at this many routes.
FALLBACK_ROUTES = 20_000
#: The most routes the exhaustive search enumerates (about 300 bytes each); past it the answer
#: is the quick one, unproven, as if the deadline had passed.
MAX_ROUTES = 1_500_000


@dataclass(frozen=True, slots=True)
class _Found:
    chosen: dict[int, RouteRecord]
    total: int


def solve(graph: TrackGraph, deadline: Deadline | None = None) -> Solution:
    """The maximum-revenue assignment of `graph.trains` to disjoint routes.

    once `deadline` has passed, the best assignment found so far is
    returned with `proven=False`.
    """
    # A large search makes millions of tuples and frees none of them until it ends: the cyclic
    # collector, run again and again over them all, cost more than half of the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _solve(graph, deadline)
    finally:
        if collecting:
            gc.enable()


def _solve(graph: TrackGraph, deadline: Deadline | None) -> Solution:
    index = build_index(graph)
    trains = graph.trains
    if not trains:
        return Solution((), 0, True, 0)
    stops = [t.stops for t in trains]
    max_stops = None if None in stops else max(s for s in stops if s is not None)
    strongest = _by_strength(trains)[0]
    enum = enumerate_routes(
        index, max_stops, deadline, budget=QUICK_AFTER, prefer=trains[strongest].name
    )
    candidates = len(enum.routes)
    quick: _Found | None = None
    if enum.exhausted:
        quick = _quick(index, enum, deadline)
        if len(trains) == 1:
            return _single(index, enum, quick, deadline, candidates)
        first = enum
        d_beside = beside.applies(index)
        enum = enumerate_routes(
            index, max_stops, deadline, budget=BESIDE_AFTER if d_beside else MAX_ROUTES
        )
        candidates += len(enum.routes)
        if d_beside and enum.exhausted:
            del enum  # hundreds of megabytes
            assigned = beside.solve(index, deadline, quick.total)
            if assigned is None:
                return _solution(index, first, quick, False, candidates)
            return _solution(
                index,
                first,
                _Found(assigned.chosen, assigned.total),
                True,
                candidates + assigned.searched,
            )
    found, proven = _search(index, enum, deadline, quick)
    return _solution(index, enum, found, proven, candidates)


def _single(
    index: GraphIndex, first: Enumeration, quick: _Found, deadline: Deadline | None, seen: int
) -> Solution:
    """One train on a large board: the search of `deep`, not an enumeration of every route;
    the quick answer if the deadline comes first."""
    try:
        total, walk, states = deep.best_route(index, index.graph.trains[0], deadline, quick.total)
    except DeadlineExceeded:
        return _solution(index, first, quick, False, seen)
    if walk is None:
        return Solution((), 0, True, seen + states)
    nodes = [walk[0][0]]
    segs: list[int] = []
    for _, conn in walk:
        nodes.extend(conn.nodes)
        segs.extend(conn.segments)
    walk_nodes, walk_segs = canonical(nodes, segs)
    route = Route(
        train=0,
        nodes=tuple(index.nodes[n].id for n in walk_nodes),
        segments=tuple(index.segments[s].id for s in walk_segs),
        revenue=total,
    )
    return Solution((route,), total, True, seen + states)


def _solution(
    index: GraphIndex, enum: Enumeration, found: _Found, proven: bool, candidates: int
) -> Solution:
    trains = index.graph.trains
    classes = _classes(enum, trains)
    routes = []
    for i in sorted(found.chosen):
        rec = found.chosen[i]
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


def _by_strength(trains: tuple[Train, ...]) -> list[int]:
    """Train indices, those counting the most centres first."""
    return sorted(
        range(len(trains)),
        key=lambda i: (trains[i].stops is not None, -(trains[i].stops or 0), i),
    )


def _classes(enum: Enumeration, trains: tuple[Train, ...]) -> list[int]:
    value_class = {name: k for k, cls in enumerate(enum.classes) for name in cls}
    return [value_class[t.name] for t in trains]


def _best_route(enum: Enumeration, train: Train, value_class: int) -> RouteRecord | None:
    best: RouteRecord | None = None
    best_revenue = 0
    for rec in enum.routes:
        if train.stops is None or rec[2] <= train.stops:
            revenue = revenue_of(rec, value_class)
            if revenue > best_revenue:
                best, best_revenue = rec, revenue
    return best


def _quick(index: GraphIndex, first: Enumeration, deadline: Deadline | None) -> _Found:
    """Trains in turn, most centres first, take the best route a short search finds."""
    trains = index.graph.trains
    classes = _classes(first, trains)
    chosen: dict[int, RouteRecord] = {}
    used = 0
    for n, i in enumerate(_by_strength(trains)):
        enum = first
        if n > 0:
            enum = enumerate_routes(
                index,
                trains[i].stops,
                deadline,
                avoid=used,
                budget=QUICK_ROUTES,
                prefer=trains[i].name,
            )
        rec = _best_route(enum, trains[i], classes[i])
        if rec is not None:
            chosen[i] = rec
            used |= rec[0]
    return _Found(chosen, sum(revenue_of(rec, classes[i]) for i, rec in chosen.items()))


def _search(
    index: GraphIndex, enum: Enumeration, deadline: Deadline | None, known: _Found | None
) -> tuple[_Found, bool]:
    """The best assignment over the routes of `enum`, and whether it is proven; cut short by
    the deadline, the better of what was found and `known`."""
    trains = index.graph.trains
    types: list[tuple[str, int | None]] = []
    train_type: list[int] = []
    for train in trains:
        if (train.name, train.stops) not in types:
            types.append((train.name, train.stops))
        train_type.append(types.index((train.name, train.stops)))
    classes = _classes(enum, trains)
    type_class = [classes[train_type.index(t)] for t in range(len(types))]

    def cut_short(chosen: dict[int, RouteRecord]) -> tuple[_Found, bool]:
        total = sum(revenue_of(rec, classes[i]) for i, rec in chosen.items())
        if known is not None and known.total >= total:
            return known, False
        return _Found(chosen, total), False

    def greedy_over(routes: list[RouteRecord]) -> tuple[_Found, bool]:
        some = [bucket(routes, type_class[t], s, None) for t, (_, s) in enumerate(types)]
        return cut_short(_greedy([some[t] for t in train_type])[1])

    if not enum.complete:
        return greedy_over(enum.routes[:FALLBACK_ROUTES])
    try:
        type_buckets = [
            bucket(enum.routes, type_class[t], s, deadline) for t, (_, s) in enumerate(types)
        ]
    except DeadlineExceeded:
        return greedy_over(enum.routes[:FALLBACK_ROUTES])
    lower, best = _greedy([type_buckets[t] for t in train_type])
    if known is not None and known.total > lower:
        lower, best = known.total, known.chosen
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
        chosen = _chosen(pools, train_type, choice)
        return _Found(chosen, optimum.best_total), True
    except DeadlineExceeded:
        return cut_short(best)


def _greedy(buckets: list[Buckets]) -> tuple[int, dict[int, RouteRecord]]:
    """The better of two greedy assignments: trains by best route first, and in given order."""
    by_bound = sorted(range(len(buckets)), key=lambda i: (-buckets[i].top, i))
    return max(
        (greedy(buckets, order) for order in (by_bound, list(range(len(buckets))))),
        key=lambda found: found[0],
    )


def _chosen(pools: list[Pool], train_type: list[int], choice: list[int]) -> dict[int, RouteRecord]:
    return {i: pools[train_type[i]].records[p] for i, p in enumerate(choice) if p != IDLE}
