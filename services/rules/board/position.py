"""The board during a game: tiles on hexes, station tokens, the tile supply.

A `Position` is a value: `apply_lay` and `apply_token` return a new one and never change the
old. They apply what was decided (an event) and check only that it can physically happen;
whether it is legal is `lays.check_lay` / `tokens.check_token`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar, cast

from kernel.reasons import ReasonCode
from kernel.rejection import quoted
from services.rules.board.errors import Rejected, Rejection
from services.rules.board.title import DEFAULT_PROFILE, StopKind, Tile, Title
from services.rules.board.upgrades import Fit, find_fit

#: A city on the board: its hex and its index among the stops of the hex's tile.
CityRef = tuple[str, int]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class PlacedTile:
    tile: str
    rotation: int


@dataclass(frozen=True)
class Position:
    title: Title = field(repr=False, compare=False)
    #: Tiles from the supply on the map; a hex not here shows what is printed on it.
    tiles: Mapping[str, PlacedTile]
    #: Who holds each station spot (None: open) of the cities holding at least one token.
    tokens: Mapping[CityRef, tuple[str | None, ...]]
    #: Tiles left in the supply, by tile name.
    supply: Mapping[str, int]
    _derived: dict[object, object] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    #: What `track_derived` made, shared with the positions that differ only in tokens.
    _track_derived: dict[object, object] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def content(self, hex_: str) -> tuple[Tile, int]:
        """The tile on a hex on the map and its rotation (what is printed, at 0, if none)."""
        placed = self.tiles.get(hex_)
        if placed is None:
            return self.title.hexes[hex_].printed, 0
        return self.title.tiles[placed.tile], placed.rotation

    def spots(self, city: CityRef) -> tuple[str | None, ...]:
        """Who holds each station spot of a city (None: open)."""
        tile, _ = self.content(city[0])
        held = self.tokens.get(city, ())
        return held + (None,) * (tile.stops[city[1]].spots - len(held))

    def blocks(self, stop: CityRef, corporation: str) -> bool:
        """Whether the stop is a city whose every spot is held by other corporations: a
        trail or route of this corporation may end there, not pass (glossary, "Blocked")."""
        tile, _ = self.content(stop[0])
        if tile.stops[stop[1]].kind is not StopKind.CITY:
            return False
        spots = self.spots(stop)
        return None not in spots and corporation not in spots

    def token_cities(self, corporation: str) -> tuple[CityRef, ...]:
        return tuple(sorted(city for city, held in self.tokens.items() if corporation in held))

    def derived(self, make: Callable[[Position], _T]) -> _T:
        """`make(self)`, computed once per position (positions never change)."""
        if make not in self._derived:
            self._derived[make] = make(self)
        return cast(_T, self._derived[make])

    def track_derived(
        self,
        make: Callable[[Position], _T],
        update: Callable[[_T, Position, str], _T] | None = None,
    ) -> _T:
        """`make(self)` for what depends only on the title and the tiles on the map, computed
        once for this position and those that station tokens make of it. With `update`, when
        this position is a lay on a hex of one that had derived it already: `update(that
        one's, self, the hex)` instead (the same value, made from what one tile changed)."""
        if make not in self._track_derived:
            laid = cast(tuple[str, dict[object, object]] | None, self._track_derived.get(_LAID))
            if laid is not None and update is not None and make in laid[1]:
                value = update(cast(_T, laid[1][make]), self, laid[0])
            else:
                value = make(self)
            self._track_derived[make] = value
        return cast(_T, self._track_derived[make])


def initial_position(
    title: Title, *, beginner: bool = False, profile: str = DEFAULT_PROFILE
) -> Position:
    """The map before the first tile, with the supply of a game (the beginner game's under
    the rules `profile`)."""
    supply = dict(title.counts)
    if beginner:
        for name, extra in title.beginner_tiles(profile).items():
            supply[name] = supply.get(name, 0) + extra
    return Position(title=title, tiles={}, tokens={}, supply=supply)


def reject(reason: ReasonCode, message: str, **details: str) -> Rejection:
    return Rejection(reason, message, {key: quoted(value) for key, value in details.items()})


_SUCCESSOR = "successor"
#: In the track derived of a position made by a lay: (the hex, what the track before it had
#: derived), for `Position.track_derived`'s updates. A copy without its own such entry, so that
#: no position keeps a chain of earlier tracks alive.
_LAID = "laid"


def _successor(
    position: Position, change: tuple[object, ...], make: Callable[[], Position]
) -> Position:
    """`make()`, the position after `change`; the same object when the same change is applied
    to this position again (decide folds its events, then whoever appends them folds them
    again), so what is derived from it (track, reach) is derived once. Only the last change
    is remembered."""
    last = cast(tuple[tuple[object, ...], Position] | None, position._derived.get(_SUCCESSOR))
    if last is not None and last[0] == change:
        return last[1]
    after = make()
    position._derived[_SUCCESSOR] = (change, after)
    return after


def apply_lay(position: Position, hex_: str, tile: str, rotation: int) -> Position:
    """Lay or upgrade: the tile leaves the supply, the replaced one returns to it (unless it
    was printed on the map), station tokens stay on their cities."""
    return _successor(
        position, ("lay", hex_, tile, rotation), lambda: _lay(position, hex_, tile, rotation)
    )


def _lay(position: Position, hex_: str, tile: str, rotation: int) -> Position:
    title = position.title
    if hex_ not in title.hexes:
        raise Rejected(reject("HEX_NOT_ON_MAP", f"{quoted(hex_)} is not on the map", hex=hex_))
    new = title.tiles.get(tile)
    if new is None:
        raise Rejected(reject("UNKNOWN_TILE", f"there is no tile {quoted(tile)}", tile=tile))
    if position.supply.get(tile, 0) < 1:
        raise Rejected(
            reject("TILE_NOT_IN_SUPPLY", f"no tile {tile} is left in the supply", tile=tile)
        )
    old, old_rotation = position.content(hex_)
    how = find_fit(title, old, old_rotation, new, rotation % 6)
    if not isinstance(how, Fit):
        raise Rejected(
            reject(how, f"tile {tile} cannot replace what is on {hex_}", hex=hex_, tile=tile)
        )
    tokens = dict(position.tokens)
    moved = {}
    for index, _ in enumerate(old.stops):
        held = tokens.pop((hex_, index), None)
        if held is None:
            continue
        spots = new.stops[how.stop_map[index]].spots
        if sum(c is not None for c in held) > spots:
            raise Rejected(
                reject(
                    "TOKENS_NOT_PRESERVED",
                    f"tile {tile} has fewer station spots than the tokens on {hex_}",
                    hex=hex_,
                    tile=tile,
                )
            )
        moved[(hex_, how.stop_map[index])] = _fit_spots(held, spots)
    tokens.update(moved)
    supply = dict(position.supply)
    supply[tile] -= 1
    if not old.printed:
        supply[old.name] = supply.get(old.name, 0) + 1
    tiles = dict(position.tiles)
    tiles[hex_] = PlacedTile(tile, rotation % 6)
    after = Position(title=title, tiles=tiles, tokens=tokens, supply=supply)
    before = {key: value for key, value in position._track_derived.items() if key is not _LAID}
    if before:  # else there is nothing to update
        after._track_derived[_LAID] = (hex_, before)
    return after


def _fit_spots(held: tuple[str | None, ...], spots: int) -> tuple[str | None, ...]:
    """The same tokens in a city with `spots` spots, on the same spots where they exist."""
    if len(held) > spots:
        held = tuple(c for c in held if c is not None)
    return held + (None,) * (spots - len(held))


def apply_token(
    position: Position, corporation: str, hex_: str, city: int = 0, spot: int | None = None
) -> Position:
    """Place a station token on a city's spot (the first open one unless `spot` is given)."""
    return _successor(
        position,
        ("token", corporation, hex_, city, spot),
        lambda: _token(position, corporation, hex_, city, spot),
    )


