"""The one loader of a title's data folder, services/rules/titles/<name>/: board.toml,
map.toml, tiles.toml, corporations.toml, economy.toml (with the stock market) and
profiles.toml, read and checked into one immutable `Title`.

Every error is a BoardDataError that names the file, the entry and, when it can be found, the
line. Nothing here knows a particular title: the name picks the folder, the folder says the rest.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from services.rules.board import geometry
from services.rules.board.errors import BoardDataError
from services.rules.board.title import (
    DEFAULT_PROFILE,
    STOP,
    SWITCHES,
    TURN_STEPS,
    UNLIMITED,
    CorporationCharter,
    LayAbility,
    MapHex,
    Market,
    Owner,
    Phase,
    PlayerCountRules,
    PrivateCompany,
    RevenueChange,
    RulesProfile,
    Space,
    Stop,
    StopKind,
    TerrainAbility,
    Tile,
    Title,
    TrackPath,
    TrainType,
    Zone,
)

TITLES_DIR = Path(__file__).resolve().parent.parent / "titles"


class UnknownTitle(LookupError):
    """No title of that name is shipped (services/rules/titles/ has no such folder)."""


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]*")
_STOP_LETTERS = {"C": StopKind.CITY, "T": StopKind.TOWN, "O": StopKind.OFFBOARD}
_DRAWING_KEYS = {"colour", "cities", "towns", "offboards", "track", "label", "cost", "terrain"}


def title_names() -> frozenset[str]:
    """The titles shipped with the rules: the folders of services/rules/titles/."""
    return frozenset(path.name for path in TITLES_DIR.iterdir() if (path / "board.toml").is_file())


@cache
def load_title(name: str) -> Title:
    """The title shipped in services/rules/titles/<name>/, loaded once per process (the same
    object each time); UnknownTitle if there is none of that name."""
    if name not in title_names():
        raise UnknownTitle(name)
    return load_title_from(TITLES_DIR / name)


def load_title_from(directory: Path) -> Title:
    """The title in `directory`, named after it (not cached: each call reads the files)."""
    board = _Source.read(directory / "board.toml")
    board.only_top({"layout", "upgrade_order", "fixed_colours", "beginner", "ability"})
    layout = board.top_text("layout")
    if layout != "flat":
        raise board.error(f"layout {layout!r}: only 'flat' is supported")
    upgrade_order = tuple(board.top_strings("upgrade_order"))
    fixed_colours = frozenset(board.top_strings("fixed_colours"))
    colours = set(upgrade_order) | fixed_colours
    economy = _Source.read(directory / "economy.toml")
    economy.only_top(set(_ECONOMY_TOP) | {"title", *_ECONOMY_TABLES})
    phases = _phases(economy, upgrade_order)
    levels = {phase.offboard for phase in phases}

    tiles_source = _Source.read(directory / "tiles.toml")
    tiles = {
        entry.key: _tile(entry, upgrade_order[1:], levels) for entry in tiles_source.entries("tile")
    }
    counts = {
        entry.key: entry.integer("count", minimum=0) for entry in tiles_source.entries("tile")
    }
    beginner_extra = _beginner_extra(tiles_source, tiles, "extra")
    beginner_site_extra = _beginner_extra(tiles_source, tiles, "site_extra")

    map_source = _Source.read(directory / "map.toml")
    hexes = {entry.key: _map_hex(entry, colours, levels) for entry in map_source.entries("hex")}
    _check_grid(map_source, hexes)

    charters = _Source.read(directory / "corporations.toml")
    charters.only_top({"corporation"})
    corporations = {
        entry.key: _corporation(entry, hexes) for entry in charters.entries("corporation")
    }
    lay_abilities: dict[str, LayAbility] = {}
    terrain_abilities: dict[str, TerrainAbility] = {}
    for entry in board.entries("ability", optional=True):
        ability = _ability(entry, hexes, tiles)
        if isinstance(ability, LayAbility):
            lay_abilities[entry.key] = ability
        else:
            terrain_abilities[entry.key] = ability
    beginner = board.table("beginner")
    beginner.only({"icons_restrict"})
    top = economy.table("")
    top.text("title", directory.name)  # a label for readers: the folder names the title
    minimum, maximum = (top.integer(key, minimum=1) for key in ("min_players", "max_players"))
    trains = _trains(economy, phases)
    privates = _privates(economy, corporations)
    return Title(
        name=directory.name,
        hexes=_frozen(hexes),
        tiles=_frozen(tiles),
        counts=_frozen(counts),
        beginner_extra=_frozen(beginner_extra),
        beginner_site_extra=_frozen(beginner_site_extra),
        upgrade_order=upgrade_order,
        fixed_colours=fixed_colours,
        lay_abilities=_frozen(lay_abilities),
        terrain_abilities=_frozen(terrain_abilities),
        beginner_icons_restrict=beginner.boolean("icons_restrict", default=True),
        bank=top.integer("bank", minimum=1),
        min_players=minimum,
        max_players=maximum,
        by_player_count=_frozen(_player_counts(economy, minimum, maximum)),
        privates=privates,
        corporations=_frozen(corporations),
        trains=trains,
        phases=phases,
        private_revenue_from_phase=_frozen(_revenue_changes(economy, privates, phases)),
        market=_market(economy),
        profiles=_frozen(_profiles(_Source.read(directory / "profiles.toml", optional=True))),
    )


_K = TypeVar("_K")
_T = TypeVar("_T")


def _frozen(values: Mapping[_K, _T]) -> Mapping[_K, _T]:
    return MappingProxyType(dict(values))


_ECONOMY_TOP = ("bank", "min_players", "max_players")
_ECONOMY_TABLES = (
    "players",
    "privates",
    "market",
    "trains",
    "phases",
    "private_revenue_from_phase",
)


@dataclass(frozen=True)
class _Source:
    """One TOML file: its parsed content and its lines (to find where an entry is)."""

    path: Path
    data: dict[str, Any]
    lines: tuple[str, ...]

    @classmethod
    def read(cls, path: Path, optional: bool = False) -> _Source:
        """The file; with `optional`, an absent file reads as an empty one."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if not optional:
                raise BoardDataError(f"{path}: cannot read: no such file") from None
            text = ""
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

    def only_top(self, allowed: Iterable[str]) -> None:
        unknown = sorted(set(self.data) - set(allowed))
        if unknown:
            raise self.error(f"unknown key or table {unknown[0]!r}")

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
        """The [name] table (absent: empty); "" for the keys at the top of the file."""
        if not name:
            return _Entry(self, "", "", self.data)
        raw = self.data.get(name, {})
        if not isinstance(raw, dict):
            raise self.error(f"{name} must be a table")
        return _Entry(self, name, "", raw)

    def entries(self, table: str, optional: bool = False) -> list[_Entry]:
        raw = self.data.get(table, {} if optional else None)
        if optional and raw == {}:
            return []
        if not isinstance(raw, dict) or not raw:
            raise self.error(f"no [{table}.<name>] entries")
        out = []
        for key, value in raw.items():
            if not isinstance(value, dict):
                raise _Entry(self, table, key, {}).error("must be a table")
            out.append(_Entry(self, table, key, value))
        return out

    def array(self, name: str, optional: bool = False) -> list[_Entry]:
        raw = self.data.get(name, [] if optional else None)
        if optional and raw == []:
            return []
        if not isinstance(raw, list) or not raw or not all(isinstance(v, dict) for v in raw):
            raise self.error(f"no [[{name}]] entries")
        return [_Entry(self, name, f"#{number}", value) for number, value in enumerate(raw, 1)]

    def line_of_top_key(self, key: str) -> int | None:
        """The line of `key = …` among the keys before the file's first table."""
        pattern = re.compile(r"\s*(" + re.escape(key) + r'|"' + re.escape(key) + r'")\s*=')
        for number, line in enumerate(self.lines, start=1):
            if line.lstrip().startswith("["):
                return None
            if pattern.match(line):
                return number
        return None

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

    def error(self, message: str, key: str | None = None) -> BoardDataError:
        """The error, at the entry's header line; for the keys at the top of a file, at the
        line of `key`."""
        if self.table:
            line = self.source.line_of(self.table, self.key)
        else:
            line = self.source.line_of_top_key(key) if key else None
        where = f"{self.source.path.name}:{line}" if line else self.source.path.name
        if not self.table:
            return BoardDataError(f"{where}: {message}")
        key_text = self.key if _BARE_KEY.fullmatch(self.key) else f'"{self.key}"'
        if not self.key:
            entry = f"[{self.table}]"
        elif self.key.startswith("#"):
            entry = f"[[{self.table}]] {self.key}"
        else:
            entry = f"[{self.table}.{key_text}]"
        return BoardDataError(f"{where} {entry}: {message}")

    def only(self, allowed: Iterable[str]) -> None:
        unknown = sorted(set(self.raw) - set(allowed))
        if unknown:
            raise self.error(f"unknown key {unknown[0]!r}")

    def integer(self, key: str, default: int | None = None, minimum: int | None = None) -> int:
        value = self.raw.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.error(f"{key} must be a whole number", key)
        if minimum is not None and value < minimum:
            raise self.error(f"{key} must be at least {minimum}, not {value}", key)
        return value

    def text(self, key: str, default: str | None = None) -> str:
        value = self.raw.get(key, default)
        if not isinstance(value, str):
            raise self.error(f"{key} must be a string", key)
        return value

    def optional_text(self, key: str) -> str | None:
        return self.text(key) if key in self.raw else None

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw.get(key, default)
        if not isinstance(value, bool):
            raise self.error(f"{key} must be true or false", key)
        return value

    def strings(self, key: str, default: list[str] | None = None) -> list[str]:
        value = self.raw.get(key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(f"{key} must be a list of strings", key)
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


def _phases(economy: _Source, upgrade_order: tuple[str, ...]) -> tuple[Phase, ...]:
    """Rulebook 9: the phases in the order they follow each other."""
    phases: list[Phase] = []
    for entry in economy.array("phases"):
        entry.only({field.name for field in dataclasses.fields(Phase)})
        name = entry.text("name")
        if any(phase.name == name for phase in phases):
            raise entry.error(f"phase {name!r} is given twice")
        tiles = tuple(entry.strings("tiles"))
        for colour in tiles:
            if colour not in upgrade_order:
                raise entry.error(f"tile colour {colour!r} is not in board.toml upgrade_order")
        phases.append(
            Phase(
                name=name,
                on_train=entry.text("on_train"),
                tiles=tiles,
                train_limit=entry.integer("train_limit", minimum=1),
                offboard=entry.text("offboard"),
                operating_rounds=entry.integer("operating_rounds", minimum=1),
                private_purchases=entry.boolean("private_purchases", False),
                close_privates=entry.boolean("close_privates", False),
                privates_survive_if_player_owned=tuple(
                    entry.strings("privates_survive_if_player_owned", [])
                ),
            )
        )
    return tuple(phases)


def _trains(economy: _Source, phases: tuple[Phase, ...]) -> tuple[TrainType, ...]:
    """The train types in the order the depot sells them."""
    trains: list[TrainType] = []
    names = {phase.name for phase in phases}
    for entry in economy.array("trains"):
        entry.only({field.name for field in dataclasses.fields(TrainType)})
        name = entry.text("name")
        if any(train.name == name for train in trains):
            raise entry.error(f"train {name!r} is given twice")
        count = entry.integer("count")
        if count < 1 and count != UNLIMITED:
            raise entry.error(f"count must be at least 1, or {UNLIMITED} for no limit")
        train = TrainType(
            name=name,
            stops=entry.integer("stops", minimum=0),
            price=entry.integer("price", minimum=0),
            count=count,
            rusts_on=entry.text("rusts_on", ""),
            available_from=entry.text("available_from", ""),
            exchange_price=entry.integer("exchange_price", 0, minimum=0),
            exchange_from=tuple(entry.strings("exchange_from", [])),
            exchange_rusts=tuple(entry.strings("exchange_rusts", [])),
        )
        for key in ("rusts_on", "available_from"):
            value = getattr(train, key)
            if value and value not in names:
                raise entry.error(f"{key} {value!r} is not a phase")
        trains.append(train)
    known = {train.name for train in trains}
    for entry, train in zip(economy.array("trains"), trains, strict=True):
        for other in (*train.exchange_from, *train.exchange_rusts):
            if other not in known:
                raise entry.error(f"exchange names unknown train {other!r}")
    for entry, phase in zip(economy.array("phases"), phases, strict=True):
        if phase.on_train not in known:
            raise entry.error(f"on_train {phase.on_train!r} is not a train")
    return tuple(trains)


def _privates(
    economy: _Source, corporations: Mapping[str, CorporationCharter]
) -> tuple[PrivateCompany, ...]:
    privates: list[PrivateCompany] = []
    for entry in economy.array("privates", optional=True):
        entry.only({field.name for field in dataclasses.fields(PrivateCompany)})
        company = PrivateCompany(
            id=entry.text("id"),
            letter=entry.text("letter"),
            name=entry.text("name"),
            face_value=entry.integer("face_value", minimum=0),
            revenue=entry.integer("revenue", minimum=0),
            min_players=entry.integer("min_players", minimum=1),
            beginner_min_players=entry.integer("beginner_min_players", minimum=1),
            lay_when_sold=entry.boolean("lay_when_sold", False),
            exchange_for=entry.text("exchange_for", ""),
        )
        if any(other.id == company.id for other in privates):
            raise entry.error(f"private {company.id!r} is given twice")
        if company.exchange_for and company.exchange_for not in corporations:
            raise entry.error(f"exchange_for {company.exchange_for!r} is not a corporation")
        privates.append(company)
    return tuple(privates)


def _player_counts(economy: _Source, minimum: int, maximum: int) -> dict[int, PlayerCountRules]:
    counts: dict[int, PlayerCountRules] = {}
    for entry in economy.entries("players"):
        entry.only({"starting_capital", "certificate_limit"})
        if not entry.key.isdigit():
            raise entry.error(f"{entry.key!r} is not a player count")
        counts[int(entry.key)] = PlayerCountRules(
            starting_capital=entry.integer("starting_capital", minimum=0),
            certificate_limit=entry.integer("certificate_limit", minimum=1),
        )
    missing = [count for count in range(minimum, maximum + 1) if count not in counts]
    if missing:
        raise economy.error(f"no [players.{missing[0]}] (min_players..max_players)")
    return counts


def _revenue_changes(
    economy: _Source, privates: tuple[PrivateCompany, ...], phases: tuple[Phase, ...]
) -> dict[str, RevenueChange]:
    changes: dict[str, RevenueChange] = {}
    for entry in economy.entries("private_revenue_from_phase", optional=True):
        entry.only({"phase", "revenue"})
        if entry.key not in {company.id for company in privates}:
            raise entry.error(f"{entry.key!r} is not a private company")
        phase = entry.text("phase")
        if phase not in {p.name for p in phases}:
            raise entry.error(f"phase {phase!r} is not a phase")
        changes[entry.key] = RevenueChange(phase, entry.integer("revenue", minimum=0))
    return changes


_ZONES = {"": Zone.NORMAL, "p": Zone.NORMAL, "y": Zone.YELLOW, "o": Zone.ORANGE}


def _market(economy: _Source) -> Market:
    """Rows top to bottom; a space is its price with a suffix: p par, y yellow, o orange."""
    entry = economy.table("market")
    entry.only({"rows"})
    rows = []
    for line in entry.strings("rows"):
        spaces = []
        for cell in line.split():
            digits = cell.rstrip("pyo")
            suffix = cell[len(digits) :]
            if not digits.isdigit() or suffix not in _ZONES:
                raise entry.error(f"bad market space {cell!r} in row {line!r}")
            spaces.append(Space(int(digits), _ZONES[suffix], suffix == "p"))
        if not spaces:
            raise entry.error("a row of the market is empty")
        rows.append(tuple(spaces))
    if not rows:
        raise entry.error("rows must list the market's rows")
    return Market(tuple(rows))


def _profiles(source: _Source) -> dict[str, RulesProfile]:
    """The `[profile."<name>"]` tables of switches; the rulebook profile, with every switch
    off, is there whether or not the file names it."""
    source.only_top({"profile"})
    profiles = {}
    for entry in source.entries("profile", optional=True):
        entry.only({"description", "turn_steps", *SWITCHES})
        switches = {switch: entry.boolean(switch, False) for switch in SWITCHES}
        turn_steps = entry.text("turn_steps", DEFAULT_PROFILE)
        if turn_steps not in TURN_STEPS:
            raise entry.error(f"turn_steps must be one of {', '.join(TURN_STEPS)}", "turn_steps")
        profiles[entry.key] = RulesProfile(
            name=entry.key,
            description=entry.text("description", ""),
            turn_steps=turn_steps,
            **switches,
        )
        if entry.key == DEFAULT_PROFILE and any(switches.values()):
            raise entry.error(f"the {DEFAULT_PROFILE} profile turns a switch on")
    profiles.setdefault(DEFAULT_PROFILE, RulesProfile(DEFAULT_PROFILE))
    return profiles


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


def _beginner_extra(source: _Source, tiles: Mapping[str, Tile], key: str) -> dict[str, int]:
    beginner = source.table("beginner")
    beginner.only({"extra", "site_extra"})
    extra = beginner.amounts(beginner.raw.get(key, {}), key)
    for name, count in extra.items():
        if name not in tiles:
            raise beginner.error(f"{key} names unknown tile {name!r}")
        if count < 1:
            raise beginner.error(f"{key} count of tile {name!r} must be at least 1")
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


def _corporation(entry: _Entry, hexes: Mapping[str, MapHex]) -> CorporationCharter:
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
    return CorporationCharter(entry.key, entry.text("name"), home, home_city, tuple(costs))


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
