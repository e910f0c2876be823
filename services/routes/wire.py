"""Track graphs, routes and evaluations to and from their protobuf form (RouteEngine API)."""

from __future__ import annotations

from collections.abc import Sequence

from services.routes.engine.graph import Node, NodeKind, Route, Segment, Solution, TrackGraph, Train
from services.routes.engine.rules import Reason, Violation
from services.routes.engine.validation import (
    ConnectionRoute,
    Evaluation,
    HexRoute,
    NodeRoute,
    SubmittedRoute,
)
from shikoku.internal.v1 import routes_pb2 as pb


def graph_to_proto(graph: TrackGraph) -> pb.TrackGraph:
    return pb.TrackGraph(
        nodes=[
            pb.Node(
                id=n.id,
                kind=n.kind.value,
                hex=n.hex,
                revenue=n.revenue,
                revenue_by_train=dict(n.revenue_by_train),
                token=n.token,
                blocked=n.blocked,
            )
            for n in graph.nodes
        ],
        segments=[pb.Segment(id=s.id, hex=s.hex, a=s.a, b=s.b) for s in graph.segments],
        trains=[pb.Train(name=t.name, stops=t.stops or 0) for t in graph.trains],
    )


def graph_from_proto(message: pb.TrackGraph) -> TrackGraph:
    return TrackGraph(
        nodes=tuple(
            Node(
                id=n.id,
                kind=NodeKind(n.kind),
                hex=n.hex,
                revenue=n.revenue,
                revenue_by_train=dict(n.revenue_by_train),
                token=n.token,
                blocked=n.blocked,
            )
            for n in message.nodes
        ),
        segments=tuple(Segment(s.id, s.hex, s.a, s.b) for s in message.segments),
        trains=tuple(Train(t.name, t.stops or None) for t in message.trains),
    )


def submitted_to_proto(routes: Sequence[SubmittedRoute]) -> list[pb.SubmittedRoute]:
    messages = []
    for route in routes:
        match route:
            case HexRoute(train=train, hexes=hexes):
                messages.append(pb.SubmittedRoute(train=train, hexes=hexes))
            case ConnectionRoute(train=train, connections=connections):
                pieces = [pb.HexSequence(hexes=c) for c in connections]
                messages.append(pb.SubmittedRoute(train=train, connections=pieces))
            case NodeRoute(train=train, nodes=nodes):
                messages.append(pb.SubmittedRoute(train=train, nodes=nodes))
    return messages


def submitted_from_proto(messages: Sequence[pb.SubmittedRoute]) -> list[SubmittedRoute]:
    routes: list[SubmittedRoute] = []
    for m in messages:
        if m.nodes:
            routes.append(NodeRoute(m.train, tuple(m.nodes)))
        elif m.connections:
            routes.append(ConnectionRoute(m.train, tuple(tuple(c.hexes) for c in m.connections)))
        else:
            routes.append(HexRoute(m.train, tuple(m.hexes)))
    return routes


def _route_to_proto(route: Route) -> pb.Route:
    return pb.Route(
        train=route.train, nodes=route.nodes, segments=route.segments, revenue=route.revenue
    )


def _route_from_proto(message: pb.Route) -> Route:
    return Route(message.train, tuple(message.nodes), tuple(message.segments), message.revenue)


def evaluation_to_proto(evaluation: Evaluation) -> pb.Evaluation:
    message = pb.Evaluation(
        routes=[_route_to_proto(r) for r in evaluation.routes], revenue=evaluation.revenue
    )
    if (v := evaluation.violation) is not None:
        message.violation.CopyFrom(
            pb.Violation(
                reason=str(v.reason),
                train=-1 if v.train is None else v.train,
                node=v.node or "",
                hex=v.hex or "",
                detail=v.detail,
            )
        )
    return message


def evaluation_from_proto(message: pb.Evaluation) -> Evaluation:
    violation = None
    if message.HasField("violation"):
        v = message.violation
        violation = Violation(
            reason=Reason(v.reason),
            train=None if v.train < 0 else v.train,
            node=v.node or None,
            hex=v.hex or None,
            detail=v.detail,
        )
    return Evaluation(
        routes=tuple(_route_from_proto(r) for r in message.routes),
        revenue=message.revenue,
        violation=violation,
    )


def solution_to_proto(solution: Solution) -> pb.Solution:
    return pb.Solution(
        routes=[_route_to_proto(r) for r in solution.routes],
        revenue=solution.revenue,
        proven=solution.proven,
        candidates=solution.candidates,
    )


def solution_from_proto(message: pb.Solution) -> Solution:
    return Solution(
        routes=tuple(_route_from_proto(r) for r in message.routes),
        revenue=message.revenue,
        proven=message.proven,
        candidates=message.candidates,
    )
