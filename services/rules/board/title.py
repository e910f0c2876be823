"""A title's board as loaded from its data directory: hexes, tiles, charters, phases, abilities.

Nothing here changes during a game; a game's changing board is a `Position`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from services.rules.board.geometry import rotate

#: A path end at or above STOP is the stop `end - STOP` of the tile; below it, an edge 0-5.
STOP = 6

#: A drawn path: its two ends (edges, or STOP + stop index).
TrackPath = tuple[int, int]


def is_edge(end: int) -> bool:
    return end < STOP


class StopKind(StrEnum):
    CITY = "city"
    TOWN = "town"
    OFFBOARD = "offboard"


@dataclass(frozen=True, slots=True)
class Stop:
    """A revenue centre drawn on a tile or printed on a hex."""

    kind: StopKind
    revenue: int = 0
    spots: int = 0
    #: Off-boards: the revenue by the phase's off-board value ("low", "high").
    revenue_by_level: Mapping[str, int] = field(default_factory=dict)
    #: Values that replace the revenue for particular trains (off-boards for D-trains).
    revenue_by_train: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Tile:
    """A tile of the manifest, or what is printed on a hex (`printed`; then `name` is the hex).

    `paths` are drawn with the tile unrotated; `paths_at(r)` gives them on the board, each with
    its smaller end first.
    """

    name: str
    colour: str
    stops: tuple[Stop, ...] = ()
    paths: tuple[TrackPath, ...] = ()
    label: str | None = None
    #: Terrain cost printed on the tile (or hex), paid to lay a tile over it; `terrain` its types.
    cost: int = 0
    terrain: frozenset[str] = frozenset()
    printed: bool = False
    #: Laid only through a private company's ability (1889: the port tile 437).
    ability_only: bool = False
    _turned: tuple[tuple[TrackPath, ...], ...] = field(init=False, repr=False, compare=False)
    _exits: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        turned = tuple(
            tuple(_ordered(_turn(a, r), _turn(b, r)) for a, b in self.paths) for r in range(6)
        )
        exits = tuple(
            sum({1 << end for path in paths for end in path if is_edge(end)}) for paths in turned
        )
        object.__setattr__(self, "_turned", turned)
        object.__setattr__(self, "_exits", exits)

    def paths_at(self, rotation: int) -> tuple[TrackPath, ...]:
        return self._turned[rotation]

    def exits_at(self, rotation: int) -> int:
        """The board edges its track reaches with that rotation, as a bit mask."""
        return self._exits[rotation]

    def city_indices(self) -> tuple[int, ...]:
        return tuple(i for i, stop in enumerate(self.stops) if stop.kind is StopKind.CITY)


def _turn(end: int, rotation: int) -> int:
    return rotate(end, rotation) if is_edge(end) else end


def _ordered(a: int, b: int) -> TrackPath:
    return (a, b) if a < b else (b, a)


@dataclass(frozen=True, slots=True)
class MapHex:
    coordinate: str
    printed: Tile
    name: str = ""
    port: bool = False
    #: The private company whose icon is printed here (8.3.1 restricted hex).
    private: str | None = None


@dataclass(frozen=True, slots=True)
class Corporation:
    id: str
    name: str
    home: str
    home_city: int
    #: Cost of each station token in placing order, the home token first.
    token_costs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Phase:
    name: str
    #: Tile colours that may be laid.
    tiles: frozenset[str]
    #: Which off-board values apply ("low", "high").
    offboard: str


class Owner(StrEnum):
    """Who holds a private company when its ability is used."""

    PLAYER = "player"
    CORPORATION = "corporation"


@dataclass(frozen=True, slots=True)
class LayAbility:
    """A private company's ability to lay a tile outside the ordinary rules."""

    private: str
    owner: Owner
    hexes: frozenset[str]
    #: None: any tile that is a legal lay there.
    tiles: frozenset[str] | None
    needs_connection: bool


@dataclass(frozen=True, slots=True)
class TerrainAbility:
    """The owning corporation pays no terrain cost where every terrain type is in `terrain`."""

    private: str
    owner: Owner
    terrain: frozenset[str]


@dataclass(frozen=True, eq=False)
class Title:
    """Compared and hashed by identity: a title is loaded once and shared."""

    name: str
    hexes: Mapping[str, MapHex]
    tiles: Mapping[str, Tile]
    #: Tiles in the supply at the start of a game, and those the beginner game adds.
    counts: Mapping[str, int]
    beginner_extra: Mapping[str, int]
    corporations: Mapping[str, Corporation]
    phases: Mapping[str, Phase]
    upgrade_order: tuple[str, ...]
    fixed_colours: frozenset[str]
    lay_abilities: Mapping[str, LayAbility]
    terrain_abilities: Mapping[str, TerrainAbility]
    #: Whether private company icons restrict their hexes in the beginner game.
    beginner_icons_restrict: bool

    def next_colour(self, colour: str) -> str | None:
        """The colour a tile over this one must have; None when it is never replaced."""
        if colour not in self.upgrade_order:
            return None
        at = self.upgrade_order.index(colour)
        return self.upgrade_order[at + 1] if at + 1 < len(self.upgrade_order) else None
