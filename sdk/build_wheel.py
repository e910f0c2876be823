"""Builds the `shikoku-sdk` wheel: `python sdk/build_wheel.py [--out DIR]` (what `make sdk` runs).

The SDK's files are copied into a staging folder first, laid out as in the repository (the
pyproject beside the packages it names), so that the wheel can hold nothing else: of
`shikoku/`, only its `__init__.py`, `py.typed` and the public stubs (`shikoku/v1/*_pb2*.py`
and their `.pyi`), none of the server's packages, internal protos or other generated files.
Prints the wheel's path.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUB_PATTERNS = ("*_pb2.py", "*_pb2.pyi", "*_pb2_grpc.py", "*_pb2_grpc.pyi")


def sdk_files(root: Path = ROOT) -> list[Path]:
    """The files of the distribution, relative to `root`."""
    stubs = sorted({p for pattern in STUB_PATTERNS for p in (root / "shikoku/v1").glob(pattern)})
    if not stubs:
        raise SystemExit(f"no generated stubs in {root / 'shikoku/v1'}: run `make proto` first")
    own = [root / "shikoku/__init__.py", root / "shikoku/py.typed", root / "shikoku/v1/__init__.py"]
    sdk = [*sorted((root / "shikoku_sdk").glob("*.py")), root / "shikoku_sdk/py.typed"]
    pyproject = [root / "sdk/pyproject.toml", root / "sdk/README.md"]
    return [path.relative_to(root) for path in [*pyproject, *own, *stubs, *sdk]]


def stage(into: Path, root: Path = ROOT) -> Path:
    """Copies the distribution's files into `into`; returns the folder of its pyproject."""
    for relative in sdk_files(root):
        target = into / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relative, target)
    return into / "sdk"


def build(out: Path) -> Path:
    """Builds the wheel into `out`, replacing an older one there, with this interpreter's pip
    (which fetches the build backend, setuptools, into an isolated build environment)."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("shikoku_sdk-*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="shikoku-sdk-") as staging:
        project = stage(Path(staging))
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"),
                *("--wheel-dir", str(out), str(project)),
            ],
            check=True,
        )
    (wheel,) = out.glob("shikoku_sdk-*.whl")
    return wheel


def main() -> None:
    parser = argparse.ArgumentParser(description="Builds the shikoku-sdk wheel.")
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="default: dist/")
    print(build(parser.parse_args().out))


if __name__ == "__main__":
    main()
