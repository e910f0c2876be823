"""The shared real games replayed through the gateway against the real processes, as
`shikoku import` does: every action accepted, the site's final scores and end reason; and
`shikoku import` itself, on the rules in this process and on a system of its own."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def _comparable(state: dict[str, Any]) -> dict[str, Any]:
    """The figures both formats hold, lists the engines order differently sorted."""
    kept: dict[str, Any] = {
        k: state[k] for k in ("round", "phase", "bank", "players", "corps", "pool")
    }
    for player in kept["players"].values():
        player["companies"] = sorted(player["companies"])
    for corporation in kept["corps"].values():
        corporation["companies"] = sorted(corporation["companies"])
        corporation["trains"] = sorted(corporation["trains"])
    return kept


def test_an_in_process_import_needs_no_gateway() -> None:
    """`--in-process` plays on the rules in this process: with nothing listening at the
    gateway address it names, the game still replays to the site's scores."""
    game = load(SITE_GAMES / "314.json")
    with socket.socket() as unused:  # bound, never listening: a connection there is refused
        unused.bind(("127.0.0.1", 0))
        nobody = f"127.0.0.1:{unused.getsockname()[1]}"
        command = ["import", str(SITE_GAMES / "314.json"), "--in-process", "--json"]
        done = subprocess.run(
            [SHIKOKU, *command, "--gateway", nobody],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads(done.stdout)
    assert document == {
        "game_id": game.id,
        "players": game.result,
        "end_reason": game.end_reason,
        "actions": len(effective_actions(game.actions)),
    }


@pytest.mark.parametrize("where", ["--in-process", "--own-system"])
def test_import_writes_our_state_after_every_action_in_the_sites_format(
    tmp_path: Path, where: str
) -> None:
    """`shikoku import --states` as a user runs it, on the rules in this process and through
    a system of its own: every line equals the site engine's state for that action, but where
    docs/rules-notes.md says why (action 22: our engine is already past a step the site waits
    on, so we equal its next state). The import plays under the 18xx.games profile, so the
    bankrupt president's cash (8.7.5) goes to the bank as there."""
    states = tmp_path / "314.ours.jsonl"
    done = subprocess.run(
        [SHIKOKU, "import", str(SITE_GAMES / "314.json"), where, "--states", str(states)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    ours = [json.loads(line) for line in states.read_text().splitlines()]
    site_lines = (SITE_GAMES / "314.states.jsonl").read_text().splitlines()
    site = [json.loads(line) for line in site_lines]
    assert [s["id"] for s in ours] == [s["id"] for s in site]
    differing = [
        o["id"] for o, s in zip(ours, site, strict=True) if _comparable(o) != _comparable(s)
    ]
    assert differing == [22]
    assert _comparable(ours[22]) == _comparable(site[23])
