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
from functools import cache

from services.rules.board.layout import Layout
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
    changed = []
    for path in net.hex_paths.get(hex_, ()):
        drawn = net.path_drawn[path]
        kept = next((o for o in old_paths if _within(drawn, new, o, old)), None)
        # New track (and, as the site counts it, a changed value too), or a changed value.
        if kept is None or _values(kept, old) != _values(drawn, new):
            changed.append(path)
    return bool(changed) and _walk_reaches(after, corporation, frozenset(changed))


def _walk_reaches(position: Position, corporation: str, targets: frozenset[int]) -> bool:
    """Whether the site's walk reaches one of the paths `targets` (by number in
    `network_of(position)`): the walk stops at the first it reaches."""
    net = network_of(position)
    tokens = [net.stop_nodes[city] for city in position.token_cities(corporation)]
    blocked = position.track_derived(_offboard_nodes) | frozenset(
        net.stop_nodes[ref] for ref in blocked_stops(position, corporation) if ref in net.stop_nodes
    )
    for token in tokens:
        walk = _Walk(net, blocked, targets)
        walk.nodes_seen.update(t for t in tokens if t != token)
        if walk.run(walk.node(token, converging=False)):
            return True
    return False


def _offboard_nodes(position: Position) -> frozenset[int]:
    """The network's off-board nodes: a walk ends there."""
    net = network_of(position)
    return frozenset(
        node
        for node in range(net.side_count, net.side_count + len(net.stops))
        if net.stop_of(node).kind is StopKind.OFFBOARD
    )


@cache
def _across(layout: Layout) -> dict[tuple[int, str], str]:
    """Per (side, hex), the hex across the side (for the sides between two hexes)."""
    across = {}
    for side, ends in enumerate(layout.side_ends):
        if len(ends) == 2:
            (a, _), (b, _) = ends
            across[(side, a)], across[(side, b)] = b, a
    return across


_Step = Iterator[tuple[Callable[..., "_Step"], tuple[object, ...]]]


class _Walk:
    """One token's walk: what it has walked, and the sides left by on the way to here. The
    site's recursion is kept as it is, each call a generator that asks for its sub-calls (so
    that no Python recursion limit applies): `run` drives them."""

    def __init__(
        self,
        net: Network,
        blocked: frozenset[int],
        targets: frozenset[int],
    ) -> None:
        self.net = net
        self.across = _across(net.layout)
        self.blocked = blocked
        self.nodes_seen: set[int] = set()
        self.paths_seen: set[int] = set()
        self.left_by: Counter[tuple[int, str]] = Counter()
        #: The walk stops once it reaches one of these paths.
        self.targets = targets
        self.found = False

    def run(self, start: _Step) -> bool:
        """Walks from `start`; whether it reached one of the targets (it stops there)."""
        stack = [start]
        while stack and not self.found:
            try:
                call, arguments = next(stack[-1])
            except StopIteration:
                stack.pop()
                continue
            stack.append(call(*arguments))
        return self.found

    def node(self, stop: int, converging: bool) -> _Step:
        if stop in self.nodes_seen:
            return
        self.nodes_seen.add(stop)
        for path, _end in self.net.incidence[stop]:
            yield self.path, (path, None, converging, stop, converging)
        if converging:
            self.nodes_seen.discard(stop)

    def _at_side(self, side: int, hex_: str) -> list[int]:
        """The paths of the hex's tile at that side, in the tile's order."""
        net = self.net
        return [path for path, _end in net.incidence[side] if net.path_hexes[path] == hex_]

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
        net = self.net
        hex_ = net.path_hexes[path]
        ends = net.path_nodes[path]
        count = net.side_count
        sides = [end for end in ends if end < count]  # in the order drawn
        if any(self.left_by[(side, hex_)] for side in sides):
            return
        self.paths_seen.add(path)
        if path in self.targets:
            self.found = True
            return
        for stop in ends:
            if stop >= count and stop != origin and stop not in self.blocked:
                yield self.node, (stop, origin_converging or converging)
        for side in sides:
            if side == entered:
                continue
            across = self.across.get((side, hex_))
            if across is None:
                continue
            self.left_by[(side, hex_)] += 1
            # Two or more paths of this tile meet at the side.
            onward = converging or len(self._at_side(side, hex_)) > 1
            for following in self._at_side(side, across):
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
