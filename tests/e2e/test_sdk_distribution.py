"""The SDK as a client developer installs it: the wheel `make sdk` builds (the same command),
installed into a fresh virtualenv without system site packages, where nothing of the server is
importable, and from which `python -m shikoku_sdk.bot` plays whole games of 3, 4 and 6 players
against the real system, and the README's example and the async one run; the async one runs
too beside the lowest grpcio and protobuf the wheel allows (below which the stubs refuse to
load); and a client's own code importing grpc, grpc.aio, protobuf and the SDK passes
`mypy --strict` there, with the type stubs the wheel brings."""

from __future__ import annotations

import importlib.metadata
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
from packaging.requirements import Requirement

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


def fresh_venv(folder: Path, *requirements: str) -> Path:
    """The interpreter of a new virtualenv in `folder` (no system site packages) with only
    `requirements` and their dependencies installed (pip fetches them from the index or its
    cache)."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *requirements],
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return python


@pytest.fixture(scope="module")
def sdk_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtualenv's interpreter with the wheel and the newest dependencies it allows."""
    yield fresh_venv(tmp_path_factory.mktemp("client") / "venv", str(wheel))


def requirements(wheel: Path) -> dict[str, Requirement]:
    """The wheel's Requires-Dist, by distribution name."""
    info = f"shikoku_sdk-{VERSION}.dist-info/METADATA"
    metadata = Parser().parsestr(zipfile.ZipFile(wheel).read(info).decode())
    return {r.name: r for r in map(Requirement, metadata.get_all("Requires-Dist") or [])}


def lowest(requirement: Requirement) -> str:
    """The lowest version `requirement` allows (its `>=` bound)."""
    (bound,) = [spec.version for spec in requirement.specifier if spec.operator == ">="]
    return bound


@pytest.fixture(scope="module")
def lowest_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtualenv's interpreter with the wheel beside the lowest grpcio and protobuf
    it allows."""
    required = requirements(wheel)
    pins = [f"{name}=={lowest(required[name])}" for name in ("grpcio", "protobuf")]
    yield fresh_venv(tmp_path_factory.mktemp("lowest") / "venv", str(wheel), *pins)


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
    assert required == {
        *("grpcio", "protobuf", "googleapis-common-protos"),
        *("types-grpcio", "types-protobuf"),  # what a client's `mypy --strict` needs
    }


GENCODE = re.compile(r"^# Protobuf Python Version: (\d+)\.(\d+)\.(\d+)$", re.MULTILINE)
GRPC_GENERATED = re.compile(r"^GRPC_GENERATED_VERSION = '([\d.]+)'$", re.MULTILINE)


def gencode() -> tuple[int, int, int]:
    """The protobuf version the message stubs were generated for (each checks the runtime is
    no older when imported)."""
    found = {
        tuple(map(int, match.groups()))
        for path in (ROOT / "shikoku/v1").glob("*_pb2.py")
        for match in GENCODE.finditer(path.read_text())
    }
    (version,) = found
    major, minor, patch = version
    return major, minor, patch


def test_the_wheel_allows_what_the_generated_stubs_accept(wheel: Path) -> None:
    """protobuf from the gencode's version to the next major one; grpcio from the version
    the gRPC stubs were generated for (older, they refuse to load)."""
    required = requirements(wheel)
    major, minor, patch = gencode()
    assert str(required["protobuf"].specifier) == f"<{major + 1},>={major}.{minor}.{patch}"
    (grpc_generated,) = {
        match.group(1)
        for path in (ROOT / "shikoku/v1").glob("*_pb2_grpc.py")
        for match in GRPC_GENERATED.finditer(path.read_text())
    }
    assert lowest(required["grpcio"]) == grpc_generated


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


ASYNC_DONE = re.compile(r"^actions: (\d+) events: (\d+) last: GameEnded$", re.MULTILINE)


@pytest.mark.parametrize("venv", ["sdk_python", "lowest_python"])
def test_the_async_example_runs_with_the_newest_and_the_lowest_dependencies(
    venv: str, request: pytest.FixtureRequest, system: System, tmp_path: Path
) -> None:
    python: Path = request.getfixturevalue(venv)
    versions = run_isolated(
        python,
        "-c",
        "import grpc, google.protobuf as p; print(grpc.__version__, p.__version__)",
        cwd=tmp_path,
    )
    grpc_version, protobuf_version = versions.stdout.split()
    if venv == "lowest_python":
        major, minor, patch = gencode()
        assert protobuf_version == f"{major}.{minor}.{patch}"
        assert grpc_version == lowest(requirements(request.getfixturevalue("wheel"))["grpcio"])
    example = tmp_path / "async_quickstart.py"
    example.write_text((ROOT / "examples/async_quickstart.py").read_text())
    ran = run_isolated(
        python, str(example), system.gateway, cwd=tmp_path, SHIKOKU_API_KEY=system.api_key
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == "listed: True"  # create_table, then found by list_tables' pages
    done = ASYNC_DONE.search(ran.stdout)
    assert done is not None, ran.stdout
    assert int(done.group(1)) > 50 and int(done.group(2)) > int(done.group(1))
    assert lines[-1].startswith("GameResult(reason=")


def test_below_the_lowest_protobuf_the_stubs_refuse_to_load(
    lowest_python: Path, tmp_path: Path
) -> None:
    """The release before the gencode's: what the lower bound keeps out, with reason."""
    major, minor, patch = gencode()
    assert patch > 0, "the release before is then not this arithmetic's"
    older = f"{major}.{minor}.{patch - 1}"
    target = tmp_path / "older"
    fetched = subprocess.run(
        [
            *(str(lowest_python), "-m", "pip", "install", "--quiet", "--no-deps"),
            *("--target", str(target), f"protobuf=={older}"),
        ],
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
    )
    assert fetched.returncode == 0, fetched.stderr
    probe = (
        f"import sys; sys.path.insert(0, {str(target)!r})\n"
        "import google.protobuf; print(google.protobuf.__version__)\n"
        "import shikoku.v1.game_pb2\n"
    )
    loaded = run_isolated(lowest_python, "-c", probe, cwd=tmp_path)
    assert loaded.returncode == 1 and loaded.stdout.strip() == older
    assert "VersionError" in loaded.stderr
    assert f"gencode {major}.{minor}.{patch} runtime {older}" in loaded.stderr


