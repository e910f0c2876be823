"""Our engine and exporter held to the 18xx.games site's engine, without Ruby: bot games that
`make crosscheck-record` played here, exported, and replayed on the site's engine
(tests/crosscheck/recorded/, docs/crosscheck.md).

For each game: the recording is whole (the site's states run to the game's end, or to the
action it refused, as its manifest says); our state after every action the site took equals
the site's, but for the named allowances (tools/crosscheck/allowances.py), up to where the
recording says we stopped agreeing (so that both a regression and progress fail: progress
asks for `make crosscheck-record`); and the game imported again exports as it was recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernel.rejection import Rejected
from services.rules.domain.decide import decide
from services.rules.domain.evolve import fold
from tools.crosscheck import coverage, probes, recording
from tools.crosscheck.allowances import seats_in_play_order
from tools.crosscheck.states import check_states
from tools.sitelog.export_format import END_REASONS, parse
from tools.sitelog.exporter import Batch, export
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import replay

pytestmark = pytest.mark.slow  # forty whole games, state by state

RECORDED = Path(__file__).with_name("recorded")
GAMES = recording.read(RECORDED)
RERECORD = "our engine now agrees with the site further than recorded: run make crosscheck-record"


def name(game: recording.Recorded) -> str:
    site = "accepted" if game.site.accepted else f"refused@{game.site.refused_action}"
    ours = "" if game.first_disagreement is None else f"-ours-differ@{game.first_disagreement}"
    return f"{game.plan.name}-{site}{ours}"


def states_of(game: recording.Recorded) -> list[dict[str, Any]]:
    return [json.loads(line) for line in game.played.states_text.splitlines()]


def test_the_recorded_set_is_the_fixed_one() -> None:
    plans = [game.plan for game in GAMES]
    assert plans == recording.recorded_plans()
    assert {p.players for p in plans} == {2, 3, 4, 5, 6}
    assert {p.profile for p in plans} == {"18xx.games", "rulebook"}
    size = sum(f.stat().st_size for f in RECORDED.iterdir())
    assert size < 8_000_000


def test_every_game_under_the_sites_profile_is_accepted_raw_with_equal_states() -> None:
    site_profile = [game for game in GAMES if game.plan.profile == "18xx.games"]
    assert site_profile
    assert [g.plan.name for g in site_profile if not g.site.accepted] == []
    assert [g.plan.name for g in site_profile if g.first_disagreement is not None] == []


def test_the_recorded_set_exercises_the_rows_of_the_coverage_table() -> None:
    covered = coverage.table(_exercised(game) for game in GAMES)
    assert [key for key, _, count in covered if count == 0] == []


def _exercised(game: recording.Recorded) -> set[str]:
    tried = {f"switch_{probe.switch}" for probe in game.probes if probe.refused}
    return coverage.exercised(_replayed(game)) | tried


def _replayed(game: recording.Recorded) -> list[Batch]:
    exported = parse(json.loads(game.played.export_text))
    table = InProcessTable(exported)
    replay(exported, table)
    return table.batches


@pytest.mark.parametrize("game", GAMES, ids=name)
def test_the_probes_are_where_the_game_meets_the_switches_and_the_site_refused_them(
    game: recording.Recorded,
) -> None:
    batches = _replayed(game)
    found = probes.find(batches)
    assert [(p.switch, p.move) for p in found] == [(p.switch, p.move) for p in game.probes]
    for probe in found:  # refused by ours under the game's profile, taken without the switch
        with pytest.raises(Rejected):
            decide(fold(e for b in batches[: probe.move] for e in b.events), probe.command)
        assert probes.probe_batches(batches, probe) is not None
    assert [p.switch for p in game.probes if not p.refused] == []


@pytest.mark.parametrize("game", GAMES, ids=name)
def test_the_recording_is_whole_and_as_its_manifest_says(game: recording.Recorded) -> None:
    document = json.loads(game.played.export_text)
    states = states_of(game)
    ids = [a["id"] for a in document["actions"]]
    assert [s["id"] for s in states] == [0, *ids[: game.site.actions]]
    if game.site.accepted:
        assert game.site.actions == len(ids)
        assert states[-1]["finished"] and game.site.finished
    else:
        refused = ids[game.site.actions]
        assert game.site.refused_action == refused
        assert game.site.refused == document["actions"][game.site.actions]
        assert game.site.exception


@pytest.mark.parametrize("game", GAMES, ids=name)
def test_our_states_are_the_sites_and_the_game_exports_as_recorded(
    game: recording.Recorded,
) -> None:
    document = json.loads(game.played.export_text)
    exported = parse(document)
    table = InProcessTable(exported)
    check = check_states(exported, states_of(game), table)
    found = check.first_disagreement
    if game.first_disagreement is None:
        assert found is None, (check.first, check.outcome.divergence)
    else:
        assert found is not None and found >= game.first_disagreement, (
            "our state stopped agreeing with the site's earlier than recorded",
            check.first,
            check.outcome.divergence,
        )
        assert found == game.first_disagreement, RERECORD
    if game.site.accepted and found is None:  # the same final result as the site's
        assert check.outcome.matches(exported)
        assert game.site.result == exported.result
        assert END_REASONS.get(game.site.end_reason) == exported.end_reason

    again = seats_in_play_order(export(exported.id, table.batches))
    recorded = seats_in_play_order(document)
    if check.outcome.divergence is None:
        assert again == recorded
    else:  # our import stopped at an action: what it took exports as the recording began
        taken = again["actions"][: check.outcome.actions]
        assert taken == recorded["actions"][: len(taken)]
