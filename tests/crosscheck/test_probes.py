"""Probes (tools/crosscheck/probes.py): where a game under the site's profile meets one of its
switches, the move the rulebook allows there that the switch refuses."""

from __future__ import annotations

import pytest

from kernel.rejection import Rejected
from services.rules.domain.commands import CreateGame
from services.rules.domain.decide import decide
from services.rules.domain.evolve import fold
from tools.crosscheck import probes
from tools.selfplay import random_game

UPGRADE = "upgrade_must_use_new_track_or_change_city"


def test_a_probe_is_refused_under_the_profile_and_taken_without_its_switch() -> None:
    batches, _ = random_game(4, 1, "18xx.games", ("heuristic",) * 4)
    found = probes.find(batches)
    assert UPGRADE in [probe.switch for probe in found]
    for probe in found:
        before = fold(e for batch in batches[: probe.move] for e in batch.events)
        with pytest.raises(Rejected):
            decide(before, probe.command)
        relaxed = probes.without(before, [probe.switch])
        assert tuple(decide(relaxed, probe.command)) == probe.events
        replayed = probes.probe_batches(batches, probe)
        assert replayed is not None
        assert replayed[-1].command == probe.command
        created = replayed[0].command
        assert isinstance(created, CreateGame)
        assert created.rules_profile == f"18xx.games-{probe.switch}"
        assert len(replayed) == probe.move + 1


def test_a_rulebook_game_has_no_probes() -> None:
    batches, _ = random_game(4, 8, "rulebook", ("random", "random", "random", "heuristic"))
    assert probes.find(batches) == []
