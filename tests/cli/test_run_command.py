"""`shikoku run` is the development launchers' (shikoku_dev, devtools/pyproject.toml): where only
the server is installed, as in the container image, it says in one line that it needs a source
checkout and exits 2, while the server's other commands still import.

The image's install is the two wheels it installs, here the folders they are built from (the
staging copies of deploy/wheelhouse.py and sdk/build_wheel.py) in one, run by this environment's
Python with `-S`: the installed dependencies are on PYTHONPATH, but no `.pth` file is read, so
none of this checkout's editable installs (the server, the SDK, the launchers) is on the path."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

import pytest

from tools.launchers import OWN_SYSTEM_NEEDS_A_CHECKOUT, RUN_NEEDS_A_CHECKOUT

ROOT = Path(__file__).resolve().parents[2]


def _script(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def server_alone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's and the SDK's wheels' files, as the image installs them."""
    staged: Path = _script("deploy/wheelhouse.py").stage(tmp_path_factory.mktemp("server"))
    _script("sdk/build_wheel.py").stage(staged)
    return staged.resolve()


def python_alone(server: Path, *args: str) -> subprocess.CompletedProcess[str]:
    installed = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    return subprocess.run(
        [sys.executable, "-S", *args],
        cwd=server,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(installed)},
    )


def test_the_server_alone_has_its_commands_but_not_the_launchers(server_alone: Path) -> None:
    result = python_alone(
        server_alone,
        "-c",
        "import importlib.util, tools.cli, tools.sitelog.command; "
        "print(tools.cli.__file__); print(importlib.util.find_spec('shikoku_dev'))",
    )
    assert result.returncode == 0, result.stderr
    cli, launchers = result.stdout.splitlines()
    assert Path(cli).resolve() == server_alone / "tools/cli.py"
    assert launchers == "None"


def test_shikoku_run_without_the_launchers_says_it_needs_a_source_checkout(
    server_alone: Path,
) -> None:
    result = python_alone(server_alone, "-m", "tools.cli", "run")
    assert result.returncode == 2, result.stderr
    assert result.stderr == RUN_NEEDS_A_CHECKOUT + "\n"
    assert result.stdout == ""
    assert "`make run`" in RUN_NEEDS_A_CHECKOUT and "development launcher" in RUN_NEEDS_A_CHECKOUT


def test_an_import_on_its_own_system_without_the_launchers_says_so_in_one_line(
    server_alone: Path,
) -> None:
    game = ROOT.parent / "shared/fixtures/18xx.games/1889/hs_lhglbbiz_17502.json"
    result = python_alone(server_alone, "-m", "tools.cli", "import", str(game), "--own-system")
    assert result.returncode == 2, result.stderr
    assert result.stderr == OWN_SYSTEM_NEEDS_A_CHECKOUT + "\n"
    assert result.stdout == ""
