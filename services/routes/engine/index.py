"""Integer-indexed lookups over a `TrackGraph`, shared by the rules, the readers and the solver.

Nodes and segments are numbered in the sorted order of their ids, so comparing tuples of indices
compares the corresponding tuples of ids: the solver's tie-break can work on integers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from services.routes.engine.graph import Node, NodeKind, Segment, TrackGraph


class GraphError(ValueError):
    """The graph itself is malformed (duplicate ids, a segment to an unknown node, …)."""


class Link(NamedTuple):
    """One way to leave a node: along `segment` (an index) to node `other` (an index)."""

    segment: int
    other: int
    hex: str


@dataclass(frozen=True, slots=True)
class GraphIndex:
    graph: TrackGraph
    nodes: tuple[Node, ...]
    segments: tuple[Segment, ...]
    node_index: dict[str, int]
    segment_index: dict[str, int]
    #: Per node, the links leaving it, ordered by segment index.
    links: tuple[tuple[Link, ...], ...]
    is_centre: tuple[bool, ...]
    #: Every hex named by a centre or a segment.
    hexes: frozenset[str]

    def node(self, node_id: str) -> Node:
        return self.nodes[self.node_index[node_id]]

    def segment(self, segment_id: str) -> Segment:
        return self.segments[self.segment_index[segment_id]]


def build_index(graph: TrackGraph) -> GraphIndex:
    nodes = tuple(sorted(graph.nodes, key=lambda n: n.id))
    segments = tuple(sorted(graph.segments, key=lambda s: s.id))
    node_index = {n.id: i for i, n in enumerate(nodes)}
    segment_index = {s.id: i for i, s in enumerate(segments)}
    if len(node_index) != len(nodes):
        raise GraphError("duplicate node id")
    if len(segment_index) != len(segments):
        raise GraphError("duplicate segment id")
    links: list[list[Link]] = [[] for _ in nodes]
    for i, seg in enumerate(segments):
        a = node_index.get(seg.a)
        b = node_index.get(seg.b)
        if a is None or b is None:
            raise GraphError(f"segment {seg.id} joins an unknown node")
        if a == b:
            raise GraphError(f"segment {seg.id} joins {seg.a} to itself")
        links[a].append(Link(i, b, seg.hex))
        links[b].append(Link(i, a, seg.hex))
    hexes = {s.hex for s in segments} | {n.hex for n in nodes if n.kind is not NodeKind.SIDE}
    return GraphIndex(
        graph=graph,
        nodes=nodes,
        segments=segments,
        node_index=node_index,
        segment_index=segment_index,
        links=tuple(tuple(ls) for ls in links),
        is_centre=tuple(n.is_centre for n in nodes),
        hexes=frozenset(hexes),
    )
