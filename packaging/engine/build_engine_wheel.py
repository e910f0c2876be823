"""Builds the `shikoku-engine` wheel (what `make engine` runs):

    python packaging/engine/build_engine_wheel.py [--out DIR]

The modules the rules service runs are copied as they are, with the engine's own package, into
a staging folder laid out as the repository is (the pyproject in packaging/engine/, the packages
at the root), so that the wheel holds those and nothing else: of services/, only the rules
domain, the board and its title data, the public messages' conversion (services/rules/wire.py)
and the routes engine; no shell, no infrastructure. Prints the wheel's path.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_FILES = ("*.py", "py.typed")
#: Whole packages (their modules), as the service runs them.
PACKAGES = (
    "shikoku_engine",
    "kernel",
    "services/rules/domain",
    "services/rules/board",
    "services/routes/engine",
)
#: Single modules of packages the wheel carries only a part of.
MODULES = (
    "services/__init__.py",
    "services/rules/__init__.py",
    "services/rules/wire.py",
    "services/routes/__init__.py",
)
TITLE_DATA = "services/rules/titles/*/*.toml"


def engine_files(root: Path = ROOT) -> list[Path]:
    """The files of the distribution, relative to `root`."""
    packaged = sorted(
        {
            path
            for package in PACKAGES
            for pattern in PACKAGE_FILES
            for path in (root / package).glob(pattern)
        }
    )
    titles = sorted(root.glob(TITLE_DATA))
    if not titles:
        raise SystemExit(f"no title data matches {root / TITLE_DATA}")
    modules = [root / module for module in MODULES]
    pyproject = [root / "packaging/engine/pyproject.toml", root / "packaging/engine/README.md"]
    return [path.relative_to(root) for path in [*pyproject, *packaged, *modules, *titles]]


def stage(into: Path, root: Path = ROOT) -> Path:
    """Copies the distribution's files into `into`; returns the folder of its pyproject."""
    for relative in engine_files(root):
        target = into / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relative, target)
    return into / "packaging/engine"


def build(out: Path) -> Path:
    """Builds the wheel into `out`, replacing an older one there, with this interpreter's pip
    (which fetches the build backend, setuptools, into an isolated build environment)."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("shikoku_engine-*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="shikoku-engine-") as staging:
        project = stage(Path(staging))
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"),
                *("--wheel-dir", str(out), str(project)),
            ],
            check=True,
        )
    (wheel,) = out.glob("shikoku_engine-*.whl")
    return wheel


def main() -> None:
    parser = argparse.ArgumentParser(description="Builds the shikoku-engine wheel.")
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="default: dist/")
    print(build(parser.parse_args().out))


if __name__ == "__main__":
    main()
