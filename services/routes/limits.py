"""What the route engine accepts: track graphs and submitted routes within documented sizes.

The engine's searches grow quickly with their input, so a request is checked before any search:
a graph of at most `MAX_NODES` nodes and `MAX_SEGMENTS` segments, whose segments join nodes it
has, with known node kinds, unique ids and at most `MAX_TRAINS` trains; at most one submitted
route per train, each at most `MAX_ROUTE_STEPS` hexes, nodes or pieces long. Anything else is
INVALID_ARGUMENT (reason INVALID_GRAPH or INVALID_ROUTES) naming the field, never a search.
"""

from __future__ import annotations

from collections.abc import Sequence

from kernel.reasons import ReasonCode
from kernel.rejection import Kind, Rejected
from services.routes.engine.graph import NodeKind
from shikoku.internal.v1 import routes_pb2 as pb

MAX_NODES = 2_000
MAX_SEGMENTS = 8_000
MAX_TRAINS = 10
MAX_STOPS = 50
MAX_REVENUE = 10_000
MAX_ROUTE_STEPS = 100
KINDS = frozenset(kind.value for kind in NodeKind)


def _refuse(reason: ReasonCode, field: str, message: str) -> Rejected:
    return Rejected(reason, message, Kind.INVALID_ARGUMENT, {"field": field})


def check_graph(graph: pb.TrackGraph, field: str = "graph") -> None:
    if len(graph.nodes) > MAX_NODES or len(graph.segments) > MAX_SEGMENTS:
        raise _refuse(
            "INVALID_GRAPH",
            field,
            f"a track graph has at most {MAX_NODES} nodes and {MAX_SEGMENTS} segments",
        )
    if not 0 < len(graph.trains) <= MAX_TRAINS:
        raise _refuse("INVALID_GRAPH", f"{field}.trains", f"1 to {MAX_TRAINS} trains")
    ids: set[str] = set()
    for i, node in enumerate(graph.nodes):
        where = f"{field}.nodes[{i}]"
        if not node.id or node.id in ids:
            raise _refuse("INVALID_GRAPH", f"{where}.id", "node ids are unique and not empty")
        if node.kind not in KINDS:
            raise _refuse(
                "INVALID_GRAPH", f"{where}.kind", f"a node kind is one of {sorted(KINDS)}"
            )
        revenues = [node.revenue, *node.revenue_by_train.values()]
        if any(not 0 <= r <= MAX_REVENUE for r in revenues):
            raise _refuse("INVALID_GRAPH", f"{where}.revenue", f"revenue is 0 to {MAX_REVENUE}")
        ids.add(node.id)
    segments: set[str] = set()
    for i, segment in enumerate(graph.segments):
        where = f"{field}.segments[{i}]"
        if not segment.id or segment.id in segments:
            raise _refuse("INVALID_GRAPH", f"{where}.id", "segment ids are unique and not empty")
        if segment.a not in ids or segment.b not in ids or segment.a == segment.b:
            raise _refuse("INVALID_GRAPH", where, "a segment joins two nodes of the graph")
        segments.add(segment.id)
    for i, train in enumerate(graph.trains):
        if not train.name or not 0 <= train.stops <= MAX_STOPS:
            raise _refuse(
                "INVALID_GRAPH",
                f"{field}.trains[{i}]",
                f"a train has a name and 0 to {MAX_STOPS} stops",
            )


def check_routes(routes: Sequence[pb.SubmittedRoute], trains: int) -> None:
    if len(routes) > trains:
        raise _refuse("INVALID_ROUTES", "routes", "at most one route per train")
    for i, route in enumerate(routes):
        steps = len(route.hexes) + len(route.nodes) + sum(len(c.hexes) for c in route.connections)
        if steps > MAX_ROUTE_STEPS:
            raise _refuse(
                "INVALID_ROUTES", f"routes[{i}]", f"a route is at most {MAX_ROUTE_STEPS} steps long"
            )
