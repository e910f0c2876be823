"""`shikoku selfplay`, run as a real process: a whole bot game, the same for the same seed,
exported in the site's format (that an export replays is tests/sitelog/test_round_trip.py's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tools.sitelog.export_format import load

SHIKOKU = str(Path(sys.executable).parent / "shikoku")


def selfplay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SHIKOKU, "selfplay", *args], capture_output=True, text=True, timeout=300)


def test_a_seeded_game_is_exported_and_summarised(tmp_path: Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    done = selfplay("--players", "3", "--seed", "7", "--export", str(first), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["profile"] == "18xx.games"
    assert set(summary["players"]) == {"bot 1", "bot 2", "bot 3"}
    assert summary["end_reason"] in {"bankrupt", "bank"}

    exported = load(first)
    assert summary["actions"] == len(exported.actions) > 100
    by_name = {p.id: p.name for p in exported.players}
    assert {by_name[i]: worth for i, worth in exported.result.items()} == summary["players"]

    again = selfplay("--players", "3", "--seed", "7", "--export", str(second), "--json")
    assert again.returncode == 0, again.stderr
    assert second.read_text() == first.read_text()


def test_the_rulebook_profile_and_a_plain_summary(tmp_path: Path) -> None:
    out = tmp_path / "game.json"
    done = selfplay("--players", "2", "--seed", "3", "--export", str(out), "--profile", "rulebook")
    assert done.returncode == 0, done.stderr
    assert "rulebook" in done.stdout and str(out) in done.stdout
    game = load(out)
    assert game.players and game.result and game.end_reason


def test_a_player_count_the_title_does_not_allow_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "game.json"
    done = selfplay("--players", "7", "--seed", "1", "--export", str(out))
    assert done.returncode == 2
    assert "shikoku selfplay:" in done.stderr
    assert not out.exists()
