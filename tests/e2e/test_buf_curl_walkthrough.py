"""examples/buf-curl.md, run as its reader runs it: every ```sh block, in order, in one bash
shell from the repository root, with the real buf (the buf-bin dev dependency) against the whole
system, `shikoku run`: gRPC at the gateway, Connect and gRPC-Web at the web entrypoint over
HTTP/1.1 and HTTP/2. What each block prints must be the ```text or ```json block right after it,
up to ids, tokens, UUIDs and times, as for examples/grpcurl.md (whose test's reading of the
blocks this one shares).

The reader fills in three lines, and so does the test: the API key and the two addresses
(`GW=…`, `WEB=…`; the test's system listens elsewhere)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.api.protos import BIN, REPO, tool
from tests.e2e.api import System
from tests.e2e.test_grpcurl_walkthrough import KEY_LINE, MARK, normalised, steps

pytestmark = pytest.mark.e2e

WALKTHROUGH = REPO / "examples" / "buf-curl.md"
GATEWAY_LINE = re.compile(r"^GW=http://127\.0\.0\.1:50051$", re.M)
WEB_LINE = re.compile(r"^WEB=http://127\.0\.0\.1:8080$", re.M)


def run(text: str, system: System, home: Path) -> list[str]:
    """What each step of the walk-through prints, run in one bash shell."""
    for line in (KEY_LINE, GATEWAY_LINE, WEB_LINE):
        assert len(line.findall(text)) == 1, line.pattern
    script = ["exec 2>&1"]
    for i, step in enumerate(steps(text)):
        commands = KEY_LINE.sub(f"export SHIKOKU_API_KEY={system.api_key}", step.commands)
        commands = GATEWAY_LINE.sub(f"GW=http://{system.gateway}", commands)
        commands = WEB_LINE.sub(f"WEB=http://{system.web}", commands)
        script += [f"echo '{MARK.format(i)}'", commands]
    ran = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=REPO,  # --schema protos
        env={"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    parts = re.split(r"^@@ step \d+ @@\n", ran.stdout, flags=re.M)
    assert len(parts) == len(steps(text)) + 1, ran.stdout
    return parts[1:]


def test_the_walkthrough_runs_as_written(system: System, tmp_path: Path) -> None:
    tool("buf")
    text = WALKTHROUGH.read_text()
    outputs = run(text, system, tmp_path)
    for step, output in zip(steps(text), outputs, strict=True):
        expected = step.prints or ""
        assert normalised(output) == normalised(expected), (
            f"\n$ {step.commands}\nprinted:\n{output}\nbut the walk-through shows:\n{expected}"
        )


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
