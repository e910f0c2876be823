"""The track of a position as a graph of numbered nodes and paths.

Nodes are the hex sides (numbered as in the layout) and then the stops (cities, towns,
off-boards) of every hex. Each path drawn on a hex joins two nodes. Connectivity, token and
route-graph code all read this one structure, built once per track (tokens do not change it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from services.rules.board.layout import Layout, layout_of
from services.rules.board.position import Position
from services.rules.board.title import STOP, Stop, StopKind, Tile, Title, TrackPath, is_edge

#: A stop on the board: its hex and its index among the stops of the hex's tile.
StopRef = tuple[str, int]


@dataclass(frozen=True, eq=False)
class Network:
    layout: Layout
    #: Per stop node (node number minus the number of sides), the stop it is.
    stop_refs: tuple[StopRef, ...]
    stops: tuple[Stop, ...]
    stop_nodes: Mapping[StopRef, int]
    #: Per path: its hex, its ends as drawn on the board (edges, STOP + stop index), its nodes.
    path_hexes: tuple[str, ...]
    path_drawn: tuple[TrackPath, ...]
    path_nodes: tuple[tuple[int, int], ...]
    #: Per node, the paths touching it, as (path, which end: 0 or 1).
    incidence: tuple[tuple[tuple[int, int], ...], ...]
    #: Per hex with track, its paths (numbered hex by hex, so a range).
    hex_paths: Mapping[str, range]

    @property
    def side_count(self) -> int:
        return len(self.layout.side_names)

    def is_side(self, node: int) -> bool:
        return node < self.side_count

    def stop_of(self, node: int) -> Stop:
        return self.stops[node - self.side_count]

    def stop_ref(self, node: int) -> StopRef:
        return self.stop_refs[node - self.side_count]


def network_of(position: Position) -> Network:
    return position.track_derived(_build)


def blocked_stops(position: Position, corporation: str) -> frozenset[StopRef]:
    """The stops that block the corporation (`Position.blocks`): cities whose every spot is
    held, none by it."""
    return frozenset(
        ref for ref, held in position.derived(_full_cities).items() if corporation not in held
    )


def _full_cities(position: Position) -> dict[StopRef, tuple[str | None, ...]]:
    """The cities without an open spot, with who holds their spots: those holding tokens, and
    any city without spots at all."""
    full: dict[StopRef, tuple[str | None, ...]] = dict.fromkeys(
        position.track_derived(_spotless_cities), ()
    )
    for ref in position.tokens:
        tile, _ = position.content(ref[0])
        if tile.stops[ref[1]].kind is StopKind.CITY:
            spots = position.spots(ref)
            if None not in spots:
                full[ref] = spots
    return full


def _spotless_cities(position: Position) -> tuple[StopRef, ...]:
    net = network_of(position)
    return tuple(
        ref
        for ref, stop in zip(net.stop_refs, net.stops, strict=True)
        if stop.kind is StopKind.CITY and stop.spots == 0
    )


def _build(position: Position) -> Network:
    layout = layout_of(position.title)
    sides = len(layout.side_names)
    parts = _parts_of(position.title)
    stop_refs: list[StopRef] = []
    stops: list[Stop] = []
    path_hexes: list[str] = []
    path_drawn: list[TrackPath] = []
    path_nodes: list[tuple[int, int]] = []
    hex_paths: dict[str, range] = {}
    for hex_ in parts.hexes:
        tile, rotation = position.content(hex_)
        first_stop = sides + len(stop_refs)
        key = (hex_, tile.name, tile.printed, rotation, first_stop)
        part = parts.known.get(key)
        if part is None:
            part = parts.known[key] = _hex_part(layout, hex_, tile, rotation, first_stop)
        stop_refs.extend(part.stop_refs)
        if part.path_nodes:
            hex_paths[hex_] = range(len(path_nodes), len(path_nodes) + len(part.path_nodes))
        stops.extend(tile.stops)
        path_hexes.extend(part.path_hexes)
        path_drawn.extend(part.path_drawn)
        path_nodes.extend(part.path_nodes)
    # Most nodes touch no path: one shared empty tuple each, a node's few links added as met.
    incidence: list[tuple[tuple[int, int], ...]] = [()] * (sides + len(stop_refs))
    for index, (a, b) in enumerate(path_nodes):
        incidence[a] += ((index, 0),)
        incidence[b] += ((index, 1),)
    return Network(
        layout=layout,
        stop_refs=tuple(stop_refs),
        stops=tuple(stops),
        stop_nodes={ref: sides + i for i, ref in enumerate(stop_refs)},
        path_hexes=tuple(path_hexes),
        path_drawn=tuple(path_drawn),
        path_nodes=tuple(path_nodes),
        incidence=tuple(incidence),
        hex_paths=hex_paths,
    )


@dataclass(frozen=True, slots=True)
class _HexPart:
    """One hex's share of a network: its stops, and its paths with their nodes."""

    stop_refs: tuple[StopRef, ...]
    path_hexes: tuple[str, ...]
    path_drawn: tuple[TrackPath, ...]
    path_nodes: tuple[tuple[int, int], ...]


@dataclass(eq=False)
class _Parts:
    """Per title: its hexes in order, and each hex's part by what is on it and where its stops
    are numbered from (the same in every position of a game: tiles keep the hex's stops)."""

    hexes: tuple[str, ...]
    known: dict[tuple[str, str, bool, int, int], _HexPart] = field(default_factory=dict)


@cache
def _parts_of(title: Title) -> _Parts:
    return _Parts(tuple(sorted(title.hexes)))


def _hex_part(layout: Layout, hex_: str, tile: Tile, rotation: int, first_stop: int) -> _HexPart:
    paths = tile.paths_at(rotation)
    return _HexPart(
        stop_refs=tuple((hex_, i) for i in range(len(tile.stops))),
        path_hexes=(hex_,) * len(paths),
        path_drawn=paths,
        path_nodes=tuple(
            (_node(layout, hex_, a, first_stop), _node(layout, hex_, b, first_stop))
            for a, b in paths
        ),
    )


def _node(layout: Layout, hex_: str, end: int, first_stop: int) -> int:
    return layout.side_ids[(hex_, end)] if is_edge(end) else first_stop + end - STOP
