"""The route rules, decided in one place: is this walk a legal route for this train?

Everything that accepts or rejects a route (validation of submitted routes, the tests' brute
force) goes through `check_walk` and `check_disjoint`. The rules themselves are the ones in the
module docstring of `services.routes.engine.graph`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from services.routes.engine.graph import NodeKind
from services.routes.engine.index import GraphIndex


class Reason(StrEnum):
    """Stable codes for why a submitted route is illegal."""

    UNKNOWN_TRAIN = "UNKNOWN_TRAIN"
    TRAIN_REUSED = "TRAIN_REUSED"
    UNKNOWN_NODE = "UNKNOWN_NODE"
    UNKNOWN_SEGMENT = "UNKNOWN_SEGMENT"
    UNKNOWN_HEX = "UNKNOWN_HEX"
    NOT_CONNECTED = "NOT_CONNECTED"
    ENDS_AT_SIDE = "ENDS_AT_SIDE"
    TOO_FEW_STOPS = "TOO_FEW_STOPS"
    TOO_MANY_STOPS = "TOO_MANY_STOPS"
    NO_TOKEN = "NO_TOKEN"
    TRACK_REUSED = "TRACK_REUSED"
    SIDE_REUSED = "SIDE_REUSED"
    CENTRE_REVISITED = "CENTRE_REVISITED"
    PASSES_BLOCKED_CITY = "PASSES_BLOCKED_CITY"
    PASSES_OFFBOARD = "PASSES_OFFBOARD"
    REVERSES_AT_JUNCTION = "REVERSES_AT_JUNCTION"
    #: The routes can be read in too many ways to find the best reading in bounded time.
    TOO_AMBIGUOUS = "TOO_AMBIGUOUS"


@dataclass(frozen=True, slots=True)
class Violation:
    """Why a route (or a set of routes) is illegal, and where."""

    reason: Reason
    #: Index into `TrackGraph.trains` of the offending train, when one is to blame.
    train: int | None = None
    #: The node (or, for track reuse, the segment) where the rule is broken.
    node: str | None = None
    hex: str | None = None
    detail: str = ""


def check_walk(
    index: GraphIndex, train: int, nodes: Sequence[str], segments: Sequence[str]
) -> int | Violation:
    """The revenue of the walk `nodes[0], segments[0], nodes[1], …` for train `train`, or the
    first rule it breaks (walking from the start, then the whole-route rules)."""
    trains = index.graph.trains
    if not 0 <= train < len(trains):
        return Violation(Reason.UNKNOWN_TRAIN, None, detail=f"no train {train}")
    if not nodes:
        return Violation(Reason.TOO_FEW_STOPS, train, detail="empty route")
    if len(segments) != len(nodes) - 1:
        return Violation(Reason.NOT_CONNECTED, train, detail="segments do not join the nodes")
    for node_id in nodes:
        if node_id not in index.node_index:
            return Violation(Reason.UNKNOWN_NODE, train, node=node_id)
    for seg_id in segments:
        if seg_id not in index.segment_index:
            return Violation(Reason.UNKNOWN_SEGMENT, train, node=seg_id)

    last = len(nodes) - 1
    seen_nodes: set[str] = set()
    seen_segments: set[str] = set()
    centres = 0
    for i, node_id in enumerate(nodes):
        node = index.node(node_id)
        if node_id in seen_nodes:
            reason = Reason.CENTRE_REVISITED if node.is_centre else Reason.SIDE_REUSED
            return Violation(reason, train, node_id, node.hex)
        seen_nodes.add(node_id)
        if node.is_centre:
            centres += 1
            if 0 < i < last:
                if node.kind is NodeKind.OFFBOARD:
                    return Violation(Reason.PASSES_OFFBOARD, train, node_id, node.hex)
                if node.blocked:
                    return Violation(Reason.PASSES_BLOCKED_CITY, train, node_id, node.hex)
        elif i in (0, last):
            return Violation(Reason.ENDS_AT_SIDE, train, node_id, node.hex)
        elif index.segment(segments[i - 1]).hex == index.segment(segments[i]).hex:
            return Violation(
                Reason.REVERSES_AT_JUNCTION,
                train,
                node_id,
                index.segment(segments[i]).hex,
                detail=f"{segments[i - 1]} and {segments[i]} share the hex",
            )
        if i == last:
            break
        seg = index.segment(segments[i])
        if {seg.a, seg.b} != {node_id, nodes[i + 1]}:
            return Violation(
                Reason.NOT_CONNECTED,
                train,
                nodes[i + 1],
                seg.hex,
                detail=f"{seg.id} does not join {node_id} and {nodes[i + 1]}",
            )
        if seg.id in seen_segments:
            return Violation(Reason.TRACK_REUSED, train, seg.id, seg.hex)
        seen_segments.add(seg.id)

    stops = trains[train].stops
    if centres < 2:
        return Violation(Reason.TOO_FEW_STOPS, train, detail=f"{centres} revenue centre(s)")
    if stops is not None and centres > stops:
        return Violation(
            Reason.TOO_MANY_STOPS, train, detail=f"{centres} revenue centres, train counts {stops}"
        )
    centre_nodes = [index.node(n) for n in nodes if index.is_centre[index.node_index[n]]]
    if not any(n.token for n in centre_nodes):
        return Violation(Reason.NO_TOKEN, train, detail="no station token on the route")
    name = trains[train].name
    return sum(n.value_for(name) for n in centre_nodes)


@dataclass(frozen=True, slots=True)
class Walk:
    """A route's track as a walk: `train` index, node ids and the segment ids between them."""

    train: int
    nodes: tuple[str, ...]
    segments: tuple[str, ...]


def check_disjoint(index: GraphIndex, walks: Sequence[Walk]) -> Violation | None:
    """The first segment or hex side that two of the walks share (blaming the later one)."""
    segment_owner: set[str] = set()
    side_owner: set[str] = set()
    for walk in walks:
        for seg_id in walk.segments:
            if seg_id in segment_owner:
                seg = index.segment(seg_id)
                return Violation(Reason.TRACK_REUSED, walk.train, seg_id, seg.hex)
        for node_id in walk.nodes:
            if node_id in side_owner:
                return Violation(Reason.SIDE_REUSED, walk.train, node_id, index.node(node_id).hex)
        segment_owner.update(walk.segments)
        side_owner.update(n for n in walk.nodes if not index.is_centre[index.node_index[n]])
    return None
