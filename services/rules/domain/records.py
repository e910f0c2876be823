"""Events and commands as plain data (dicts, lists, strings, numbers) and back.

One converter for both, driven by the dataclasses' type hints: nested dataclasses become dicts,
tuples become lists, and reading rebuilds exactly the values that were written.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any, TypeVar

_T = TypeVar("_T")


def to_plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [to_plain(item) for item in value]
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_plain(cls: type[_T], data: typing.Mapping[str, Any]) -> _T:
    """Rebuilds a `cls` from `to_plain`'s output; a missing field takes its default."""
    hints = _hints(typing.cast(type, cls))
    values = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if field.name not in data:
            if (
                field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ):
                raise KeyError(f"{cls.__name__} needs {field.name}")
            continue
        values[field.name] = _read(hints[field.name], data[field.name])
    return cls(**values)


def _read(hint: Any, raw: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        if raw is None:
            return None
        (inner,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _read(inner, raw)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_read(args[0], item) for item in raw)
        return tuple(_read(arg, item) for arg, item in zip(args, raw, strict=True))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_plain(hint, raw)
    return raw
