"""What follows from a title's map alone: neighbours, hex sides, where new track may end."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from services.rules.board import geometry
from services.rules.board.title import Title


@dataclass(frozen=True, eq=False)
class Layout:
    #: Per hex, the hex across each edge, None where the map ends.
    neighbours: Mapping[str, tuple[str | None, ...]]
    #: The side between two hexes (or at the map's edge) as a number, per (hex, edge).
    side_ids: Mapping[tuple[str, int], int]
    #: Per side number, its name: the two hexes sorted ("K6|K8"), or hex and edge ("K8/3").
    side_names: tuple[str, ...]
    #: Per side number, the (hex, edge) on each side of it, the sorted-first hex first.
    side_ends: tuple[tuple[tuple[str, int], ...], ...]
    #: Per hex, a bit mask of the edges where new track may end: a hex on the map across it,
    #: and not a fixed (gray, red) hex without track there (8.3.1).
    open_edges: Mapping[str, int]


@cache
def layout_of(title: Title) -> Layout:
    neighbours = {
        coordinate: tuple(
            across if (across := geometry.neighbour(coordinate, edge)) in title.hexes else None
            for edge in geometry.EDGES
        )
        for coordinate in title.hexes
    }
    side_ids: dict[tuple[str, int], int] = {}
    side_names: list[str] = []
    side_ends: list[tuple[tuple[str, int], ...]] = []
    for coordinate in sorted(title.hexes):
        for edge in geometry.EDGES:
            if (coordinate, edge) in side_ids:
                continue
            across = neighbours[coordinate][edge]
            side_ids[(coordinate, edge)] = len(side_names)
            if across is None:
                side_names.append(f"{coordinate}/{edge}")
                side_ends.append(((coordinate, edge),))
            else:
                side_ids[(across, geometry.opposite(edge))] = len(side_names)
                side_names.append("|".join(sorted((coordinate, across))))
                side_ends.append(((coordinate, edge), (across, geometry.opposite(edge))))
    open_edges = {}
    for coordinate in title.hexes:
        mask = 0
        for edge, across in enumerate(neighbours[coordinate]):
            if across is None:
                continue
            printed = title.hexes[across].printed
            if printed.colour not in title.fixed_colours or (
                printed.exits_at(0) >> geometry.opposite(edge) & 1
            ):
                mask |= 1 << edge
        open_edges[coordinate] = mask
    return Layout(neighbours, side_ids, tuple(side_names), tuple(side_ends), open_edges)
