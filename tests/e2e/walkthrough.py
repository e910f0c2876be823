"""Running a walk-through of examples/ as its reader runs it: every ```sh block, in order, in one
bash shell, against the whole system. What each block prints (standard output and error) must
be the ```text or ```json block right after it, up to ids, tokens, UUIDs and times (and blanks at
the ends of lines); a block with no output block after it must print nothing. The lines the
reader fills in (the API key, the addresses) the test fills in with its system's."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.api.protos import BIN

KEY_LINE = re.compile(r"^export SHIKOKU_API_KEY=.*$", re.M)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)
MARK = "@@ step {} @@"


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
    # Not \b after it: a token may end in "-", and "-" before a quote is no word boundary.
    (re.compile(r"\b[tp]-[0-9a-f]{12}~[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])"), "<token>"),
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


def run(text: str, filled_in: dict[re.Pattern[str], str], cwd: Path, home: Path) -> list[str]:
    """What each step prints, run in one bash shell in `cwd`, each line matching a pattern of
    `filled_in` (which must appear once in the walk-through) replaced by its line."""
    for line in filled_in:
        assert len(line.findall(text)) == 1, line.pattern
    script = ["exec 2>&1"]
    for i, step in enumerate(steps(text)):
        commands = step.commands
        for line, replacement in filled_in.items():
            commands = line.sub(replacement, commands)
        script += [f"echo '{MARK.format(i)}'", commands]
    ran = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=cwd,
        env={"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    parts = re.split(r"^@@ step \d+ @@\n", ran.stdout, flags=re.M)
    assert len(parts) == len(steps(text)) + 1, ran.stdout
    return parts[1:]


def assert_runs_as_written(text: str, outputs: list[str]) -> None:
    for step, output in zip(steps(text), outputs, strict=True):
        expected = step.prints or ""
        assert normalised(output) == normalised(expected), (
            f"\n$ {step.commands}\nprinted:\n{output}\nbut the walk-through shows:\n{expected}"
        )
