"""The cross-check's coverage table (tools/crosscheck/coverage.py): which rule areas a game
exercised, read from its moves, and which of the site's switches its course depended on."""

from __future__ import annotations

import pytest

from services.rules import board
from services.rules.board.title import SITE_PROFILE, SWITCHES
from services.rules.domain import events as ev
from tools.crosscheck.coverage import ROWS, as_text, exercised, table
from tools.selfplay import random_game
from tools.sitelog.deviations import deviations_used

pytestmark = pytest.mark.slow


def test_a_profile_name_turns_one_switch_off_or_on() -> None:
    title = board.load_title("1889")
    site = title.profile(SITE_PROFILE)
    switch = "route_step_skipped_when_no_route"
    off = title.profile(f"{SITE_PROFILE}-{switch}")
    assert getattr(site, switch) and not getattr(off, switch)
    assert all(getattr(off, s) == getattr(site, s) for s in SWITCHES if s != switch)
    assert off.turn_steps == site.turn_steps  # what is not a switch stays the profile's
    back = title.profile(f"{SITE_PROFILE}-{switch}+{switch}")
    assert all(getattr(back, s) == getattr(site, s) for s in SWITCHES)
    with pytest.raises(KeyError):
        title.profile(f"{SITE_PROFILE}-no_such_switch")


def test_a_rulebook_game_exercises_what_its_moves_show_and_the_departures_it_relied_on() -> None:
    batches, final = random_game(2, 3, "rulebook")
    found = exercised(batches)
    assert final.result is not None and final.result.reason == "bankrupt"
    assert "bankrupt_2p" in found and "bank_break" not in found and "beginner" not in found
    runs = [
        run for b in batches for e in b.events if isinstance(e, ev.TrainsRan) for run in e.routes
    ]
    assert ("d_trains" in found) == any(run.train == "D" for run in runs)
    relied_on = {f"switch_{d.switch}" for d in deviations_used(batches)}
    assert relied_on and relied_on <= found


def test_a_beginner_game_under_the_site_profile() -> None:
    batches, final = random_game(4, 2, SITE_PROFILE, ("heuristic",) * 4, beginner_game=True)
    found = exercised(batches)
    assert "beginner" in found
    assert final.result is not None
    assert ("bank_break" in found) == (final.result.reason == "bank")
    # Its privates have no abilities there: none is used.
    assert not {"ability_MF", "ability_DR"} & found
    switches = {key for key in found if key.startswith("switch_")}
    assert switches <= {f"switch_{s}" for s in SWITCHES}
    # Its set-up is the site's: the deal and the extra tiles, which the rulebook's differ from.
    assert {"switch_beginner_deal_as_site", "switch_beginner_tiles_as_site"} <= switches


def test_the_table_counts_each_row_over_the_games() -> None:
    rows = table([{"d_trains", "beginner"}, {"d_trains"}, set()])
    counts = {key: count for key, _, count in rows}
    assert [key for key, _, _ in rows] == [key for key, _ in ROWS]
    assert counts["d_trains"] == 2 and counts["beginner"] == 1 and counts["bank_break"] == 0
    text = as_text(rows, 3)
    assert text.splitlines()[0] == "coverage over 3 games"
    assert any(
        line.startswith("D trains running") and line.endswith(" 2") for line in text.splitlines()
    )
