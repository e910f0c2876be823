"""What a corporation's track reaches from its station tokens (rulebook 4.2).

A trail starts at a city holding one of the corporation's tokens and follows drawn paths. It
never uses a path, a hex side or a stop twice; it passes a hex side only by crossing it (two
paths of one tile meeting at an edge form a junction, and turning from one onto the other is
reversing); it may end at, but not pass, an off-board or a city whose spots are all held by
other corporations.

Method: a breadth-first search over directed paths (a path and the end it leaves by) gives a
shortest walk to everything. A shortest walk can break the rules above only by crossing one
hex side both ways (a U-turn around a loop): any other repetition could be cut out, giving a
shorter walk. When the shortest walk to a target does that, the search runs again twice,
each time forbidding one of the two crossings (a legal trail avoids at least one of them),
and so on. This is exact, and on real boards rarely needed; a walk through every trail
remains as a fallback should the argument ever fail.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal

from services.rules.board.position import Position
from services.rules.board.title import StopKind
from services.rules.board.track import StopRef, blocked_stops, network_of

#: What a walk reaches: a side crossed from a hex (node, hex), or a stop (node, "").
_Key = tuple[int, str]
#: Forbidden crossings: (side node, the hex a walk would cross it from).
_Crossings = frozenset[tuple[int, str]]


@dataclass(frozen=True, slots=True)
class Connectivity:
    corporation: str
    #: Cities, towns and off-boards a trail reaches (blocked cities included; they end it).
    stops: frozenset[StopRef]
    #: (hex, edge) where a trail arrives from across the edge: new track on the hex that
    #: starts at that edge is connected.
    entries: frozenset[tuple[str, int]]


def connectivity(position: Position, corporation: str) -> Connectivity:
    return reach_of(position, corporation).summary()


def reach_of(position: Position, corporation: str) -> Reach:
    """The corporation's reach at this position (computed once per position)."""
    table = position.derived(_reaches)
    found = table.get(corporation)
    if found is None:
        found = table[corporation] = Reach(position, corporation)
    return found


def _reaches(position: Position) -> dict[str, Reach]:
    return {}


def _not_offboard(position: Position) -> tuple[bool, ...]:
    """Per stop of the network, whether it is not an off-board."""
    return tuple(stop.kind is not StopKind.OFFBOARD for stop in network_of(position).stops)


@dataclass(frozen=True, eq=False)
class _Tree:
    """A breadth-first search: each directed path's predecessor, and the first directed path
    that reached each key."""

    parent: list[int]
    first: dict[_Key, int]

    def walk(self, state: int) -> list[int]:
        states = [state]
        while self.parent[states[-1]] >= 0:
            states.append(self.parent[states[-1]])
        states.reverse()
        return states


_UNSEEN = -2
_SOURCE = -1


