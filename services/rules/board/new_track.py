"""The 18xx.games engine's test of an upgrade: "must use new track or change city value".

Under the rules profile switch `upgrade_must_use_new_track_or_change_city` (see
`Situation`), an upgrade by a corporation (not a private company's ability) must, once the new
tile is down, have a path the corporation's track walk reaches that is either new (no path of
the old tile runs between the same ends) or touches a city or town whose value the tile
changes. A lay on a hex without track passes.

What the walk reaches is the site's own search, reproduced step by step: from each city holding
one of the corporation's tokens (the other token cities counted as visited), a depth-first walk
over the drawn paths in the order the tiles draw them. A path is taken only if no hex side it
runs to was left from its hex earlier in the walk, and it counts as reached then; a city or
town at its end is walked from next, unless it is a city full of other corporations' tokens
or an off-board. Paths and stops, once walked, stay walked, except after the walk has left a
tile by an edge where two or more of that tile's paths meet: from there on they are walked
again by each way that reaches them.

Rulebook 8.3 asks only that new track be connected: a legal trail reaching an end of it is
enough. The walk above can miss such track, e.g. a new path between two hexes of a loop, both
of whose sides the walk has already left by, so the site refuses the upgrade.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from services.rules.board.position import Position
from services.rules.board.title import STOP, Stop, StopKind, Tile, TrackPath, is_edge
from services.rules.board.track import Network, blocked_stops, network_of


def uses_new_track_or_changes_a_city(
    before: Position, after: Position, hex_: str, corporation: str
) -> bool:
    """Whether the upgrade of `hex_` from `before` to `after` passes the site's test."""
    old, old_rotation = before.content(hex_)
    old_paths = old.paths_at(old_rotation)
    if not old_paths:
        return True
    new, _ = after.content(hex_)
    net = network_of(after)
    reached = walked_paths(after, corporation)
    for path in after.track_derived(_shape).by_hex.get(hex_, ()):
        if path not in reached:
            continue
        drawn = net.path_drawn[path]
        kept = next((o for o in old_paths if _within(drawn, new, o, old)), None)
        if kept is None:
            return True  # new track (and, as the site counts it, a changed value too)
        if _values(kept, old) != _values(drawn, new):
            return True
    return False


def walked_paths(position: Position, corporation: str) -> frozenset[int]:
    """The paths (by number in `network_of(position)`) the site's walk reaches."""
    walks = position.derived(_walks)
    found = walks.get(corporation)
    if found is None:
        found = walks[corporation] = _walk_all(position, corporation)
    return found


def _walks(position: Position) -> dict[str, frozenset[int]]:
    return {}


def _walk_all(position: Position, corporation: str) -> frozenset[int]:
    net = network_of(position)
    shape = position.track_derived(_shape)
    tokens = [net.stop_nodes[city] for city in position.token_cities(corporation)]
    blocking = blocked_stops(position, corporation)
    blocked = frozenset(
        node
        for node in range(net.side_count, net.side_count + len(net.stops))
        if net.stop_of(node).kind is StopKind.OFFBOARD or net.stop_ref(node) in blocking
    )
    reached: set[int] = set()
    for token in tokens:
        walk = _Walk(net, shape, blocked, reached)
        walk.nodes_seen.update(t for t in tokens if t != token)
        walk.run(walk.node(token, converging=False))
    return frozenset(reached)


@dataclass(frozen=True, eq=False)
class _Shape:
    """A network's paths as the walk uses them (built once per track)."""

    #: Per path, the sides it runs to and the stops it joins, in the order drawn.
    sides: tuple[tuple[int, ...], ...]
    stops: tuple[tuple[int, ...], ...]
    #: Per (side, hex), the paths of that hex's tile at that side, in the tile's order.
    at_side: dict[tuple[int, str], tuple[int, ...]]
    #: (path, side) where two or more paths of the path's tile meet at that side.
    converging: frozenset[tuple[int, int]]
    #: Per (side, hex), the hex across the side.
    across: dict[tuple[int, str], str]
    #: Per hex, its paths.
    by_hex: dict[str, tuple[int, ...]]


