"""examples/buf-curl.md, run as its reader runs it: every ```sh block, in order, in one bash
shell from the repository root, with the real buf (the buf-bin dev dependency) against the whole
system, `shikoku run`: gRPC at the gateway, Connect and gRPC-Web at the web entrypoint over
HTTP/1.1 and HTTP/2, read and checked as tests/e2e/walkthrough.py says.

The reader fills in three lines, and so does the test: the API key and the two addresses
(`GW=…`, `WEB=…`; the test's system listens elsewhere)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.api.protos import REPO, tool
from tests.e2e.api import System
from tests.e2e.walkthrough import KEY_LINE, assert_runs_as_written, run, steps

pytestmark = pytest.mark.e2e

WALKTHROUGH = REPO / "examples" / "buf-curl.md"
GATEWAY_LINE = re.compile(r"^GW=http://127\.0\.0\.1:50051$", re.M)
WEB_LINE = re.compile(r"^WEB=http://127\.0\.0\.1:8080$", re.M)


def test_the_walkthrough_runs_as_written(system: System, tmp_path: Path) -> None:
    tool("buf")
    text = WALKTHROUGH.read_text()
    filled_in = {
        KEY_LINE: f"export SHIKOKU_API_KEY={system.api_key}",
        GATEWAY_LINE: f"GW=http://{system.gateway}",
        WEB_LINE: f"WEB=http://{system.web}",
    }
    # from the repository root, for --schema protos
    assert_runs_as_written(text, run(text, filled_in, cwd=REPO, home=tmp_path))


def test_the_walkthrough_calls_both_surfaces_in_every_protocol() -> None:
    text = WALKTHROUGH.read_text()
    commands = [step.commands for step in steps(text)]
    calls = [c for c in commands if "buf curl" in c]
    assert any("--protocol grpc " in c and "$GW" in c and "--schema" not in c for c in calls)
    assert any("--reflect-protocol grpc-v1 " in c for c in calls)
    for protocol in ("connect", "grpcweb"):
        on_web = [c for c in calls if f"--protocol {protocol}" in c and "$WEB" in c]
        assert on_web and all("--schema protos" in c for c in on_web), protocol
        assert any("--http2-prior-knowledge" in c for c in on_web), protocol
    assert any("--protocol connect" in c and "--http2" not in c for c in calls), "HTTP/1.1"
    assert sum(step.prints is not None for step in steps(text)) >= 8