class Reach:
    """Queries answered lazily: each target's walk is checked only when asked about."""

    def __init__(self, position: Position, corporation: str) -> None:
        self.corporation = corporation
        self._net = network_of(position)
        self._sources = tuple(
            self._net.stop_nodes[city] for city in position.token_cities(corporation)
        )
        # Per stop: not an off-board (the same for every corporation) and not blocked.
        passable = list(position.track_derived(_not_offboard))
        for ref in blocked_stops(position, corporation):
            node = self._net.stop_nodes.get(ref)
            if node is not None:
                passable[node - self._net.side_count] = False
        self._passable = tuple(passable)
        self._tree = self._search(frozenset(), None)
        self._verdicts: dict[_Key, bool] = {}

    def reaches(self, stop: StopRef) -> bool:
        node = self._net.stop_nodes.get(stop)
        return node is not None and self._legal((node, ""))

    def enters(self, hex_: str, edge: int) -> bool:
        """Whether a trail arrives at this edge of the hex from the hex across it."""
        layout = self._net.layout
        across = layout.neighbours[hex_][edge]
        return across is not None and self._legal((layout.side_ids[(hex_, edge)], across))

    def summary(self) -> Connectivity:
        net = self._net
        stops = {net.stop_ref(node) for node in self._sources}
        entries: set[tuple[str, int]] = set()
        for key in self._tree.first:
            if not self._legal(key):
                continue
            node, from_hex = key
            if not from_hex:
                stops.add(net.stop_ref(node))
                continue
            for hex_, edge in net.layout.side_ends[node]:
                if hex_ != from_hex:
                    entries.add((hex_, edge))
        return Connectivity(self.corporation, frozenset(stops), frozenset(entries))

    def _legal(self, key: _Key) -> bool:
        verdict = self._verdicts.get(key)
        if verdict is None:
            node, from_hex = key
            is_source = not from_hex and node in self._sources
            verdict = is_source or self._verify(key, frozenset(), self._tree)
            self._verdicts[key] = verdict
        return verdict

    def _search(self, forbidden: _Crossings, target: _Key | None) -> _Tree:
        net = self._net
        hexes, nodes, incidence = net.path_hexes, net.path_nodes, net.incidence
        sides = net.side_count
        parent = [_UNSEEN] * (2 * len(nodes))
        first: dict[_Key, int] = {}
        queue: deque[int] = deque()
        for source in self._sources:
            for path, end in incidence[source]:
                state = 2 * path + end
                if parent[state] == _UNSEEN:
                    parent[state] = _SOURCE
                    queue.append(state)
        passable = self._passable
        while queue:
            state = queue.popleft()
            path = state >> 1
            exit_node = nodes[path][1 - (state & 1)]
            hex_ = hexes[path]
            # Onward: across a side, by a path of another hex; through a stop, by another path.
            if exit_node < sides:
                key = (exit_node, hex_)
                if key in forbidden:
                    continue
                links, not_hex, not_path = incidence[exit_node], hex_, -1
            else:
                key = (exit_node, "")
                links = incidence[exit_node] if passable[exit_node - sides] else ()
                not_hex, not_path = None, path
            if key not in first:
                first[key] = state
                if key == target:
                    break
            for p, e in links:
                if p == not_path or hexes[p] == not_hex:
                    continue
                following = 2 * p + e
                if parent[following] == _UNSEEN:
                    parent[following] = state
                    queue.append(following)
        return _Tree(parent, first)

    def _verify(self, key: _Key, forbidden: _Crossings, tree: _Tree) -> bool:
        state = tree.first.get(key)
        if state is None:
            return False
        problem = self._repetition(tree.walk(state))
        if problem is None:
            return True
        if problem == "other":
            return self._exhaustive(key)
        side, from_hexes = problem
        for from_hex in from_hexes:
            narrower = forbidden | {(side, from_hex)}
            if self._verify(key, narrower, self._search(narrower, key)):
                return True
        return False

    def _repetition(self, walk: list[int]) -> tuple[int, tuple[str, str]] | Literal["other"] | None:
        """None for a legal trail; else a side the walk crosses both ways, with the hexes it
        crosses from; else "other" (a repetition a shortest walk cannot have)."""
        net = self._net
        first_path, first_end = walk[0] >> 1, walk[0] & 1
        seen: dict[int, str] = {net.path_nodes[first_path][first_end]: ""}
        repeated = False
        for state in walk:
            path = state >> 1
            node = net.path_nodes[path][1 - (state & 1)]
            hex_ = net.path_hexes[path] if net.is_side(node) else ""
            if node in seen:
                if hex_ and seen[node] != hex_:
                    return node, (seen[node], hex_)
                repeated = True
            seen[node] = hex_
        return "other" if repeated else None

    def _exhaustive(self, key: _Key) -> bool:
        """Depth-first over every trail: the fallback should the argument above fail."""
        net = self._net
        sides = net.side_count
        if key[1] == "" and key[0] in self._sources:
            return True
        visited: set[int] = set()

        def explore(state: int) -> bool:
            path = state >> 1
            node = net.path_nodes[path][1 - (state & 1)]
            hex_ = net.path_hexes[path]
            if node in visited:
                return False
            if key == ((node, hex_) if node < sides else (node, "")):
                return True
            if node < sides:
                nexts = [(p, e) for p, e in net.incidence[node] if net.path_hexes[p] != hex_]
            elif self._passable[node - sides]:
                nexts = [(p, e) for p, e in net.incidence[node] if p != path]
            else:
                return False
            visited.add(node)
            found = any(explore(2 * p + e) for p, e in nexts)
            visited.discard(node)
            return found

        for source in self._sources:
            visited.add(source)
            if any(explore(2 * p + e) for p, e in net.incidence[source]):
                return True
            visited.discard(source)
        return False
