"""Builds the wheelhouse the container image installs from, needing no package index:
`python deploy/wheelhouse.py [--out DIR]` (what `make wheels` runs; deploy/Containerfile).

It holds
- the server's wheel, `shikoku-<version>-py3-none-any.whl`, built from a staging copy of the
  packages its pyproject ships (as sdk/build_wheel.py builds the SDK's), so that nothing an
  earlier build left in build/ can slip into it;
- the SDK's wheel, `shikoku_sdk-<version>-py3-none-any.whl` (sdk/build_wheel.py);
- every dependency of the two at the version requirements.lock pins, as binary wheels for the
  image's Python and platform (`--python-version`, `--platform`: by default Python 3.11 and
  manylinux on this machine's processor), whatever this machine's own Python is, and those
  that only an older 3.11 needs (see `missing_for`).

Prints the folder.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYTHON_VERSION = "3.11"
#: The oldest and the newest manylinux tags our dependencies' binary wheels carry: pip takes a
#: custom platform literally, so both are named.
MANYLINUX = ("manylinux2014", "manylinux_2_28")


def server_sources(root: Path = ROOT) -> list[Path]:
    """What the server's wheel is built from, relative to `root`: its pyproject, the folder of
    each package pattern it includes, and the `__init__.py` of a parent package the wheel leaves
    to the SDK (shikoku/), without which setuptools would not look inside it."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    folders = sorted({Path(*pattern.rstrip("*").split(".")) for pattern in include})
    missing = [folder for folder in folders if not (root / folder).is_dir()]
    if missing:
        raise SystemExit(f"{', '.join(map(str, missing))} missing: run `make proto` first")
    parents = {
        parent / "__init__.py" for folder in folders for parent in folder.parents if parent.parts
    }
    return [Path("pyproject.toml"), *sorted(parents), *folders]


def stage(into: Path, root: Path = ROOT) -> Path:
    """Copies the server's sources into `into`; returns it."""
    for relative in server_sources(root):
        source, target = root / relative, into / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, target)
    return into


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def build(out: Path, python_version: str, platforms: list[str]) -> Path:
    """Writes the wheelhouse into `out`, replacing whatever was there."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="shikoku-server-") as staging:
        pip("wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(stage(Path(staging))))
    subprocess.run(
        [sys.executable, str(ROOT / "sdk/build_wheel.py"), "--out", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wanted = sorted(str(wheel) for wheel in out.glob("*.whl"))
    while wanted:
        pip(
            *("download", "--quiet", "--dest", str(out), "--find-links", str(out)),
            *("--only-binary=:all:", "--implementation", "cp"),
            *("--python-version", python_version, *(f"--platform={name}" for name in platforms)),
            *("--constraint", str(ROOT / "requirements.lock"), *wanted),
        )
        wanted = missing_for(out, python_version)
    return out


def missing_for(out: Path, python_version: str) -> list[str]:
    """What the wheels in `out` require on the image's Python but `out` lacks: pip evaluates
    requirements' markers on this machine's Python, not on the one it downloads for (redis
    needs async-timeout before Python 3.11.3, as on Debian bookworm's 3.11.2). The image's
    Python is taken at its first release (3.11.0), so that nothing any 3.11 needs is left out."""
    environment = {key: str(value) for key, value in default_environment().items()}
    environment |= {
        "python_version": python_version,
        "python_full_version": f"{python_version}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "extra": "",
    }
    wheels = sorted(out.glob("*.whl"))
    have = {canonicalize_name(wheel.name.split("-")[0]) for wheel in wheels}
    missing = set()
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            metadata = Parser().parsestr(archive.read(name).decode())
        for line in metadata.get_all("Requires-Dist") or []:
            requirement = Requirement(line)
            applies = requirement.marker and requirement.marker.evaluate(environment)
            if applies and canonicalize_name(requirement.name) not in have:
                requirement.marker = None
                missing.add(str(requirement))
    return sorted(missing)


def main() -> None:
    parser = argparse.ArgumentParser(description="Builds the image's wheelhouse.")
    parser.add_argument("--out", type=Path, default=ROOT / "build/wheelhouse")
    parser.add_argument("--python-version", default=PYTHON_VERSION, help="the image's Python")
    parser.add_argument(
        "--platform",
        action="append",
        help="a wheel platform tag of the image, repeatable (default: manylinux of this "
        "machine's processor)",
    )
    args = parser.parse_args()
    machine = platform.machine()
    platforms = args.platform or [f"{tag}_{machine}" for tag in MANYLINUX]
    print(build(args.out, args.python_version, platforms))


if __name__ == "__main__":
    main()
