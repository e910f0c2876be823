"""Settings: each declared once, as a field of a frozen dataclass, and read once from the
environment at a process's start.

A process's settings are one frozen dataclass (`RulesSettings`, `GatewaySettings`, ...) whose
fields are settings, `setting(variable, default, kind, doc)`, or blocks of settings shared with
other processes, `block(cls)` (addresses, Redis, logs, traces: infra.process_settings). Its
`main` reads them with `from_environment`, which stops the process at start, with one line per
bad value (`SHIKOKU_X: expected a number of seconds, got 'abc'`) and exit status 2; everything
else is handed what it needs and reads nothing of the environment (tests/test_settings.py holds
every module to that, and docs/operations.md's table to the declarations).

A variable's name may hold `<NAME>`, the process's own name in capitals:
`SHIKOKU_<NAME>_METRICS_ADDR` is `SHIKOKU_RULES_METRICS_ADDR` in rules. An empty value is no
value: the default.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, NoReturn, TypeVar, overload
from urllib.parse import urlsplit

T = TypeVar("T")
S = TypeVar("S")

#: Stands for the process's name in a variable's name.
PROCESS = "<NAME>"
_SETTING = "shikoku.setting"
_BLOCK = "shikoku.block"
#: Status a process exits with when a setting is bad (as argparse does for bad arguments).
BAD_SETTINGS_STATUS = 2


@dataclass(frozen=True, slots=True)
class Kind(Generic[T]):
    """What a setting's value must be: `expected` says it (in errors and the docs),
    `convert` makes the value of the text or raises ValueError."""

    expected: str
    convert: Callable[[str], T]


@dataclass(frozen=True, slots=True)
class Setting(Generic[T]):
    variable: str
    default: T
    kind: Kind[T]
    doc: str
    #: The default as the docs show it: its value, or words saying what it is (`described`).
    shown_default: str
    described: bool

    def named(self, process: str) -> str:
        if PROCESS in self.variable and not process:
            raise ValueError(f"{self.variable} is a process's own: read it for a process")
        return self.variable.replace(PROCESS, process.upper())


class SettingsError(Exception):
    """Bad values, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@overload
def setting(variable: str, default: None, kind: Kind[T], doc: str, *, shown: str) -> T | None: ...


@overload
def setting(variable: str, default: T, kind: Kind[T], doc: str, *, shown: str = "") -> T: ...


def setting(variable: str, default: Any, kind: Kind[Any], doc: str, *, shown: str = "") -> Any:
    """A field of a settings dataclass, read from `variable`; `shown` is the default as the
    docs say it, when its value does not (None: one worked out at start)."""
    declared = Setting(variable, default, kind, doc, shown or _shown(default), bool(shown))
    return dataclasses.field(default=default, metadata={_SETTING: declared})


def block(cls: Callable[[], S]) -> S:
    """A field holding a block of settings (a settings dataclass of its own)."""
    return dataclasses.field(default_factory=cls, metadata={_BLOCK: cls})


def load(cls: type[S], environ: Mapping[str, str] | None = None, process: str = "") -> S:
    """The settings `environ` (default: this process's environment) gives, for the process
    `process`; SettingsError naming every bad value. A settings class may check its values
    taken together: its `problems()` says what is wrong with them, a line each."""
    problems: list[str] = []
    loaded = _load(cls, os.environ if environ is None else environ, process, problems)
    if problems:
        raise SettingsError(problems)
    return loaded


def from_environment(cls: type[S], process: str) -> S:
    """This process's settings; a bad value stops it with a line each and status 2."""
    try:
        return load(cls, os.environ, process)
    except SettingsError as error:
        for problem in error.problems:
            print(f"{process}: {problem}", file=sys.stderr)
        raise SystemExit(BAD_SETTINGS_STATUS) from None


