"""A brute-force reference for connectivity (rulebook 4.2): every trail is walked, one by one.

Written from the rule, not from `services.rules.board.connectivity`, so the two can be
compared. Exponential; fine on the boards of the tests.
"""

from __future__ import annotations

from services.rules.board import Position
from services.rules.board.geometry import neighbour, opposite
from services.rules.board.title import STOP, StopKind

Side = frozenset[tuple[str, int]]
End = tuple[str, int] | Side  # a stop (hex, index), or a side: its (hex, edge) pairs


def reached(
    position: Position, corporation: str
) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(stops reached, (hex, edge) entries), as `Connectivity` has them."""
    title = position.title
    paths: list[tuple[str, End, End]] = []
    for hex_ in title.hexes:
        tile, rotation = position.content(hex_)
        for path in tile.paths_at(rotation):
            ends: list[End] = []
            for end in path:
                if end >= STOP:
                    ends.append((hex_, end - STOP))
                else:
                    across = neighbour(hex_, end)
                    pair = {(hex_, end)}
                    if across is not None and across in title.hexes:
                        pair.add((across, opposite(end)))
                    ends.append(frozenset(pair))
            paths.append((hex_, ends[0], ends[1]))

    def passable(stop: tuple[str, int]) -> bool:
        tile, _ = position.content(stop[0])
        kind = tile.stops[stop[1]].kind
        if kind is StopKind.OFFBOARD:
            return False
        if kind is StopKind.TOWN:
            return True
        spots = position.spots(stop)
        return corporation in spots or None in spots

    stops: set[tuple[str, int]] = set(position.token_cities(corporation))
    entries: set[tuple[str, int]] = set()
    visited: set[End] = set()
    used: set[int] = set()

    def walk(at: End, last_hex: str | None) -> None:
        for index, (hex_, a, b) in enumerate(paths):
            if index in used or at not in (a, b):
                continue
            if isinstance(at, frozenset) and hex_ == last_hex:
                continue  # turning back at a junction
            other = b if at == a else a
            if other in visited:
                continue
            if isinstance(other, frozenset):
                for side_hex, edge in other:
                    if side_hex != hex_:
                        entries.add((side_hex, edge))
                go_on = True
            else:
                stops.add(other)
                go_on = passable(other)
            if go_on:
                used.add(index)
                visited.add(other)
                walk(other, hex_)
                visited.discard(other)
                used.discard(index)

    for city in position.token_cities(corporation):
        visited.add(city)
        walk(city, None)
        visited.discard(city)
    return stops, entries
