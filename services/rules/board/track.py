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
    #: Paths are numbered hex by hex, each hex with room for as many as a tile that may lie
    #: there draws (`_Parts`), so that a lay renumbers no other hex's paths; a number no tile
    #: uses is a hole no node's incidence lists, with no hex, drawn ends or nodes (`HOLE`).
    path_hexes: tuple[str, ...]
    path_drawn: tuple[TrackPath, ...]
    path_nodes: tuple[tuple[int, int], ...]
    #: Per node, the paths touching it, as (path, which end: 0 or 1), by path number.
    incidence: tuple[tuple[tuple[int, int], ...], ...]
    #: Per hex with track, its paths (a range).
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


#: The drawn ends and nodes of a path number no tile uses.
HOLE: tuple[int, int] = (-1, -1)


def network_of(position: Position) -> Network:
    return position.track_derived(_build, _relaid)


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
    parts = _parts_of(position.title)
    stops: list[Stop] = []
    path_hexes: list[str] = []
    path_drawn: list[TrackPath] = []
    path_nodes: list[tuple[int, int]] = []
    hex_paths: dict[str, range] = {}
    for hex_ in parts.hexes:
        tile, rotation = position.content(hex_)
        part = parts.part(hex_, tile, rotation)
        stops.extend(tile.stops)
        if part.count:
            first = len(path_nodes)
            hex_paths[hex_] = range(first, first + part.count)
        path_hexes.extend(part.path_hexes)
        path_drawn.extend(part.path_drawn)
        path_nodes.extend(part.path_nodes)
    # Most nodes touch no path: one shared empty tuple each, a node's few links added as met.
    incidence: list[tuple[tuple[int, int], ...]] = [()] * (parts.side_count + len(stops))
    for index, (a, b) in enumerate(path_nodes):
        if a >= 0:
            incidence[a] += ((index, 0),)
            incidence[b] += ((index, 1),)
    return Network(
        layout=parts.layout,
        stop_refs=parts.stop_refs,
        stops=tuple(stops),
        stop_nodes=parts.stop_nodes,
        path_hexes=tuple(path_hexes),
        path_drawn=tuple(path_drawn),
        path_nodes=tuple(path_nodes),
        incidence=tuple(incidence),
        hex_paths=hex_paths,
    )


def _relaid(before: Network, position: Position, hex_: str) -> Network:
    """`_build(position)`, made from `before`, the network of the position that a lay on
    `hex_` made this one of: only that hex's stops, paths and their nodes' incidence change."""
    parts = _parts_of(position.title)
    tile, rotation = position.content(hex_)
    part = parts.part(hex_, tile, rotation)
    first, last = parts.path_slots[hex_]
    stop = parts.stop_slots[hex_]
    incidence = list(before.incidence)
    paths = part.path_nodes[: part.count]
    # The links of the nodes the old and the new paths touch, less the old paths', plus the new.
    touched = {node for nodes in (*before.path_nodes[first:last], *paths) for node in nodes}
    touched.discard(HOLE[0])
    links = {
        node: [link for link in incidence[node] if not first <= link[0] < last] for node in touched
    }
    for offset, (a, b) in enumerate(paths, first):
        links[a].append((offset, 0))
        links[b].append((offset, 1))
    for node, found in links.items():
        incidence[node] = tuple(sorted(found))
    hex_paths = dict(before.hex_paths)
    hex_paths[hex_] = range(first, first + part.count)
    return Network(
        layout=before.layout,
        stop_refs=before.stop_refs,
        stops=before.stops[: stop.start] + tile.stops + before.stops[stop.stop :],
        stop_nodes=before.stop_nodes,
        path_hexes=before.path_hexes[:first] + part.path_hexes + before.path_hexes[last:],
        path_drawn=before.path_drawn[:first] + part.path_drawn + before.path_drawn[last:],
        path_nodes=before.path_nodes[:first] + part.path_nodes + before.path_nodes[last:],
        incidence=tuple(incidence),
        hex_paths=hex_paths,
    )


