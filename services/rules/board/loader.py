"""Reads and checks a title's board data: board.toml, map.toml, tiles.toml, corporations.toml.

Every error names the file, the entry and, when it can be found, the line.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from services.rules.board import geometry
from services.rules.board.errors import BoardDataError
from services.rules.board.title import (
    STOP,
    Corporation,
    LayAbility,
    MapHex,
    Owner,
    Phase,
    Stop,
    StopKind,
    TerrainAbility,
    Tile,
    Title,
    TrackPath,
)

TITLES_DIR = Path(__file__).resolve().parent.parent / "titles"

_STOP_LETTERS = {"C": StopKind.CITY, "T": StopKind.TOWN, "O": StopKind.OFFBOARD}
_DRAWING_KEYS = {"colour", "cities", "towns", "offboards", "track", "label", "cost", "terrain"}


@cache
def load_title(name: str = "1889") -> Title:
    """The board data of a title shipped in services/rules/titles/<name>/ (loaded once)."""
    return load_title_from(TITLES_DIR / name)


def load_title_from(directory: Path) -> Title:
    board = _Source.read(directory / "board.toml")
    layout = board.top_text("layout")
    if layout != "flat":
        raise board.error(f"layout {layout!r}: only 'flat' is supported")
    upgrade_order = tuple(board.top_strings("upgrade_order"))
    fixed_colours = frozenset(board.top_strings("fixed_colours"))
    colours = set(upgrade_order) | fixed_colours
    phases = _phases(_Source.read(directory / "economy.toml"), upgrade_order)
    levels = {phase.offboard for phase in phases.values()}

    tiles_source = _Source.read(directory / "tiles.toml")
    tiles = {
        entry.key: _tile(entry, upgrade_order[1:], levels) for entry in tiles_source.entries("tile")
    }
    counts = {
        entry.key: entry.integer("count", minimum=0) for entry in tiles_source.entries("tile")
    }
    beginner_extra = _beginner_extra(tiles_source, tiles)

    map_source = _Source.read(directory / "map.toml")
    hexes = {entry.key: _map_hex(entry, colours, levels) for entry in map_source.entries("hex")}
    _check_grid(map_source, hexes)

    corporations = {
        entry.key: _corporation(entry, hexes)
        for entry in _Source.read(directory / "corporations.toml").entries("corporation")
    }
    lay_abilities: dict[str, LayAbility] = {}
    terrain_abilities: dict[str, TerrainAbility] = {}
    for entry in board.entries("ability"):
        ability = _ability(entry, hexes, tiles)
        if isinstance(ability, LayAbility):
            lay_abilities[entry.key] = ability
        else:
            terrain_abilities[entry.key] = ability
    beginner = board.table("beginner")
    beginner.only({"icons_restrict"})
    return Title(
        name=directory.name,
        hexes=hexes,
        tiles=tiles,
        counts=counts,
        beginner_extra=beginner_extra,
        corporations=corporations,
        phases=phases,
        upgrade_order=upgrade_order,
        fixed_colours=fixed_colours,
        lay_abilities=lay_abilities,
        terrain_abilities=terrain_abilities,
        beginner_icons_restrict=beginner.boolean("icons_restrict", default=True),
    )


@dataclass(frozen=True)
class _Source:
    """One TOML file: its parsed content and its lines (to find where an entry is)."""

    path: Path
    data: dict[str, Any]
    lines: tuple[str, ...]

    @classmethod
    def read(cls, path: Path) -> _Source:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise BoardDataError(f"{path}: cannot read: {error.strerror}") from error
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            # The message already names the line (a duplicate [hex.X] is caught here).
            raise BoardDataError(f"{path.name}: {error}") from error
        return cls(path, data, tuple(text.splitlines()))

    def error(self, message: str) -> BoardDataError:
        return BoardDataError(f"{self.path.name}: {message}")

    def top_text(self, key: str) -> str:
        value = self.data.get(key)
        if not isinstance(value, str):
            raise self.error(f"{key} must be a string")
        return value

    def top_strings(self, key: str) -> list[str]:
        value = self.data.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(f"{key} must be a list of strings")
        return value

    def table(self, name: str) -> _Entry:
        raw = self.data.get(name, {})
        if not isinstance(raw, dict):
            raise self.error(f"{name} must be a table")
        return _Entry(self, name, "", raw)

    def entries(self, table: str) -> list[_Entry]:
        raw = self.data.get(table)
        if not isinstance(raw, dict) or not raw:
            raise self.error(f"no [{table}.<name>] entries")
        out = []
        for key, value in raw.items():
            if not isinstance(value, dict):
                raise _Entry(self, table, key, {}).error("must be a table")
            out.append(_Entry(self, table, key, value))
        return out

    def array(self, name: str) -> list[_Entry]:
        raw = self.data.get(name)
        if not isinstance(raw, list) or not raw or not all(isinstance(v, dict) for v in raw):
            raise self.error(f"no [[{name}]] entries")
        return [_Entry(self, name, f"#{number}", value) for number, value in enumerate(raw, 1)]

    def line_of(self, table: str, key: str) -> int | None:
        if key.startswith("#"):
            headers = [
                number
                for number, line in enumerate(self.lines, start=1)
                if re.match(r"\s*\[\[\s*" + re.escape(table) + r"\s*\]\]", line)
            ]
            ordinal = int(key[1:])
            return headers[ordinal - 1] if ordinal <= len(headers) else None
        name = re.escape(table) + (
            r"\.(" + re.escape(key) + r'|"' + re.escape(key) + r'")' if key else ""
        )
        header = re.compile(r"\s*\[\s*" + name + r"\s*\]")
        for number, line in enumerate(self.lines, start=1):
            if header.match(line):
                return number
        return None


@dataclass(frozen=True)
class _Entry:
    """One [table.key] entry, with typed getters whose errors name it."""

    source: _Source
    table: str
    key: str
    raw: dict[str, Any]

    def error(self, message: str) -> BoardDataError:
        line = self.source.line_of(self.table, self.key)
        where = f"{self.source.path.name}:{line}" if line else self.source.path.name
        if not self.key:
            entry = f"[{self.table}]"
        elif self.key.startswith("#"):
            entry = f"[[{self.table}]] {self.key}"
        else:
            entry = f"[{self.table}.{self.key}]"
        return BoardDataError(f"{where} {entry}: {message}")

    def only(self, allowed: Iterable[str]) -> None:
        unknown = sorted(set(self.raw) - set(allowed))
        if unknown:
            raise self.error(f"unknown key {unknown[0]!r}")

    def integer(self, key: str, default: int | None = None, minimum: int | None = None) -> int:
        value = self.raw.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.error(f"{key} must be a whole number")
        if minimum is not None and value < minimum:
            raise self.error(f"{key} must be at least {minimum}, not {value}")
        return value

    def text(self, key: str, default: str | None = None) -> str:
        value = self.raw.get(key, default)
        if not isinstance(value, str):
            raise self.error(f"{key} must be a string")
        return value

    def optional_text(self, key: str) -> str | None:
        return self.text(key) if key in self.raw else None

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw.get(key, default)
        if not isinstance(value, bool):
            raise self.error(f"{key} must be true or false")
        return value

    def strings(self, key: str, default: list[str] | None = None) -> list[str]:
        value = self.raw.get(key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(f"{key} must be a list of strings")
        return value

    def tables(self, key: str) -> list[dict[str, Any]]:
        value = self.raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.error(f"{key} must be a list of tables")
        return value

    def amounts(self, raw: object, what: str) -> dict[str, int]:
        if not isinstance(raw, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in raw.values()
        ):
            raise self.error(f"{what} must be a table of whole numbers")
        return dict(raw)


def _phases(economy: _Source, upgrade_order: tuple[str, ...]) -> dict[str, Phase]:
    """The phases of economy.toml, as far as the board needs them (rulebook 9)."""
    phases = {}
    for entry in economy.array("phases"):
        name = entry.text("name")
        tiles = frozenset(entry.strings("tiles"))
        for colour in tiles:
            if colour not in upgrade_order:
                raise entry.error(f"tile colour {colour!r} is not in board.toml upgrade_order")
        phases[name] = Phase(name, tiles, entry.text("offboard"))
    return phases


def _tile(entry: _Entry, colours: Iterable[str], levels: set[str]) -> Tile:
    entry.only(_DRAWING_KEYS | {"count", "ability_only"})
    colour = entry.text("colour")
    if colour not in colours:
        raise entry.error(f"colour {colour!r} is not a tile colour ({', '.join(colours)})")
    return _drawing(entry, entry.key, colour, levels, printed=False)


def _map_hex(entry: _Entry, colours: set[str], levels: set[str]) -> MapHex:
    entry.only(_DRAWING_KEYS | {"name", "port", "private"})
    if geometry.parse(entry.key) is None:
        raise entry.error(f"{entry.key!r} is not a coordinate like 'K8'")
    colour = entry.text("colour", "white")
    if colour not in colours:
        raise entry.error(f"colour {colour!r} is not one of {', '.join(sorted(colours))}")
    return MapHex(
        coordinate=entry.key,
        printed=_drawing(entry, entry.key, colour, levels, printed=True),
        name=entry.text("name", ""),
        port=entry.boolean("port", False),
        private=entry.optional_text("private"),
    )


def _drawing(entry: _Entry, name: str, colour: str, levels: set[str], *, printed: bool) -> Tile:
    stops = [
        Stop(StopKind.CITY, _revenue(entry, raw), _spots(entry, raw))
        for raw in entry.tables("cities")
    ]
    stops += [Stop(StopKind.TOWN, _revenue(entry, raw)) for raw in entry.tables("towns")]
    stops += [_offboard(entry, raw, levels) for raw in entry.tables("offboards")]
    cost = entry.integer("cost", 0, minimum=0)
    terrain = frozenset(entry.strings("terrain", []))
    if terrain and not cost:
        raise entry.error("terrain is given without a cost")
    return Tile(
        name=name,
        colour=colour,
        stops=tuple(stops),
        paths=_track(entry, stops),
        label=entry.optional_text("label"),
        cost=cost,
        terrain=terrain,
        printed=printed,
        ability_only=entry.boolean("ability_only", False),
    )


def _revenue(entry: _Entry, raw: dict[str, Any]) -> int:
    value = raw.get("revenue")
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise entry.error(f"a city or town needs a revenue (¥ ≥ 0): {raw}")
    return value


def _spots(entry: _Entry, raw: dict[str, Any]) -> int:
    unknown = set(raw) - {"revenue", "spots"}
    if unknown:
        raise entry.error(f"unknown city key {sorted(unknown)[0]!r}")
    value = raw.get("spots")
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise entry.error(f"a city needs spots (≥ 1): {raw}")
    return value


def _offboard(entry: _Entry, raw: dict[str, Any], levels: set[str]) -> Stop:
    unknown = set(raw) - {"revenue", "train_revenue"}
    if unknown:
        raise entry.error(f"unknown off-board key {sorted(unknown)[0]!r}")
    by_level = entry.amounts(raw.get("revenue"), "an off-board's revenue")
    missing = sorted(levels - set(by_level))
    if missing:
        raise entry.error(f"off-board revenue has no {missing[0]!r} value (economy.toml phases)")
    by_train = entry.amounts(raw.get("train_revenue", {}), "train_revenue")
    return Stop(StopKind.OFFBOARD, revenue_by_level=by_level, revenue_by_train=by_train)


def _track(entry: _Entry, stops: list[Stop]) -> tuple[TrackPath, ...]:
    paths: list[TrackPath] = []
    for text in entry.strings("track", []):
        ends = text.split("-")
        if len(ends) != 2:
            raise entry.error(f"track {text!r} is not 'a-b'")
        a, b = (_end(entry, text, end, stops) for end in ends)
        if a == b:
            raise entry.error(f"track {text!r} joins an end to itself")
        path = (min(a, b), max(a, b))
        if path in paths:
            raise entry.error(f"track {text!r} is drawn twice")
        paths.append(path)
    return tuple(paths)


def _end(entry: _Entry, path: str, end: str, stops: list[Stop]) -> int:
    if end.isdigit():
        if int(end) not in geometry.EDGES:
            raise entry.error(f"track {path!r}: edge {end} is not 0-5")
        return int(end)
    kind = _STOP_LETTERS.get(end[:1])
    ordinal = end[1:] or "0"
    if kind is None or not ordinal.isdigit():
        raise entry.error(f"track {path!r}: {end!r} is neither an edge nor C/T/O")
    of_kind = [i for i, stop in enumerate(stops) if stop.kind is kind]
    if int(ordinal) >= len(of_kind):
        raise entry.error(f"track {path!r}: there is no {kind} {end!r} on it")
    return STOP + of_kind[int(ordinal)]


def _beginner_extra(source: _Source, tiles: Mapping[str, Tile]) -> dict[str, int]:
    beginner = source.table("beginner")
    beginner.only({"extra"})
    extra = beginner.amounts(beginner.raw.get("extra", {}), "extra")
    for name, count in extra.items():
        if name not in tiles:
            raise beginner.error(f"extra names unknown tile {name!r}")
        if count < 1:
            raise beginner.error(f"extra count of tile {name!r} must be at least 1")
    return extra


def _check_grid(source: _Source, hexes: Mapping[str, MapHex]) -> None:
    parities = set()
    for coordinate, hex_ in hexes.items():
        column, row = geometry.parse(coordinate) or (0, 0)
        parities.add((column + row) % 2)
        if len(parities) > 1:
            raise _Entry(source, "hex", coordinate, {}).error(
                "mixes odd and even rows in one column (doubled coordinates)"
            )
        for edge in geometry.EDGES:
            if (
                hex_.printed.exits_at(0) >> edge & 1
                and geometry.neighbour(coordinate, edge) not in hexes
            ):
                raise _Entry(source, "hex", coordinate, {}).error(
                    f"printed track leaves the map at edge {edge}"
                )


def _corporation(entry: _Entry, hexes: Mapping[str, MapHex]) -> Corporation:
    entry.only({"name", "home", "home_city", "tokens"})
    home = entry.text("home")
    home_city = entry.integer("home_city", 0, minimum=0)
    if home not in hexes:
        raise entry.error(f"home {home!r} is not on the map")
    if home_city >= len(hexes[home].printed.city_indices()):
        raise entry.error(f"home {home} has no city {home_city}")
    costs = entry.raw.get("tokens")
    if (
        not isinstance(costs, list)
        or not costs
        or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in costs)
    ):
        raise entry.error("tokens must list the cost (¥ ≥ 0) of each station token")
    return Corporation(entry.key, entry.text("name"), home, home_city, tuple(costs))


def _ability(
    entry: _Entry, hexes: Mapping[str, MapHex], tiles: Mapping[str, Tile]
) -> LayAbility | TerrainAbility:
    kind = entry.text("kind")
    try:
        owner = Owner(entry.text("owner"))
    except ValueError:
        raise entry.error(f"owner must be one of {', '.join(Owner)}") from None
    if kind == "terrain":
        entry.only({"kind", "owner", "terrain"})
        return TerrainAbility(entry.key, owner, frozenset(entry.strings("terrain")))
    if kind != "lay":
        raise entry.error(f"kind {kind!r} is neither 'lay' nor 'terrain'")
    entry.only({"kind", "owner", "hexes", "tiles", "connection"})
    for coordinate in entry.strings("hexes"):
        if coordinate not in hexes:
            raise entry.error(f"hex {coordinate!r} is not on the map")
    names = entry.strings("tiles") if "tiles" in entry.raw else None
    for name in names or ():
        if name not in tiles:
            raise entry.error(f"unknown tile {name!r}")
    return LayAbility(
        private=entry.key,
        owner=owner,
        hexes=frozenset(entry.strings("hexes")),
        tiles=frozenset(names) if names is not None else None,
        needs_connection=entry.boolean("connection", True),
    )