def _token(
    position: Position, corporation: str, hex_: str, city: int, spot: int | None
) -> Position:
    title = position.title
    if hex_ not in title.hexes:
        raise Rejected(reject("HEX_NOT_ON_MAP", f"{quoted(hex_)} is not on the map", hex=hex_))
    if corporation not in title.corporations:
        raise Rejected(
            reject(
                "UNKNOWN_CORPORATION",
                f"there is no corporation {quoted(corporation)}",
                corporation=corporation,
            )
        )
    tile, _ = position.content(hex_)
    if not 0 <= city < len(tile.stops) or tile.stops[city].kind is not StopKind.CITY:
        raise Rejected(
            reject("NO_SUCH_CITY", f"{hex_} has no city {city}", hex=hex_, city=str(city))
        )
    held = list(position.spots((hex_, city)))
    if spot is None:
        spot = held.index(None) if None in held else len(held)
    if not 0 <= spot < len(held) or held[spot] is not None:
        raise Rejected(
            reject("CITY_FULL", f"spot {spot} of the city on {hex_} is not open", hex=hex_)
        )
    held[spot] = corporation
    tokens = dict(position.tokens)
    tokens[(hex_, city)] = tuple(held)
    after = Position(title=title, tiles=position.tiles, tokens=tokens, supply=position.supply)
    object.__setattr__(after, "_track_derived", position._track_derived)  # the same track
    return after
