"""The track graph one corporation's trains may run on, for the routes service.

Only the part of the board a route could use is exported: what is joined to the
corporation's station tokens by track, not going on past off-boards and blocked cities (a
route may end there, never pass). Junctions, reuse and the rest are the solver's rules
(`services.routes.engine.graph`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from services.routes.engine.graph import Node, NodeKind, Segment, TrackGraph, Train
from services.rules.board.position import Position
from services.rules.board.title import STOP, Stop, StopKind, Tile, is_edge
from services.rules.board.track import Network, blocked_stops, network_of

_KINDS = {
    StopKind.CITY: NodeKind.CITY,
    StopKind.TOWN: NodeKind.TOWN,
    StopKind.OFFBOARD: NodeKind.OFFBOARD,
}
_LETTERS = {StopKind.CITY: "C", StopKind.TOWN: "T", StopKind.OFFBOARD: "O"}


def track_graph(
    position: Position, corporation: str, phase: str, trains: Sequence[Train]
) -> TrackGraph:
    """Nodes are named as `services.routes.engine.graph.Node` says ("K8", "K8.1", "K6|K8", "K8/3");
    a segment is named by its hex and its drawn ends, as in the tile data ("K8:3-C", "J3:3-5")."""
    net = network_of(position)
    parts = position.track_derived(_parts)
    level = position.title.phase(phase).offboard
    tokens = {net.stop_nodes[city] for city in position.token_cities(corporation)}
    blocked = {net.stop_nodes[ref] for ref in blocked_stops(position, corporation)}
    sides = net.side_count
    stops = net.stops
    incidence, path_nodes = net.incidence, net.path_nodes
    seen = set(tokens)
    queue = sorted(tokens)
    used: set[int] = set()
    while queue:
        node = queue.pop()
        if (
            node not in tokens
            and node >= sides
            and (node in blocked or stops[node - sides].kind is StopKind.OFFBOARD)
        ):
            continue
        for path, end in incidence[node]:
            used.add(path)
            other = path_nodes[path][1 - end]
            if other not in seen:
                seen.add(other)
                queue.append(other)
    names = parts.names
    nodes = []
    for node in sorted(seen, key=names.__getitem__):
        if node < sides:
            nodes.append(parts.side(node))
        else:
            nodes.append(parts.centre(node, level, node in tokens, node in blocked))
    segments = tuple(parts.segment(path) for path in sorted(used))
    return TrackGraph(tuple(nodes), segments, tuple(trains))


@dataclass(eq=False)
class _Parts:
    """The pieces of a track's graphs, each made once per track and shared by the graphs of
    every corporation and position on it (nodes and segments are frozen values)."""

    position: Position
    net: Network
    #: Per node number, its name.
    names: tuple[str, ...]
    _sides: dict[int, Node] = field(default_factory=dict)
    _centres: dict[tuple[int, str, bool, bool], Node] = field(default_factory=dict)
    _segments: dict[int, Segment] = field(default_factory=dict)

    def side(self, node: int) -> Node:
        found = self._sides.get(node)
        if found is None:
            hex_ = self.net.layout.side_ends[node][0][0]
            found = self._sides[node] = Node(self.names[node], NodeKind.SIDE, hex_)
        return found

    def centre(self, node: int, level: str, token: bool, blocked: bool) -> Node:
        key = (node, level, token, blocked)
        found = self._centres.get(key)
        if found is None:
            found = self._centres[key] = _centre(
                self.net, node, self.names[node], level, token, blocked
            )
        return found

    def segment(self, path: int) -> Segment:
        found = self._segments.get(path)
        if found is None:
            net = self.net
            hex_ = net.path_hexes[path]
            tile, _ = self.position.content(hex_)
            a, b = net.path_nodes[path]
            drawn = "-".join(_end_name(tile, end) for end in net.path_drawn[path])
            found = self._segments[path] = Segment(
                f"{hex_}:{drawn}", hex_, self.names[a], self.names[b]
            )
        return found


def _parts(position: Position) -> _Parts:
    net = network_of(position)
    names = tuple(_node_name(net, node) for node in range(net.side_count + len(net.stops)))
    return _Parts(position, net, names)


def _node_name(net: Network, node: int) -> str:
    if net.is_side(node):
        return net.layout.side_names[node]
    hex_, index = net.stop_ref(node)
    return hex_ if index == 0 else f"{hex_}.{index}"


def _centre(net: Network, node: int, name: str, level: str, token: bool, blocked: bool) -> Node:
    stop: Stop = net.stop_of(node)
    hex_, _ = net.stop_ref(node)
    offboard = stop.kind is StopKind.OFFBOARD
    revenue = stop.revenue_by_level[level] if offboard else stop.revenue
    return Node(
        id=name,
        kind=_KINDS[stop.kind],
        hex=hex_,
        revenue=revenue,
        revenue_by_train=dict(stop.revenue_by_train),
        token=token,
        blocked=blocked,
    )


def _end_name(tile: Tile, end: int) -> str:
    if is_edge(end):
        return str(end)
    index = end - STOP
    kind = tile.stops[index].kind
    ordinal = sum(stop.kind is kind for stop in tile.stops[:index])
    return _LETTERS[kind] + (str(ordinal) if ordinal else "")
