"""`shikoku selfplay --bots`: strategies by seat (or one for all), refused names, and the same
game for the same seed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools.selfplay import parse_bots

SHIKOKU = str(Path(sys.executable).parent / "shikoku")


def selfplay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SHIKOKU, "selfplay", *args], capture_output=True, text=True, timeout=300)


def test_one_name_plays_every_seat_and_a_list_goes_in_seat_order() -> None:
    assert parse_bots("heuristic", 3) == ("heuristic",) * 3
    assert parse_bots("heuristic,random,random,random", 4) == (
        "heuristic",
        "random",
        "random",
        "random",
    )


@pytest.mark.parametrize(
    ("listed", "says"),
    [("clever", "unknown bot 'clever'"), ("random,heuristic", "2 bots for 3 players")],
)
def test_a_wrong_list_is_refused(listed: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_bots(listed, 3)


def test_an_unknown_bot_exits_2_with_one_line(tmp_path: Path) -> None:
    done = selfplay(
        "--players", "3", "--seed", "1", "--export", str(tmp_path / "g.json"), "--bots", "clever"
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "unknown bot 'clever'" in done.stderr
    assert not (tmp_path / "g.json").exists()


def test_a_seeded_heuristic_game_is_the_same_game(tmp_path: Path) -> None:
    bots = "heuristic,random,random,random"
    runs = []
    for name in ("first", "second"):
        out = tmp_path / f"{name}.json"
        done = selfplay(
            "--players", "4", "--seed", "3", "--export", str(out), "--json", "--bots", bots
        )
        assert done.returncode == 0, done.stderr
        runs.append((json.loads(done.stdout), out.read_text()))
    (summary, export), (again, export_again) = runs
    assert summary == again and export == export_again
    assert summary["bots"] == bots.split(",")
    assert set(summary["players"]) == {"bot 1", "bot 2", "bot 3", "bot 4"}
    assert summary["end_reason"] in {"bankrupt", "bank"}


def test_the_beginner_variant_deals_the_privates_and_exports_the_option(tmp_path: Path) -> None:
    out = tmp_path / "beginner.json"
    done = selfplay(
        "--players", "4", "--seed", "2", "--export", str(out), "--json", "--bots", "heuristic",
        "--variant", "beginner",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary, document = json.loads(done.stdout), json.loads(out.read_text())
    assert summary["beginner_game"] is True
    assert document["settings"]["optional_rules"] == ["beginner_game"]
    kinds = {action["type"] for action in document["actions"]}
    assert not kinds & {"bid", "buy_company"}  # dealt, never auctioned
