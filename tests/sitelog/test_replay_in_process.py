"""The shared real games replayed through the domain code: every action accepted, the final
net worths and end reason equal to the site's, and the state after each action of game 314
equal to the site engine's recorded state."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.shared import SITE_GAMES, site_game_files
from tools.sitelog.compare import differences
from tools.sitelog.export_format import Action, SiteGame, effective_actions, load
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import replay, step_through


@pytest.mark.parametrize("path", site_game_files(), ids=lambda p: p.stem)
def test_shared_game_replays_to_the_sites_final_scores(path: Path) -> None:
    game = load(path)
    outcome = replay(game, InProcessTable(game))
    assert outcome.divergence is None, outcome.divergence
    assert outcome.actions == len(effective_actions(game.actions))
    assert outcome.end_reason == game.end_reason
    assert outcome.net_worths == game.result


# Differences the site's recorded states are known to have from ours, by action (none: the
# site's departures from the rulebook are the switches of the 18xx.games profile we import
# under, docs/rules-notes.md).
KNOWN: dict[int, set[str]] = {}


def test_game_314_matches_the_site_state_after_every_action() -> None:
    game = load(SITE_GAMES / "314.json")
    lines = (SITE_GAMES / "314.states.jsonl").read_text().splitlines()
    states = {state["id"]: state for state in map(json.loads, lines)}
    table = InProcessTable(game)
    compared = 0
    for action in step_through(game, table):
        found = differences(game, states[action["id"]], table.view())
        if found:
            # Our engine moves past a step with nothing to do where the site waits for a
            # pass: then it is the site's next state that we already are in.
            ahead = states.get(action["id"] + 1)
            if ahead is not None and not differences(game, ahead, table.view()):
                continue
            what = {d.split(":")[0] for d in found}
            assert what <= KNOWN.get(action["id"], set()), (action, found)
        compared += 1
    assert compared > 400


def with_blocking_buy_company_passes(game: SiteGame) -> tuple[SiteGame, int]:
    """`game` as the site's engine logs it once its operating rounds end each corporation's turn
    with a blocking "buy a private" step: one more pass of the corporation after its last action
    whenever another corporation acts next. Returns the game and how many passes were added."""
    actions: list[Action] = []
    added = 0
    played = [
        {k: v for k, v in action.items() if k != "auto_actions"}
        for action in effective_actions(game.actions)
    ]
    for action, following in zip(played, [*played[1:], None], strict=True):
        actions.append(action)
        ends_turn = (  # another corporation, or a player in the next round, acts next
            action.get("entity_type") == "corporation"
            and following is not None
            and following.get("entity_type") != "company"
            and following.get("entity") != action.get("entity")
        )
        if ends_turn:
            pass_ = {"type": "pass", "entity": action["entity"], "entity_type": "corporation"}
            actions.append(pass_)
            added += 1
    numbered = tuple({**a, "id": n} for n, a in enumerate(actions, start=1))
    return dataclasses.replace(game, actions=numbered), added


def test_the_sites_extra_pass_after_a_corporations_turn_is_absorbed() -> None:
    """Rulebook 8.2/8.8 let a corporation buy a private at any point of its turn, so our turn
    ends without the site's blocking step: its extra pass belongs to no step of ours."""
    game, added = with_blocking_buy_company_passes(load(SITE_GAMES / "314.json"))
    assert added > 40
    outcome = replay(game, InProcessTable(game))
    assert outcome.divergence is None, outcome.divergence
    assert (outcome.net_worths, outcome.end_reason) == (game.result, game.end_reason)
