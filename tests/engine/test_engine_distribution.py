"""The engine as a bot author installs it: the wheel `make engine` builds (the same command),
with the SDK's wheel it stands on, installed into a fresh virtualenv without system site
packages, where nothing of the server's shells or infrastructure is importable, and where
examples/engine_search_bot.py plays a whole game with no server running."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from shikoku_sdk.version import VERSION

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
INSTALL_SECONDS = 300
SERVER_PACKAGES = (
    "infra",
    "gateway",
    "tools",
    "shikoku_dev",
    "shikoku.internal",
    "services.rules.shell",
    "services.routes.shell",
    "services.lobby",
    "services.projections",
    "services.notify",
)
#: What the wheel's modules may import beyond themselves: the standard library's pure parts, the
#: protobuf runtime and the SDK's public messages.
ALLOWED_OUTSIDE = ("google.protobuf", "shikoku.v1")
NEVER = ("redis", "grpc", "asyncio", "socket", "subprocess", "threading", "msgpack")
#: Never loaded by playing (the standard library loads socket and threading for itself).
NOT_LOADED = ("redis", "grpc", "asyncio", "msgpack", "shikoku_sdk")
OVER = re.compile(r"^over after (\d+) events: (bankrupt|bank), net worths (\{.*\})$")


def build_command(script: str, out: Path) -> list[str]:
    return [sys.executable, str(ROOT / script), "--out", str(out)]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The engine's wheel, built by what `make engine` runs, and the SDK's, by what `make sdk`
    runs, into a folder of the test's own (make itself would first bring .venv up to date,
    which other tests share)."""
    out = tmp_path_factory.mktemp("dist")
    built = []
    for script in ("packaging/engine/build_engine_wheel.py", "sdk/build_wheel.py"):
        ran = subprocess.run(
            build_command(script, out), capture_output=True, text=True, timeout=INSTALL_SECONDS
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
        built.append(Path(ran.stdout.strip().splitlines()[-1]))
    engine, sdk = built
    assert engine.parent == sdk.parent == out
    return engine, sdk


def test_make_engine_runs_the_build_into_dist() -> None:
    planned = subprocess.run(
        ["make", "--no-print-directory", "-n", "engine"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert (
        planned.stdout.splitlines()[-1]
        == ".venv/bin/python packaging/engine/build_engine_wheel.py --out dist"
    )


@pytest.fixture(scope="module")
def engine_python(
    wheels: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """The interpreter of a fresh virtualenv (no system site packages) with only the two wheels
    and their dependencies installed (pip fetches protobuf and the SDK's from the index or its
    cache)."""
    venv = tmp_path_factory.mktemp("bot") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *map(str, wheels)],
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    yield python


def run_isolated(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -I ...`: neither the working directory nor PYTHONPATH is on its path, so only
    what is installed in its environment can be imported."""
    return subprocess.run(
        [str(python), "-I", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={"PATH": "/usr/bin:/bin"},
    )


def test_the_wheel_holds_the_engine_and_the_modules_the_rules_service_runs(
    wheels: tuple[Path, Path],
) -> None:
    engine, _sdk = wheels
    assert engine.name == f"shikoku_engine-{VERSION}-py3-none-any.whl"
    archive = zipfile.ZipFile(engine)
    info = f"shikoku_engine-{VERSION}.dist-info/"
    files = {name for name in archive.namelist() if not name.startswith(info)}
    # The same files as the repository's, byte for byte: the service's modules, not copies.
    for name in files:
        assert archive.read(name) == (ROOT / name).read_bytes(), name
    expected = {
        str(path.relative_to(ROOT))
        for folder in (
            "shikoku_engine",
            "kernel",
            "services/rules/domain",
            "services/rules/board",
            "services/routes/engine",
        )
        for path in (ROOT / folder).glob("*.py")
    }
    expected |= {str(p.relative_to(ROOT)) for p in ROOT.glob("services/rules/titles/*/*.toml")}
    expected |= {
        "shikoku_engine/py.typed",
        "services/__init__.py",
        "services/rules/__init__.py",
        "services/rules/wire.py",
        "services/routes/__init__.py",
    }
    assert files == expected
    metadata = Parser().parsestr(archive.read(info + "METADATA").decode())
    assert metadata["Name"] == "shikoku-engine" and metadata["Version"] == VERSION
    required = set(metadata.get_all("Requires-Dist") or [])
    # The engine's protobuf range is the SDK's (the stubs it imports are the SDK's).
    sdk = tomllib.loads((ROOT / "sdk" / "pyproject.toml").read_text())["project"]
    protobuf = next(str(Requirement(r)) for r in sdk["dependencies"] if r.startswith("protobuf"))
    assert required == {protobuf, f"shikoku-sdk=={VERSION}"}


def test_the_engine_pyproject_says_the_projects_version() -> None:
    project = tomllib.loads((ROOT / "packaging/engine/pyproject.toml").read_text())["project"]
    assert project["version"] == VERSION
    assert f"shikoku-sdk=={VERSION}" in project["dependencies"]


def test_no_module_in_the_wheel_imports_redis_grpc_or_the_server(
    wheels: tuple[Path, Path],
) -> None:
    """Every import written in the wheel's modules (those under TYPE_CHECKING aside, which
    never run) is of the wheel itself, the protobuf runtime, the public messages or the
    standard library, and none is of I/O."""
    engine, _sdk = wheels
    archive = zipfile.ZipFile(engine)
    modules = {
        name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for name in archive.namelist()
        if name.endswith(".py")
    }
    outside: dict[str, set[str]] = {}
    for name in archive.namelist():
        if name.endswith(".py"):
            for imported in run_time_imports(ast.parse(archive.read(name))):
                if not any(imported == m or imported.startswith(m + ".") for m in modules):
                    outside.setdefault(imported, set()).add(name)
    assert not {i for i in outside if i.split(".")[0] in NEVER}, outside
    ours = {i for i in outside if not i.startswith(ALLOWED_OUTSIDE)}
    assert {i for i in ours if i.split(".")[0] not in sys.stdlib_module_names} == set(), outside


def run_time_imports(tree: ast.Module) -> Iterator[str]:
    """The modules a module's import statements name, but those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            continue
        yield from _imports_in(node)


def _imports_in(node: ast.AST) -> Iterator[str]:
    for child in ast.walk(node):
        if isinstance(child, ast.Import):
            yield from (alias.name for alias in child.names)
        elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
            yield child.module


def test_nothing_of_the_server_is_importable_beside_the_engine(
    engine_python: Path, tmp_path: Path
) -> None:
    probe = (
        "import importlib.util, sys, shikoku_engine\n"
        "from shikoku.v1 import game_pb2\n"
        "game = shikoku_engine.Game.new(3, seed=1)\n"
        "game.apply(game_pb2.Command(pass_turn=game_pb2.Pass()))\n"
        f"server = {SERVER_PACKAGES!r}\n"
        "def found(name):\n"
        "    try:\n"
        "        return importlib.util.find_spec(name) is not None\n"
        "    except ModuleNotFoundError:\n"
        "        return False\n"
        "print([name for name in server if found(name)])\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(NOT_LOADED)!r}))\n"
        "print(shikoku_engine.__version__, shikoku_engine.__file__)\n"
    )
    checked = run_isolated(engine_python, "-c", probe, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    importable, loaded, installed = checked.stdout.splitlines()
    assert importable == "[]"
    assert loaded == "[]"  # playing loaded neither Redis nor gRPC, nor the SDK's client
    version, where = installed.split()
    assert version == VERSION
    assert where.startswith(str(engine_python.parent.parent)) and "site-packages" in where


def test_the_search_bot_example_plays_a_whole_game_with_the_engine_alone(
    engine_python: Path, tmp_path: Path
) -> None:
    example = tmp_path / "engine_search_bot.py"
    example.write_text((ROOT / "examples/engine_search_bot.py").read_text())
    ran = run_isolated(engine_python, str(example), "3", "2", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    over = OVER.match(ran.stdout.strip())
    assert over is not None, ran.stdout
    worths = ast.literal_eval(over.group(3))
    assert sorted(worths) == [1, 2, 3] and int(over.group(1)) > 100