def declared(cls: type[Any]) -> Iterator[Setting[Any]]:
    """Every setting of `cls` and of its blocks, in order of declaration."""
    for each in dataclasses.fields(cls):
        if (inner := each.metadata.get(_BLOCK)) is not None:
            yield from declared(inner)
        elif (one := each.metadata.get(_SETTING)) is not None:
            yield one


def _load(cls: type[S], environ: Mapping[str, str], process: str, problems: list[str]) -> S:
    values: dict[str, Any] = {}
    for each in dataclasses.fields(cls):  # type: ignore[arg-type]
        if (inner := each.metadata.get(_BLOCK)) is not None:
            values[each.name] = _load(inner, environ, process, problems)
        elif (one := each.metadata.get(_SETTING)) is not None:
            values[each.name] = _value(one, environ, process, problems)
    loaded = cls(**values)
    if not problems and (check := getattr(loaded, "problems", None)) is not None:
        problems.extend(check())
    return loaded


def _value(one: Setting[T], environ: Mapping[str, str], process: str, problems: list[str]) -> T:
    name = one.named(process)
    raw = environ.get(name, "").strip()
    if not raw:
        return one.default
    try:
        return one.kind.convert(raw)
    except ValueError:
        problems.append(f"{name}: expected {one.kind.expected}, got {raw!r}")
        return one.default


def _shown(default: object) -> str:
    if isinstance(default, bool):
        return "1" if default else "0"
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    if isinstance(default, tuple):
        return ",".join(str(part) for part in default) or "unset"
    return str(default) if default != "" else "unset"


# ---- kinds ---------------------------------------------------------------------------------


def _number(raw: str) -> float:
    value = float(raw)
    if not math.isfinite(value):
        raise ValueError(raw)
    return value


def _at_least(convert: Callable[[str], T], least: Any, above: bool = False) -> Callable[[str], T]:
    def bounded(raw: str) -> T:
        value = convert(raw)
        if value < least or (above and value == least):
            raise ValueError(raw)
        return value

    return bounded


def seconds(*, above_zero: bool = True) -> Kind[float]:
    if above_zero:
        return Kind("a number of seconds above 0", _at_least(_number, 0.0, above=True))
    return Kind("a number of seconds, 0 or more", _at_least(_number, 0.0))


def number(*, least: float = 0.0) -> Kind[float]:
    return Kind(f"a number, at least {_shown(least)}", _at_least(_number, least))


def whole(*, least: int = 0) -> Kind[int]:
    return Kind(f"a whole number, at least {least}", _at_least(int, least))


def choice(*options: str) -> Kind[str]:
    """One of `options`, in any case (the value is the option's own spelling)."""
    by_folded = {option.casefold(): option for option in options}

    def chosen(raw: str) -> str:
        return by_folded[raw.casefold()] if raw.casefold() in by_folded else _refuse(raw)

    return Kind(f"one of {', '.join(options)}", chosen)


_ON, _OFF = ("1", "true", "on", "yes"), ("0", "false", "off", "no")


def _switched(raw: str) -> bool:
    folded = raw.casefold()
    if folded in _ON or folded in _OFF:
        return folded in _ON
    return _refuse(raw)


SWITCH = Kind("1 or 0 (or true/false, on/off, yes/no)", _switched)


def text(expected: str) -> Kind[str]:
    """Any text (`expected` says what it names, for the docs)."""
    return Kind(expected, str)


def _host_port(raw: str) -> str:
    host, colon, port = raw.rpartition(":")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(raw)
    return raw


HOST_PORT = Kind("host:port", _host_port)


def _listed(raw: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip())


LIST = Kind("a comma-separated list", _listed)


def _http_url(raw: str) -> str:
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(raw)
    return raw.rstrip("/")


def http_url() -> Kind[str]:
    """An http:// or https:// URL with a host (the value without a trailing slash)."""
    return Kind("an http:// or https:// URL", _http_url)


def _refuse(raw: str) -> NoReturn:
    raise ValueError(raw)
