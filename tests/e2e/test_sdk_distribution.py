"""The SDK as a client developer installs it: the wheel `make sdk` builds (the same command),
installed into a fresh virtualenv without system site packages, where nothing of the server is
importable, and from which `python -m shikoku_sdk.bot` plays whole games of 3, 4 and 6 players
against the real system, and the README's example runs."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import tomllib
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest
import setuptools  # type: ignore[import-untyped]

from shikoku_dev.redis_server import free_port
from shikoku_sdk import Client, game_result
from shikoku_sdk.version import VERSION
from tests.e2e.api import System

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SERVER_PACKAGES = ("services", "gateway", "infra", "kernel", "tools", "shikoku.internal")
ENDED = re.compile(r"^game (\S+) ended after (\d+) events: (\w+)$", re.MULTILINE)
INSTALL_SECONDS = 300


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built by what `make sdk` runs, into a folder of the test's own."""
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, str(ROOT / "sdk/build_wheel.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return Path(built.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def sdk_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The interpreter of a fresh virtualenv (no system site packages) with only the wheel and
    its dependencies installed (pip fetches grpcio and protobuf from the index or its cache)."""
    venv = tmp_path_factory.mktemp("client") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    yield python


def run_isolated(
    python: Path, *args: str, cwd: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -I ...`: neither the working directory nor PYTHONPATH is on its path, so only
    what is installed in its environment can be imported."""
    return subprocess.run(
        [str(python), "-I", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", **env},
    )


def test_the_wheel_holds_the_sdk_and_the_public_stubs_and_nothing_else(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    info = f"shikoku_sdk-{VERSION}.dist-info/"
    assert wheel.name == f"shikoku_sdk-{VERSION}-py3-none-any.whl"
    files = {name for name in names if not name.startswith(info)}
    protos = sorted(p.stem for p in (ROOT / "protos/shikoku/v1").glob("*.proto"))
    stubs = {
        f"shikoku/v1/{proto}{suffix}"
        for proto in protos
        for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")
    }
    sdk = {f"shikoku_sdk/{p.name}" for p in (ROOT / "shikoku_sdk").glob("*.py")}
    own = {"shikoku/__init__.py", "shikoku/py.typed", "shikoku/v1/__init__.py"}
    assert files == stubs | sdk | own | {"shikoku_sdk/py.typed"}
    metadata = Parser().parsestr(zipfile.ZipFile(wheel).read(info + "METADATA").decode())
    assert metadata["Name"] == "shikoku-sdk" and metadata["Version"] == VERSION
    required = {re.split(r"[<>=!~; ]", r)[0] for r in metadata.get_all("Requires-Dist") or []}
    assert required == {"grpcio", "protobuf", "googleapis-common-protos"}


def test_the_server_pins_the_sdk_it_stands_on_and_leaves_it_its_packages() -> None:
    server = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert f"shikoku-sdk=={VERSION}" in server["project"]["dependencies"]
    include = server["tool"]["setuptools"]["packages"]["find"]["include"]
    shipped = set(setuptools.find_packages(str(ROOT), include=include))
    sdk = tomllib.loads((ROOT / "sdk/pyproject.toml").read_text())["tool"]["setuptools"]
    sdk_packages = set(sdk["packages"]["find"]["include"])
    assert sdk_packages == {"shikoku", "shikoku.v1", "shikoku_sdk"}
    assert not shipped & sdk_packages, "a package in both wheels: their files clash"
    assert {"shikoku.internal", "services", "gateway", "infra", "kernel", "tools"} <= shipped


def test_nothing_of_the_server_is_importable_beside_the_sdk(
    sdk_python: Path, tmp_path: Path
) -> None:
    probe = (
        "import importlib.util, shikoku_sdk, shikoku.v1.game_pb2\n"
        f"server = {SERVER_PACKAGES!r}\n"
        "def found(name):\n"
        "    try:\n"
        "        return importlib.util.find_spec(name) is not None\n"
        "    except ModuleNotFoundError:\n"
        "        return False\n"
        "print([name for name in server if found(name)])\n"
        "print(shikoku_sdk.__version__, shikoku_sdk.__file__)\n"
    )
    checked = run_isolated(sdk_python, "-c", probe, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    importable, installed = checked.stdout.splitlines()
    assert importable == "[]"
    version, where = installed.split()
    assert version == VERSION
    assert where.startswith(str(sdk_python.parent.parent)) and "site-packages" in where


@pytest.mark.parametrize("players", [3, 4, 6])
def test_the_installed_bot_plays_a_whole_game(
    sdk_python: Path, system: System, tmp_path: Path, players: int
) -> None:
    began = time.monotonic()
    played = run_isolated(
        sdk_python,
        *("-m", "shikoku_sdk.bot", system.gateway, str(players), "--seed", str(players)),
        *("--api-key", system.api_key),
        cwd=tmp_path,
    )
    seconds = time.monotonic() - began
    assert played.returncode == 0, played.stdout + played.stderr
    ended = ENDED.search(played.stdout)
    assert ended is not None, played.stdout
    game_id, events, reason = ended.group(1), int(ended.group(2)), ended.group(3)
    with Client(system.gateway, api_key=system.api_key) as client:
        final = client.state(game_id)
        table = client.get_table(game_id)
    result = game_result(final)
    assert result is not None and not final.acting_seats
    assert (final.version, result.reason) == (events, reason)
    assert sorted(result.net_worths) == list(range(1, players + 1))
    assert table.seat_count == players and all(seat.taken for seat in table.seats)
    print(f"{players} players: {events} events in {seconds:.1f} s")


def test_the_installed_bot_says_why_it_could_not_play(sdk_python: Path, system: System) -> None:
    nowhere = run_isolated(
        sdk_python, "-m", "shikoku_sdk.bot", f"127.0.0.1:{free_port()}", "3", cwd=ROOT / "sdk"
    )
    assert nowhere.returncode == 1
    assert "cannot reach the gateway at 127.0.0.1:" in nowhere.stderr
    refused = run_isolated(
        sdk_python,
        "-m",
        "shikoku_sdk.bot",
        system.gateway,
        "3",
        cwd=ROOT / "sdk",
        SHIKOKU_API_KEY="k-nope.nope",
    )
    assert refused.returncode == 1
    assert "refused: UNAUTHENTICATED" in refused.stderr
    assert "Traceback" not in nowhere.stderr + refused.stderr


def test_the_readme_example_runs_with_only_the_sdk(
    sdk_python: Path, system: System, tmp_path: Path
) -> None:
    example = tmp_path / "quickstart.py"
    example.write_text((ROOT / "examples/quickstart.py").read_text())
    ran = run_isolated(
        sdk_python, str(example), system.gateway, cwd=tmp_path, SHIKOKU_API_KEY=system.api_key
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    assert len(lines) == 6 and all(line.startswith("version ") for line in lines[:5])
    assert lines[-1].startswith("GameResult(reason=")
