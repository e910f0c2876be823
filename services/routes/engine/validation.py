"""Checking the routes a corporation submits: their revenue, or precisely what is illegal.

A submitted route names its train (an index into `TrackGraph.trains`) and its track in one of
three ways: node ids (`NodeRoute`), the hexes it visits (`HexRoute`, the 18xx.games `hexes`
format) or one hex sequence per centre-to-centre piece (`ConnectionRoute`, the newer
`connections` format). A submission may fit several walks (two tracks joining the same hexes,
or centres joined by more than one track); it is accepted when some choice of walks, one per
route, is legal. Of the legal choices the one taken has the highest total revenue; among equals,
comparing the routes in submission order, each by revenue (higher first) and then by
`order.walk_key` as written (smaller first).

When no choice is legal, the violation reported is that of the first route with no legal
reading (taking its most direct reading: fewest segments, then smallest `walk_key`), or, if
each route alone has one, the first track two routes share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.routes.engine.graph import Route, TrackGraph
from services.routes.engine.index import GraphIndex, build_index
from services.routes.engine.order import walk_key
from services.routes.engine.reading import IndexWalk, read_connections, read_hexes, read_nodes
from services.routes.engine.rules import Reason, Violation, Walk, check_disjoint, check_walk


@dataclass(frozen=True, slots=True)
class NodeRoute:
    """Node ids as in `Route.nodes`, or only the revenue centres' ids."""

    train: int
    nodes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HexRoute:
    """The hexes visited in order, centre hexes included: `("K4", "J5", "I4")`."""

    train: int
    hexes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ConnectionRoute:
    """One hex sequence per piece between two revenue centres: `(("K4", "J5"), ("J5", "I4"))`."""

    train: int
    connections: tuple[tuple[str, ...], ...]


SubmittedRoute = NodeRoute | HexRoute | ConnectionRoute


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Either the routes as read (in submission order) with their revenue, or a violation."""

    routes: tuple[Route, ...]
    revenue: int
    violation: Violation | None = None

    @property
    def ok(self) -> bool:
        return self.violation is None


@dataclass(frozen=True, slots=True)
class _Reading:
    walk: Walk
    revenue: int
    segments: frozenset[str]
    sides: frozenset[str]


def evaluate(graph: TrackGraph, routes: Sequence[SubmittedRoute]) -> Evaluation:
    index = build_index(graph)
    used_trains: set[int] = set()
    options: list[list[_Reading]] = []
    for submitted in routes:
        train = submitted.train
        if not 0 <= train < len(graph.trains):
            return _reject(Violation(Reason.UNKNOWN_TRAIN, train, detail=f"no train {train}"))
        if train in used_trains:
            return _reject(Violation(Reason.TRAIN_REUSED, train, detail="train runs twice"))
        used_trains.add(train)
        readings = _read(index, submitted)
        if isinstance(readings, Violation):
            return _reject(readings)
        legal = _legal_readings(index, train, readings)
        if isinstance(legal, Violation):
            return _reject(legal)
        options.append(legal)

    chosen = _best_disjoint(options)
    if chosen is AMBIGUOUS:
        detail = f"more than {MAX_COMBINATIONS} ways to read the routes together"
        return _reject(Violation(Reason.TOO_AMBIGUOUS, detail=detail))
    if chosen is None:
        clash = check_disjoint(index, [opts[0].walk for opts in options])
        assert clash is not None, "first readings are disjoint, so a best choice exists"
        return _reject(clash)
    result = tuple(Route(r.walk.train, r.walk.nodes, r.walk.segments, r.revenue) for r in chosen)
    return Evaluation(result, sum(r.revenue for r in result))


def _reject(violation: Violation) -> Evaluation:
    return Evaluation((), 0, violation)


def _read(index: GraphIndex, submitted: SubmittedRoute) -> list[IndexWalk] | Violation:
    match submitted:
        case NodeRoute(train=train, nodes=nodes):
            return read_nodes(index, train, nodes)
        case HexRoute(train=train, hexes=hexes):
            return read_hexes(index, train, hexes)
        case ConnectionRoute(train=train, connections=connections):
            return read_connections(index, train, connections)


def _legal_readings(
    index: GraphIndex, train: int, readings: list[IndexWalk]
) -> list[_Reading] | Violation:
    """The legal readings, best first; or, if there is none, the violation of the most direct
    reading."""
    legal: list[_Reading] = []
    illegal: list[tuple[int, Walk, Violation]] = []
    for node_ix, seg_ix in readings:
        walk = Walk(
            train,
            tuple(index.nodes[i].id for i in node_ix),
            tuple(index.segments[i].id for i in seg_ix),
        )
        verdict = check_walk(index, train, walk.nodes, walk.segments)
        if isinstance(verdict, Violation):
            illegal.append((len(seg_ix), walk, verdict))
        else:
            sides = frozenset(
                n for i, n in zip(node_ix, walk.nodes, strict=True) if not index.is_centre[i]
            )
            legal.append(_Reading(walk, verdict, frozenset(walk.segments), sides))
    if legal:
        legal.sort(key=lambda r: (-r.revenue, walk_key(r.walk.nodes, r.walk.segments)))
        return legal
    illegal.sort(key=lambda t: (t[0], walk_key(t[1].nodes, t[1].segments)))
    return illegal[0][2]


#: Most combinations of readings tried before the routes are refused as too ambiguous.
MAX_COMBINATIONS = 200_000
AMBIGUOUS: list[_Reading] = []


def _best_disjoint(options: list[list[_Reading]]) -> list[_Reading] | None:
    """One reading per route, pairwise disjoint, with the highest total revenue; among equals the
    first in the (already sorted) per-route order. Depth-first, so the first best found wins.
    AMBIGUOUS (an empty list, compared by identity) past MAX_COMBINATIONS tries."""
    tries = [0]
    best_rest = [0] * (len(options) + 1)
    for k in range(len(options) - 1, -1, -1):
        best_rest[k] = best_rest[k + 1] + options[k][0].revenue
    best: list[list[_Reading] | None] = [None]
    best_total = [-1]
    chosen: list[_Reading] = []

    def go(k: int, total: int, segs: frozenset[str], sides: frozenset[str]) -> None:
        tries[0] += 1
        if tries[0] > MAX_COMBINATIONS:
            return
        if k == len(options):
            if total > best_total[0]:
                best_total[0] = total
                best[0] = list(chosen)
            return
        for reading in options[k]:
            if total + reading.revenue + best_rest[k + 1] <= best_total[0]:
                return
            if reading.segments & segs or reading.sides & sides:
                continue
            chosen.append(reading)
            go(k + 1, total + reading.revenue, segs | reading.segments, sides | reading.sides)
            chosen.pop()

    go(0, 0, frozenset(), frozenset())
    return AMBIGUOUS if tries[0] > MAX_COMBINATIONS else best[0]
