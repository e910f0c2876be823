"""The board page's bundle of @shikoku/client (gateway/web/static/shikoku-client.js) is
committed; it must be what its sources make now (`make bundle`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.io  # it runs node and git

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = "gateway/web/static/shikoku-client.js"


def test_the_committed_bundle_is_the_one_the_sources_build(tmp_path: Path) -> None:
    built = tmp_path / "shikoku-client.js"
    subprocess.run(
        ["node", "clients/typescript/bundle.mjs", str(built)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    committed = subprocess.run(
        ["git", "show", f"HEAD:{BUNDLE}"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    assert built.read_bytes() == committed, (
        f"{BUNDLE} as committed is not what its sources make: run `make bundle` and commit it"
    )
