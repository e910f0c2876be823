"""The track graph one corporation's trains may run on, for the routes service.

Only the part of the board a route could use is exported: what is joined to the
corporation's station tokens by track, not going on past off-boards and blocked cities (a
route may end there, never pass). Junctions, reuse and the rest are the solver's rules
(`services.routes.engine.graph`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from services.routes.engine.graph import Node, NodeKind, Segment, TrackGraph, Train
from services.rules.board.position import Position
from services.rules.board.title import STOP, Stop, StopKind, Tile, Title, is_edge
from services.rules.board.track import Network, StopRef, blocked_stops, network_of

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
    parts = _parts_of(position.title)
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
    nodes = []
    for _name, node in sorted((parts.name(net, node), node) for node in seen):  # ids are unique
        if node < sides:
            nodes.append(parts.side(net, node))
        else:
            nodes.append(parts.centre(position, net, node, level, node in tokens, node in blocked))
    segments = tuple(parts.segment(position, net, path) for path in sorted(used))
    return TrackGraph(tuple(nodes), segments, tuple(trains))


def next_centres(position: Position, corporation: str) -> dict[StopRef, frozenset[StopRef]]:
    """Per city holding the corporation's token, the centres one connection away in its track
    graph, as the route engine's `connections_from` finds them: walks through hex sides only
    (never turning back on the hex it came across, no node twice) to the next centre, blocked
    and off-board ones included. Without building the graph: what a route of two stops needs
    (`services.rules.domain.route_pricing.pair_earns`). Found once per position."""
    found = position.derived(_next_centres)
    known = found.get(corporation)
    if known is None:
        net = network_of(position)
        known = found[corporation] = {
            city: frozenset(net.stop_ref(node) for node in _centres_from(net, net.stop_nodes[city]))
            for city in position.token_cities(corporation)
        }
    return known


def _next_centres(_position: Position) -> dict[str, dict[StopRef, frozenset[StopRef]]]:
    return {}


def _centres_from(net: Network, start: int) -> set[int]:
    sides, incidence, path_hexes, path_nodes = (
        net.side_count,
        net.incidence,
        net.path_hexes,
        net.path_nodes,
    )
    found: set[int] = set()
    on_the_way: set[int] = set()

    def walk(node: int, last_hex: str | None) -> None:
        for path, end in incidence[node]:
            hex_ = path_hexes[path]
            if hex_ == last_hex:
                continue
            other = path_nodes[path][1 - end]
            if other == start or other in on_the_way:
                continue
            if other >= sides:
                found.add(other)
            else:
                on_the_way.add(other)
                walk(other, hex_)
                on_the_way.discard(other)

    walk(start, None)
    return found


def centre_value(position: Position, stop: StopRef, phase: str, train: str) -> int:
    """What the centre is worth to the train in its track graph (`Node.value_for`)."""
    tile, _ = position.content(stop[0])
    found = tile.stops[stop[1]]
    level = position.title.phase(phase).offboard
    revenue = found.revenue_by_level[level] if found.kind is StopKind.OFFBOARD else found.revenue
    return found.revenue_by_train.get(train, revenue)


@dataclass(eq=False)
class _Parts:
    """The pieces of a title's track graphs, each made once and shared by the graphs of every
    corporation and position (nodes and segments are frozen values): names, hex sides, and
    centres and segments by what is on their hex. Node numbers are the title's (`_build`)."""

    _names: dict[tuple[str, int], str] = field(default_factory=dict)
    _sides: dict[int, Node] = field(default_factory=dict)
    _centres: dict[tuple[object, ...], Node] = field(default_factory=dict)
    _segments: dict[tuple[object, ...], Segment] = field(default_factory=dict)

    def name(self, net: Network, node: int) -> str:
        if node < net.side_count:
            return net.layout.side_names[node]
        ref = net.stop_ref(node)
        found = self._names.get(ref)
        if found is None:
            found = self._names[ref] = _node_name(net, node)
        return found

    def side(self, net: Network, node: int) -> Node:
        found = self._sides.get(node)
        if found is None:
            hex_ = net.layout.side_ends[node][0][0]
            found = self._sides[node] = Node(self.name(net, node), NodeKind.SIDE, hex_)
        return found

    def centre(
        self, position: Position, net: Network, node: int, level: str, token: bool, blocked: bool
    ) -> Node:
        ref = net.stop_ref(node)
        tile, _ = position.content(ref[0])
        key = (ref, tile.name, tile.printed, level, token, blocked)
        found = self._centres.get(key)
        if found is None:
            found = self._centres[key] = _centre(
                net, node, self.name(net, node), level, token, blocked
            )
        return found

    def segment(self, position: Position, net: Network, path: int) -> Segment:
        hex_ = net.path_hexes[path]
        tile, _ = position.content(hex_)
        a, b = (self.name(net, node) for node in net.path_nodes[path])
        key = (hex_, tile.name, tile.printed, net.path_drawn[path], a, b)
        found = self._segments.get(key)
        if found is None:
            drawn = "-".join(_end_name(tile, end) for end in net.path_drawn[path])
            found = self._segments[key] = Segment(f"{hex_}:{drawn}", hex_, a, b)
        return found


@cache
def _parts_of(title: Title) -> _Parts:
    return _Parts()


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
