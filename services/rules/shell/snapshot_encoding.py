"""Game states as plain data (for snapshots): nothing in a stored state can run code when read.

A state is a tree of frozen dataclasses, enums, tuples, frozensets and mappings. It is written
as msgpack-ready values, each dataclass and enum tagged with its name; reading builds only the
classes of the domain's own modules (`ALLOWED`), and anything else is refused (`Unreadable`).
A board position's title is stored by name and taken from the process's loaded titles.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

from services.rules import board

#: The modules whose dataclasses and enums a state is made of.
ALLOWED = (
    "services.rules.domain.state",
    "services.rules.board.position",
    "services.rules.board.title",
    "services.rules.board.tiles",
    "services.rules.board.layout",
    "services.rules.board.geometry",
    "services.rules.board.track",
)
# The tags of the encoded values: dataclass, enum, tuple, frozenset, mapping, title.
DATACLASS, ENUM, TUPLE, FROZENSET, MAPPING, TITLE = "@d", "@e", "@t", "@f", "@m", "@title"


class Unreadable(ValueError):
    """Stored data that is not a state this code writes."""


@cache
def _classes() -> dict[str, type]:
    found: dict[str, type] = {}
    for name in ALLOWED:
        module = sys.modules.get(name)
        if module is None:
            continue
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == name
                and (dataclasses.is_dataclass(value) or issubclass(value, enum.Enum))
            ):
                found[f"{name}:{value.__qualname__}"] = value
    return found


def _name(kind: type) -> str:
    name = f"{kind.__module__}:{kind.__qualname__}"
    if name not in _classes():
        raise TypeError(f"{name} is not a class a state may hold")
    return name


def to_plain(value: Any) -> Any:
    """`value` as msgpack-ready data."""
    # Enums first: a StrEnum (the operating step) or IntEnum is a str or int too, and stored
    # as one it would come back as a bare str, which `is Step.TRACK` and `.value` fail on.
    if isinstance(value, enum.Enum):
        return {ENUM: _name(type(value)), "v": value.value}
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return value
    if isinstance(value, board.Title):
        return {TITLE: value.name}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {
            f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
        }
        return {DATACLASS: _name(type(value)), "f": fields}
    if isinstance(value, tuple):
        return {TUPLE: [to_plain(item) for item in value]}
    if isinstance(value, frozenset):
        return {FROZENSET: [to_plain(item) for item in value]}
    if isinstance(value, Mapping):
        return {MAPPING: [[to_plain(k), to_plain(v)] for k, v in value.items()]}
    if isinstance(value, list):
        return [to_plain(item) for item in value]
    raise TypeError(f"a state holds no {type(value).__name__}")


def from_plain(data: Any) -> Any:
    """The value `to_plain` made `data` from; Unreadable for anything else."""
    if data is None or isinstance(data, bool | int | float | str | bytes):
        return data
    if isinstance(data, list):
        return [from_plain(item) for item in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise Unreadable(f"not an encoded value: {type(data).__name__}")
    if TITLE in data:
        return board.load_title(str(data[TITLE]))
    if TUPLE in data:
        return tuple(from_plain(item) for item in data[TUPLE])
    if FROZENSET in data:
        return frozenset(from_plain(item) for item in data[FROZENSET])
    if MAPPING in data:
        return MappingProxyType({from_plain(k): from_plain(v) for k, v in data[MAPPING]})
    kind = _classes().get(str(data.get(DATACLASS) or data.get(ENUM)))
    if kind is None:
        raise Unreadable(f"no such class in a state: {data.get(DATACLASS) or data.get(ENUM)}")
    try:
        if ENUM in data:
            return kind(data["v"])
        return kind(**{name: from_plain(value) for name, value in data["f"].items()})
    except (TypeError, ValueError, KeyError) as error:
        raise Unreadable(str(error)) from None