@dataclass(frozen=True, slots=True)
class _HexPart:
    """One hex's share of a network: its paths with their nodes, then holes up to the room
    each hex has."""

    count: int
    path_hexes: tuple[str, ...]
    path_drawn: tuple[TrackPath, ...]
    path_nodes: tuple[tuple[int, int], ...]


@dataclass(eq=False)
class _Parts:
    """Per title: its hexes in order, where each hex's stops and paths are numbered (the same
    in every position of a game: tiles keep the hex's stops), and each hex's part by what is
    on it."""

    layout: Layout
    hexes: tuple[str, ...]
    #: Per hex, the slice of its stops among the network's stops, and of its path numbers:
    #: room for the most paths a tile with the hex's letter, cities and towns draws (only such
    #: a tile replaces what is there, `upgrades.fit`).
    stop_slots: Mapping[str, range]
    path_slots: Mapping[str, tuple[int, int]]
    stop_refs: tuple[StopRef, ...]
    stop_nodes: Mapping[StopRef, int]
    known: dict[tuple[str, str, bool, int], _HexPart] = field(default_factory=dict)

    @property
    def side_count(self) -> int:
        return len(self.layout.side_names)

    def part(self, hex_: str, tile: Tile, rotation: int) -> _HexPart:
        key = (hex_, tile.name, tile.printed, rotation)
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = self._make(hex_, tile, rotation)
        return found

    def _make(self, hex_: str, tile: Tile, rotation: int) -> _HexPart:
        stops = self.stop_slots[hex_]
        if len(tile.stops) != len(stops):
            raise ValueError(f"tile {tile.name} on {hex_} has not the hex's stops")
        paths = tile.paths_at(rotation)
        first_stop = self.side_count + stops.start
        first, last = self.path_slots[hex_]
        holes = last - first - len(paths)
        if holes < 0:
            raise ValueError(
                f"tile {tile.name} on {hex_} draws more paths than the hex has room for"
            )
        return _HexPart(
            count=len(paths),
            path_hexes=(hex_,) * len(paths) + ("",) * holes,
            path_drawn=paths + (HOLE,) * holes,
            path_nodes=tuple(
                (_node(self.layout, hex_, a, first_stop), _node(self.layout, hex_, b, first_stop))
                for a, b in paths
            )
            + (HOLE,) * holes,
        )


@cache
def _parts_of(title: Title) -> _Parts:
    layout = layout_of(title)
    hexes = tuple(sorted(title.hexes))
    room: dict[tuple[tuple[StopKind, ...], str | None], int] = {}
    for tile in title.tiles.values():
        kind = _kind(tile)
        room[kind] = max(room.get(kind, 0), len(tile.paths))
    stop_slots: dict[str, range] = {}
    stop_refs: list[StopRef] = []
    path_slots: dict[str, tuple[int, int]] = {}
    paths = 0
    for hex_ in hexes:
        printed = title.hexes[hex_].printed
        count = len(printed.stops)
        stop_slots[hex_] = range(len(stop_refs), len(stop_refs) + count)
        stop_refs.extend((hex_, i) for i in range(count))
        slots = max(room.get(_kind(printed), 0), len(printed.paths))
        path_slots[hex_] = (paths, paths + slots)
        paths += slots
    sides = len(layout.side_names)
    return _Parts(
        layout=layout,
        hexes=hexes,
        stop_slots=stop_slots,
        path_slots=path_slots,
        stop_refs=tuple(stop_refs),
        stop_nodes={ref: sides + i for i, ref in enumerate(stop_refs)},
    )


def _kind(tile: Tile) -> tuple[tuple[StopKind, ...], str | None]:
    """What every tile that may replace this one shares with it: cities and towns, letter."""
    return tuple(sorted(stop.kind for stop in tile.stops)), tile.label


def _node(layout: Layout, hex_: str, end: int, first_stop: int) -> int:
    return layout.side_ids[(hex_, end)] if is_edge(end) else first_stop + end - STOP
