"""The shared real games replayed through the gateway against the real processes, as
`shikoku import` does: every action accepted, the site's final scores and end reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from shikoku.sitelog.export_format import effective_actions, load
from shikoku.sitelog.gateway_table import GatewayTable
from shikoku.sitelog.replay import replay
from tests.e2e.conftest import System
from tests.shared import site_game_files

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("path", site_game_files(), ids=lambda p: p.stem)
def test_shared_game_replays_through_the_gateway(system: System, path: Path) -> None:
    game = load(path)
    with system.channel() as channel:
        outcome = replay(game, GatewayTable(game, channel))
    assert outcome.divergence is None, outcome.divergence
    assert outcome.actions == len(effective_actions(game.actions))
    assert (outcome.net_worths, outcome.end_reason) == (game.result, game.end_reason)
