"""`shikoku routes POSITION.json`, run as a real process on positions of a real game."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from services.routes.engine.solver import solve
from services.rules.domain.route_pricing import corporation_graph
from services.rules.domain.state import GameState
from tests.shared import SITE_GAMES
from tools.sitelog.export_format import load
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import step_through

SHIKOKU = str(Path(sys.executable).parent / "shikoku")


def state_after(action_id: int) -> GameState:
    game = load(SITE_GAMES / "314.json")
    table = InProcessTable(game)
    for action in step_through(game, table):
        if action["id"] == action_id:
            break
    return table.state


def position_file(state: GameState) -> dict[str, Any]:
    assert state.board is not None
    tokens: dict[str, list[str]] = {}
    for (hex_id, _city), held in state.board.tokens.items():
        for corporation in held:
            if corporation:
                tokens.setdefault(corporation, []).append(hex_id)
    return {
        "phase": state.phase,
        "tiles": [
            {"hex": h, "tile": p.tile, "rotation": p.rotation} for h, p in state.board.tiles.items()
        ],
        "tokens": tokens,
        "trains": {c.id: list(c.trains) for c in state.corporations if c.trains},
    }


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SHIKOKU, "routes", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("action_id", [200, 440])
def test_all_corporations_get_the_solvers_optimum(tmp_path: Path, action_id: int) -> None:
    state = state_after(action_id)
    path = tmp_path / "position.json"
    path.write_text(json.dumps(position_file(state)))
    done = run(str(path), "--all", "--json")
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    running = sorted(c.id for c in state.corporations if c.trains)
    assert [a["corporation"] for a in answers] == running
    for answer in answers:
        expected = solve(corporation_graph(state, answer["corporation"])).revenue
        assert answer["revenue"] == expected > 0
        assert sum(r["revenue"] for r in answer["routes"]) == expected
        assert answer["solve_ms"] >= 0


@pytest.mark.parametrize(
    ("position", "message"),
    [
        ({"phase": "9"}, "phase '9'"),
        (
            {"phase": "3", "tiles": [{"hex": "Z9", "tile": "8", "rotation": 0}]},
            "Z9 is not on the map",
        ),
        ({"phase": "3", "tiles": [{"hex": "J3", "tile": "99", "rotation": 0}]}, "no tile 99"),
        ({"phase": "3", "tiles": [{"hex": "J3", "tile": "57", "rotation": 0}]}, "cannot lie there"),
        ({"phase": "3", "tokens": {"XX": ["K8"]}}, "no corporation 'XX'"),
        ({"phase": "3", "trains": {"AR": ["7"]}}, "no such train '7'"),
    ],
)
def test_an_impossible_position_is_refused_with_its_reason(
    tmp_path: Path, position: dict[str, Any], message: str
) -> None:
    path = tmp_path / "position.json"
    path.write_text(json.dumps(position))
    done = run(str(path), "--all")
    assert done.returncode == 2
    assert message in done.stderr
