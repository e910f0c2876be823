"""The wheelhouse the image installs from (deploy/wheelhouse.py, `make wheels`): the server's
wheel carries every file a plain install needs, generated code included, and none of the SDK's;
the requirements pip leaves out for the image's Python are found."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

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
def server_wheel(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The names in the server's wheel, built as `make wheels` builds it."""
    staging = wheelhouse.stage(tmp_path_factory.mktemp("staging"))
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), staging],
        check=True,
        timeout=300,
    )
    (wheel,) = out.glob("shikoku-*.whl")
    return zipfile.ZipFile(wheel).namelist()


def test_the_server_wheel_has_the_generated_code_the_services_import(
    server_wheel: list[str],
) -> None:
    names = set(server_wheel)
    public = sorted(p.stem for p in (ROOT / "protos/shikoku/v1").glob("*.proto"))
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
