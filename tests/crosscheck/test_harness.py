"""The crosscheck harness's own pieces that need no Ruby: which games it plays, what it says
when the site's engine is missing, and how an export's seats are renumbered for comparing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools.crosscheck.allowances import seats_in_play_order
from tools.crosscheck.plans import plans

pytestmark = pytest.mark.io  # runs the harness as a process


def test_games_spread_over_the_player_counts_with_consecutive_seeds() -> None:
    chosen = plans(7, (2, 6), "18xx.games", 10)
    assert [(p.players, p.seed) for p in chosen] == [
        (2, 10),
        (3, 11),
        (4, 12),
        (5, 13),
        (6, 14),
        (2, 15),
        (3, 16),
    ]
    assert {p.name for p in chosen} >= {"2p-seed10", "6p-seed14"}


def test_a_missing_engine_is_named_with_what_to_set(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "SITE_ENGINE": str(tmp_path / "nowhere")}
    done = subprocess.run(
        [sys.executable, "-m", "tools.crosscheck", "--games", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 2
    assert "SITE_ENGINE" in done.stderr or "RUBY" in done.stderr


def test_seats_are_renumbered_in_play_order() -> None:
    document = {
        "players": [{"id": 3, "name": "bot 3"}, {"id": 1, "name": "bot 1"}],
        "actions": [
            {"type": "pass", "entity": 3, "entity_type": "player", "id": 1},
            {"type": "pass", "entity": "AR", "entity_type": "corporation", "id": 2},
        ],
        "result": {"3": 900, "1": 800},
    }
    renumbered = seats_in_play_order(document)
    assert renumbered["players"] == [{"id": 1, "name": "bot 3"}, {"id": 2, "name": "bot 1"}]
    assert [a["entity"] for a in renumbered["actions"]] == [1, "AR"]
    assert renumbered["result"] == {"1": 900, "2": 800}