# A client's own code: grpc and grpc.aio used directly beside the SDK (sync and async).
CLIENT_CODE = """\
from __future__ import annotations

import asyncio

import grpc
import grpc.aio
from google.protobuf import json_format

from shikoku.v1 import lobby_pb2, lobby_pb2_grpc
from shikoku_sdk import Client, ShikokuError, aio, seat_table
from shikoku_sdk.channel import keyed_channel


def tables(address: str) -> list[str]:
    with Client(address) as client:
        seated = seat_table(client, 3)
        token: str = seated.seat_tokens[1]
        stub = lobby_pb2_grpc.LobbyServiceStub(keyed_channel(address))
        table: lobby_pb2.Table = stub.GetTable(lobby_pb2.GetTableRequest(table_id=seated.table_id))
        try:
            client.get_table("t-nope")
        except ShikokuError as error:
            code: grpc.StatusCode = error.code
            print(code.name, token)
        return [json_format.MessageToJson(table)]


async def listed(address: str) -> list[str]:
    async with aio.Client(address) as client:
        created = await client.create_table(3)
        names = [table.table_id async for table in client.list_tables()]
        async for update in client.watch(created.table.table_id, until_end=False):
            print(update.event.version)
            break
    async with grpc.aio.insecure_channel(address) as channel:
        stub = lobby_pb2_grpc.LobbyServiceStub(channel)
        page = await stub.ListTables(lobby_pb2.ListTablesRequest(page_size=2))
        try:
            await stub.GetTable(lobby_pb2.GetTableRequest(table_id="t-nope"))
        except grpc.aio.AioRpcError as error:
            print(error.code().name, ShikokuError.from_rpc_error(error).reason)
        await channel.close()
    return names + [table.table_id for table in page.tables]


if __name__ == "__main__":
    print(tables("127.0.0.1:50051"), asyncio.run(listed("127.0.0.1:50051")))
"""
# The same kind of code, wrong: what mypy must see through the stubs.
WRONG_CODE = """\
import grpc
from shikoku_sdk import aio


async def wrong(client: aio.Client) -> None:
    created = await client.create_table(3)
    code: str = grpc.StatusCode.OK
    print(created.host_tokn, code)
"""


@pytest.fixture(scope="module")
def mypy_python(sdk_python: Path) -> Path:
    """The SDK's virtualenv with mypy (the version the repository checks with) installed."""
    mypy = f"mypy=={importlib.metadata.version('mypy')}"
    installed = subprocess.run(
        [str(sdk_python), "-m", "pip", "install", "--quiet", mypy],
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return sdk_python


def test_a_clients_code_importing_grpc_and_the_sdk_passes_mypy_strict(
    mypy_python: Path, tmp_path: Path
) -> None:
    (tmp_path / "client.py").write_text(CLIENT_CODE)
    (tmp_path / "wrong.py").write_text(WRONG_CODE)
    checked = run_isolated(mypy_python, "-m", "mypy", "--strict", "client.py", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("Success: no issues found in 1 source file")
    refused = run_isolated(mypy_python, "-m", "mypy", "--strict", "wrong.py", cwd=tmp_path)
    assert refused.returncode == 1
    assert 'expression has type "StatusCode", variable has type "str"' in refused.stdout
    assert '"CreateTableResponse" has no attribute "host_tokn"' in refused.stdout
    assert "Found 2 errors in 1 file" in refused.stdout
