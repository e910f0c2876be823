"""The SDK's public surface: every public module, class, function and method says what it does,
and the package exports what its `__all__` names."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import shikoku_sdk


def modules() -> list[ModuleType]:
    names = [info.name for info in pkgutil.iter_modules(shikoku_sdk.__path__)]
    return [shikoku_sdk, *(importlib.import_module(f"shikoku_sdk.{name}") for name in names)]


def public_names(module: ModuleType) -> list[str]:
    """The classes and functions a module defines whose names do not start with `_`, and their
    public methods."""
    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(value) or inspect.isfunction(value):
            found.append((f"{module.__name__}.{name}", value))
        if inspect.isclass(value):
            found.extend(
                (f"{module.__name__}.{name}.{member}", attribute)
                for member, attribute in vars(value).items()
                if not member.startswith("_") and inspect.isfunction(attribute)
            )
    return [name for name, value in found if not inspect.getdoc(value)]


def test_every_public_name_has_a_docstring() -> None:
    undocumented = [name for module in modules() for name in public_names(module)]
    assert [m.__name__ for m in modules() if not m.__doc__] == []
    assert undocumented == []


def test_the_package_exports_what_it_names() -> None:
    assert all(hasattr(shikoku_sdk, name) for name in shikoku_sdk.__all__)
    assert {"Client", "to_command", "RandomPlayer", "seat_table", "ShikokuError"} <= set(
        shikoku_sdk.__all__
    )
