"""Which tile, with which rotation, may replace what is on a hex (rulebook 8.3, "Preservation").

Computed from the drawings: the new tile is of the next colour, carries the same hex letter,
has the same cities and towns, and keeps every path of the old one (cities and towns may be
matched in any order). Station tokens are the position's business (`lays.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from itertools import permutations

from kernel.reasons import ReasonCode
from services.rules.board.title import STOP, StopKind, Tile, Title, TrackPath, is_edge


@dataclass(frozen=True, slots=True)
class Fit:
    """A tile and rotation that may replace an old tile at a given rotation."""

    tile: Tile
    rotation: int
    #: The new tile's stop index for each stop of the old one.
    stop_map: tuple[int, ...]
    #: Where the track the old tile lacks ends: board edges (a bit mask), and stops (by their
    #: index on the old tile).
    new_track_edges: int
    new_track_stops: tuple[int, ...]
    #: Cities (by their index on the old tile) whose revenue rises.
    richer_cities: tuple[int, ...]


def fit(
    title: Title, old: Tile, old_rotation: int, new: Tile, new_rotation: int
) -> Fit | ReasonCode:
    """How `new` at `new_rotation` replaces `old` at `old_rotation`, or the first rule it breaks."""
    next_colour = title.next_colour(old.colour)
    if next_colour is None:
        return "NOT_UPGRADEABLE"
    if new.colour != next_colour:
        return "NOT_NEXT_COLOUR"
    if new.label != old.label:
        return "LABEL_MISMATCH"
    if sorted(s.kind for s in old.stops) != sorted(s.kind for s in new.stops):
        return "CITY_TOWN_MISMATCH"
    old_paths = old.paths_at(old_rotation)
    new_paths = new.paths_at(new_rotation)
    for stop_map in _stop_maps(old, new):
        kept = {_renumber(path, stop_map) for path in old_paths}
        if kept.issubset(new_paths):
            added = [end for path in new_paths if path not in kept for end in path]
            return Fit(
                tile=new,
                rotation=new_rotation,
                stop_map=stop_map,
                new_track_edges=sum({1 << end for end in added if is_edge(end)}),
                new_track_stops=tuple(i for i, j in enumerate(stop_map) if STOP + j in added),
                richer_cities=tuple(
                    i
                    for i, j in enumerate(stop_map)
                    if new.stops[j].kind is StopKind.CITY
                    and new.stops[j].revenue > old.stops[i].revenue
                ),
            )
    return "BREAKS_EXISTING_TRACK"


def fits(title: Title, old: Tile, old_rotation: int) -> tuple[Fit, ...]:
    """Every tile of the title (whatever the supply) and rotation that may replace `old`, in
    the order of `tile_order` then rotation."""
    return _cache(title).fits(old, old_rotation)


def tile_order(name: str) -> tuple[int, str]:
    """Tiles by number (named tiles first), as lists of lays show them."""
    return (int(name), "") if name.isdigit() else (0, name)


def find_fit(
    title: Title, old: Tile, old_rotation: int, new: Tile, new_rotation: int
) -> Fit | ReasonCode:
    """`fit`, answered from the cached `fits` when the tile fits."""
    found = _cache(title).index(old, old_rotation).get((new.name, new_rotation))
    return found if found is not None else fit(title, old, old_rotation, new, new_rotation)


def upgrade_chart(title: Title) -> dict[str, frozenset[str]]:
    """Per tile (and per printed hex, by coordinate), the tiles that may replace it: the
    rulebook's manifest chart (16), computed. A tile laid only through an ability counts
    where an ability lays it."""
    chart = {}
    for old in [*title.tiles.values(), *(h.printed for h in title.hexes.values())]:
        chart[old.name] = frozenset(
            how.tile.name
            for how in fits(title, old, 0)
            if not how.tile.ability_only
            or any(
                old.printed
                and old.name in ability.hexes
                and (ability.tiles is None or how.tile.name in ability.tiles)
                for ability in title.lay_abilities.values()
            )
        )
    return chart


def _stop_maps(old: Tile, new: Tile) -> list[tuple[int, ...]]:
    return [
        order
        for order in permutations(range(len(new.stops)))
        if all(new.stops[j].kind is old.stops[i].kind for i, j in enumerate(order))
    ]


def _renumber(path: TrackPath, stop_map: tuple[int, ...]) -> TrackPath:
    a, b = (end if is_edge(end) else STOP + stop_map[end - STOP] for end in path)
    return (a, b) if a < b else (b, a)


@dataclass(eq=False)
class _Fits:
    title: Title
    known: dict[tuple[bool, str, int], dict[tuple[str, int], Fit]] = field(default_factory=dict)
    ordered: dict[tuple[bool, str, int], tuple[Fit, ...]] = field(default_factory=dict)

    def fits(self, old: Tile, old_rotation: int) -> tuple[Fit, ...]:
        key = (old.printed, old.name, old_rotation)
        found = self.ordered.get(key)
        if found is None:
            found = tuple(
                sorted(
                    self.index(old, old_rotation).values(),
                    key=lambda how: (tile_order(how.tile.name), how.rotation),
                )
            )
            self.ordered[key] = found
        return found

    def index(self, old: Tile, old_rotation: int) -> dict[tuple[str, int], Fit]:
        key = (old.printed, old.name, old_rotation)
        found = self.known.get(key)
        if found is None:
            found = {
                (new.name, rotation): result
                for new in self.title.tiles.values()
                for rotation in range(6)
                if isinstance(result := fit(self.title, old, old_rotation, new, rotation), Fit)
            }
            self.known[key] = found
        return found


@cache
def _cache(title: Title) -> _Fits:
    return _Fits(title)