def _shape(position: Position) -> _Shape:
    net = network_of(position)
    count = net.side_count
    sides = tuple(tuple(n for n in nodes if n < count) for nodes in net.path_nodes)
    stops = tuple(tuple(n for n in nodes if n >= count) for nodes in net.path_nodes)
    at_side: dict[tuple[int, str], list[int]] = {}
    by_hex: dict[str, list[int]] = {}
    for path, hex_ in enumerate(net.path_hexes):
        by_hex.setdefault(hex_, []).append(path)
        for side in sides[path]:
            at_side.setdefault((side, hex_), []).append(path)
    converging = frozenset(
        (path, side)
        for path, hex_ in enumerate(net.path_hexes)
        for side in sides[path]
        if len(at_side[(side, hex_)]) > 1
    )
    across = {}
    for side, ends in enumerate(net.layout.side_ends):
        if len(ends) == 2:
            (a, _), (b, _) = ends
            across[(side, a)], across[(side, b)] = b, a
    return _Shape(
        sides=sides,
        stops=stops,
        at_side={key: tuple(paths) for key, paths in at_side.items()},
        converging=converging,
        across=across,
        by_hex={hex_: tuple(paths) for hex_, paths in by_hex.items()},
    )


_Step = Iterator[tuple[Callable[..., "_Step"], tuple[object, ...]]]


class _Walk:
    """One token's walk: what it has walked, and the sides left by on the way to here. The
    site's recursion is kept as it is, each call a generator that asks for its sub-calls (so
    that no Python recursion limit applies): `run` drives them."""

    def __init__(
        self, net: Network, shape: _Shape, blocked: frozenset[int], reached: set[int]
    ) -> None:
        self.net = net
        self.shape = shape
        self.blocked = blocked
        self.reached = reached
        self.nodes_seen: set[int] = set()
        self.paths_seen: set[int] = set()
        self.left_by: Counter[tuple[int, str]] = Counter()

    @staticmethod
    def run(start: _Step) -> None:
        stack = [start]
        while stack:
            try:
                call, arguments = next(stack[-1])
            except StopIteration:
                stack.pop()
                continue
            stack.append(call(*arguments))

    def node(self, stop: int, converging: bool) -> _Step:
        if stop in self.nodes_seen:
            return
        self.nodes_seen.add(stop)
        for path, _end in self.net.incidence[stop]:
            yield self.path, (path, None, converging, stop, converging)
        if converging:
            self.nodes_seen.discard(stop)

    def path(
        self,
        path: int,
        entered: int | None,
        converging: bool,
        origin: int,
        origin_converging: bool,
    ) -> _Step:
        if path in self.paths_seen:
            return
        hex_ = self.net.path_hexes[path]
        sides = self.shape.sides[path]
        if any(self.left_by[(side, hex_)] for side in sides):
            return
        self.paths_seen.add(path)
        self.reached.add(path)
        for stop in self.shape.stops[path]:
            if stop != origin and stop not in self.blocked:
                yield self.node, (stop, origin_converging or converging)
        for side in sides:
            if side == entered:
                continue
            across = self.shape.across.get((side, hex_))
            if across is None:
                continue
            self.left_by[(side, hex_)] += 1
            onward = converging or (path, side) in self.shape.converging
            for following in self.shape.at_side.get((side, across), ()):
                yield self.path, (following, side, onward, origin, origin_converging)
            self.left_by[(side, hex_)] -= 1
        if converging:
            self.paths_seen.discard(path)


def _within(new_path: TrackPath, new: Tile, old_path: TrackPath, old: Tile) -> bool:
    """Whether every end of the new path is an end of the old one: the same edge, or a stop
    of the same kind (the site compares stops by kind only)."""
    old_ends = [_end(end, old) for end in old_path]
    return all(_end(end, new) in old_ends for end in new_path)


def _end(end: int, tile: Tile) -> int | StopKind:
    return end if is_edge(end) else tile.stops[end - STOP].kind


def _values(path: TrackPath, tile: Tile) -> list[int]:
    return sorted(_value(tile.stops[end - STOP]) for end in path if not is_edge(end))


def _value(stop: Stop) -> int:
    if stop.revenue_by_level:
        return max(stop.revenue_by_level.values())
    return stop.revenue
