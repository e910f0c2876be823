"""The shared real games replayed through the gateway against the real processes, as
`shikoku import` does: every action accepted, the site's final scores and end reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from shikoku_sdk import Client as SdkClient
from tests.e2e.api import System
from tests.shared import SITE_GAMES, site_game_files
from tools.sitelog.export_format import SiteGame, effective_actions, load
from tools.sitelog.gateway_table import GatewayTable
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import replay

pytestmark = pytest.mark.e2e
SHIKOKU = str(Path(sys.executable).parent / "shikoku")


@pytest.mark.parametrize("path", site_game_files(), ids=lambda p: p.stem)
def test_shared_game_replays_through_the_gateway(system: System, path: Path) -> None:
    game = load(path)
    with SdkClient(system.gateway, api_key=system.api_key) as client:
        outcome = replay(game, GatewayTable(game, client))
    assert outcome.divergence is None, outcome.divergence
    assert outcome.actions == len(effective_actions(game.actions))
    assert (outcome.net_worths, outcome.end_reason) == (game.result, game.end_reason)


def test_a_replayed_game_exports_through_the_gateway(system: System, tmp_path: Path) -> None:
    game = load(SITE_GAMES / "314.json")
    with SdkClient(system.gateway, api_key=system.api_key) as client:
        table = GatewayTable(game, client)
        assert replay(game, table).matches(game)
    out = tmp_path / "exported.json"
    done = subprocess.run(
        [
            SHIKOKU,
            "export",
            table.game_id,
            "--gateway",
            system.gateway,
            "-o",
            str(out),
            "--api-key",
            system.api_key,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    exported = load(out)
    assert exported.result == {str(seat): worth for seat, worth in _seats(game).items()}
    assert replay(exported, InProcessTable(exported)).matches(exported)


def _seats(game: SiteGame) -> dict[int, int]:
    """The site's results by our seat numbers (seats follow the site's player order)."""
    return {seat: game.result[p.id] for seat, p in enumerate(game.players, start=1)}
