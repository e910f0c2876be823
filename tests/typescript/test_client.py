"""The TypeScript package @shikoku/client against the real system (`shikoku run`): its own Node
tests (clients/typescript/test, `node --test`), and the packed tarball of `make sdk-ts`
installed in an empty npm project, as a user installs it, calling GetTitle."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from shikoku_sdk.version import VERSION
from tests.e2e.api import System
from tests.e2e.launch import start_system, stop_system

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"
NODE_TIMEOUT_SECONDS = 120


@pytest.fixture(scope="module")
def system(redis_url: str) -> Iterator[System]:
    started = start_system(redis_url)
    yield started
    stop_system(started)


def _package_version() -> str:
    return str(json.loads((PACKAGE / "package.json").read_text())["version"])


def _node_env(system: System) -> dict[str, str]:
    return dict(os.environ, SHIKOKU_WEB_URL=f"http://{system.web}", SHIKOKU_API_KEY=system.api_key)


def test_the_package_is_the_projects_version() -> None:
    assert _package_version() == VERSION


def test_the_packages_node_tests_pass_against_the_system(system: System) -> None:
    if not (PACKAGE / "dist" / "index.js").exists():
        pytest.fail("clients/typescript is not built: `make sdk-ts` builds it")
    run = subprocess.run(
        ["node", "--test", "test/client.test.mjs"],
        cwd=PACKAGE,
        env=_node_env(system),
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT_SECONDS,
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    passed = re.search(r"^# pass (\d+)$", report, re.MULTILINE)
    failed = re.search(r"^# fail (\d+)$", report, re.MULTILINE)
    assert passed and int(passed.group(1)) >= 8, report
    assert failed and int(failed.group(1)) == 0, report


def test_the_packed_tarball_installs_and_gets_the_title(system: System, tmp_path: Path) -> None:
    tarball = ROOT / "dist" / f"shikoku-client-{_package_version()}.tgz"
    if not tarball.exists():
        pytest.fail(f"no {tarball.relative_to(ROOT)}: `make sdk-ts` packs it")
    npm = ["npm", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]
    subprocess.run([*npm, "init", "-y"], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run(
        [*npm, "install", str(tarball)],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=NODE_TIMEOUT_SECONDS,
    )
    script = tmp_path / "title.mjs"
    script.write_text(
        'import { createShikokuClient } from "@shikoku/client";\n'
        "const { SHIKOKU_WEB_URL: url, SHIKOKU_API_KEY: apiKey } = process.env;\n"
        "const client = createShikokuClient(url, { apiKey });\n"
        'const title = await client.title.getTitle({ title: "1889" });\n'
        "console.log(JSON.stringify({ name: title.name, hexes: title.hexes.length }));\n"
    )
    run = subprocess.run(
        ["node", str(script)],
        cwd=tmp_path,
        env=_node_env(system),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["name"] == "1889"
    assert answer["hexes"] > 40
