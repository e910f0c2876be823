"""The comparison of our state with the site's covers every field of the site's per-action
state, and the allowance for a step the site waits on is taken only where the site's engine
offers nothing but a pass. On a recorded pair of states (the site's, as its engine wrote it,
and ours, from replaying the same export here), without Ruby."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tools.crosscheck import recording
from tools.crosscheck.allowances import Seen, allowed
from tools.crosscheck.lines import OurLines, line_differences
from tools.sitelog.export_format import SiteGame, effective_actions, parse
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import replay_viewed

RECORDED = Path(__file__).with_name("recorded")
GAME = "3p-seed7-hrr"

Line = dict[str, Any]


def _pairs() -> tuple[SiteGame, dict[int, Line], dict[int, Line], dict[int, Any]]:
    """The game, the site's lines and ours, by action id, and the export's actions."""
    game = next(g for g in recording.read(RECORDED) if g.plan.name == GAME)
    exported = parse(json.loads(game.played.export_text))
    site = {int(s["id"]): s for s in map(json.loads, game.played.states_text.splitlines())}
    actions = {int(a.get("id", 0)): a for a in effective_actions(exported.actions)}
    lines = OurLines(exported)
    ours: dict[int, Line] = {}

    def seen(action_id: int, state: dict[str, Any], acting: list[int]) -> None:
        ours[action_id] = lines.line(action_id, state, acting, actions.get(action_id))

    replay_viewed(exported, InProcessTable(exported), seen)
    return exported, site, ours, actions


GAME_DOC, SITE, OURS, ACTIONS = _pairs()


def _operating_pair() -> int:
    """An action after which a corporation with trains operates and both states agree."""
    return next(
        i
        for i, s in SITE.items()
        if s["round"] == "Operating Round"
        and any(c["trains"] for c in s["corps"].values())
        and i in OURS
        and not line_differences(s, OURS[i])
    )


AT = _operating_pair()
PLAYER = next(iter(SITE[AT]["players"]))
CORPORATION = next(c for c, v in SITE[AT]["corps"].items() if v["trains"])


def _set(*path: str, to: Callable[[Any], Any]) -> Callable[[Line], None]:
    def change(line: Line) -> None:
        holder = line
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = to(holder.get(path[-1]))

    return change


def _other_player(value: Any) -> str:
    return next(str(p) for p in SITE[AT]["player_order"] if p != value)


#: Each field, a change of it, and the one difference the comparison must report.
CHANGES: list[tuple[str, Callable[[Line], None]]] = [
    ("round", _set("round", to=lambda _: "Stock Round")),
    ("turn", _set("turn", to=lambda v: v + 1)),
    ("round number", _set("round_num", to=lambda v: v + 1)),
    ("phase", _set("phase", to=lambda v: v + "x")),
    ("finished", _set("finished", to=lambda v: not v)),
    ("bank", _set("bank", to=lambda v: v + 10)),
    ("bank", _set("bank", to=lambda _: -25)),  # a broken bank is compared too
    ("next to act", _set("next", to=_other_player)),
    ("priority deal", _set("priority", to=_other_player)),
    ("player order", _set("player_order", to=lambda v: list(reversed(v)))),
    (f"player {PLAYER} cash", _set("players", PLAYER, "cash", to=lambda v: v + 1)),
    (f"player {PLAYER} shares", _set("players", PLAYER, "shares", to=lambda v: {**v, "UR": 50})),
    (f"player {PLAYER} privates", _set("players", PLAYER, "companies", to=lambda v: [*v, "XX"])),
    (f"{CORPORATION} cash", _set("corps", CORPORATION, "cash", to=lambda v: v + 1)),
    (f"{CORPORATION} price", _set("corps", CORPORATION, "price", to=lambda v: v + 5)),
    (f"{CORPORATION} trains", _set("corps", CORPORATION, "trains", to=lambda v: [*v, "6"])),
    (f"{CORPORATION} tokens", _set("corps", CORPORATION, "tokens", to=lambda v: v + 1)),
    (f"{CORPORATION} initial offering", _set("corps", CORPORATION, "ipo", to=lambda v: v - 10)),
    (f"{CORPORATION} floated", _set("corps", CORPORATION, "floated", to=lambda v: not v)),
    (f"{CORPORATION} privates", _set("corps", CORPORATION, "companies", to=lambda v: [*v, "XX"])),
    (
        f"{CORPORATION} open market",
        _set("pool", to=lambda v: {**v, CORPORATION: v.get(CORPORATION, 0) + 10}),
    ),
]


def test_the_recorded_pair_agrees_in_every_field() -> None:
    assert SITE[AT]["offers"], "the site's state says what it offers"
    assert line_differences(SITE[AT], OURS[AT]) == []


@pytest.mark.parametrize("side", ["site", "ours"])
@pytest.mark.parametrize(("field", "change"), CHANGES, ids=[f for f, _ in CHANGES])
def test_a_change_of_one_field_is_reported_as_that_field(
    field: str, change: Callable[[Line], None], side: str
) -> None:
    site, ours = copy.deepcopy(SITE[AT]), copy.deepcopy(OURS[AT])
    change(site if side == "site" else ours)
    found = line_differences(site, ours)
    assert [d.split(":", 1)[0] for d in found] == [field], found


def test_the_changes_cover_every_field_of_the_sites_state_but_its_offers() -> None:
    changed = set()
    for _, change in CHANGES:
        line = copy.deepcopy(SITE[AT])
        change(line)
        changed |= {key for key in line if line[key] != SITE[AT][key]}
    assert changed == SITE[AT].keys() - {"id", "type", "offers"}


def _waiting_pair(offers: list[str]) -> Seen:
    """Our state after action AT is the site's after the next action, and the site, after
    AT, offers `offers`."""
    following = AT + 1
    site = {AT: {**copy.deepcopy(OURS[AT]), "next": "someone", "offers": offers}}
    site[following] = copy.deepcopy(OURS[AT])
    found = line_differences(site[AT], OURS[AT])
    return Seen(GAME_DOC, ACTIONS, site, {AT: following}, AT, {}, OURS[AT], found)


def test_past_a_waiting_step_is_allowed_only_where_the_site_offers_nothing_but_a_pass() -> None:
    taken = allowed(_waiting_pair(["pass"]))
    assert taken is not None and taken.name == "past a step the site waits on"
    assert allowed(_waiting_pair(["buy_company", "pass"])) is None
    assert allowed(_waiting_pair(["lay_tile", "pass"])) is None
    assert allowed(_waiting_pair([])) is None


RULEBOOK_GAME = dataclasses.replace(GAME_DOC, rules_profile="rulebook")


def _ahead_of_the_sites_pass(game: SiteGame, by: str) -> Seen:
    """Our state after AT is the site's after the next action, a pass by `by`; the site, after
    AT, waits on KO and offers a train and a pass."""
    following = AT + 1
    site = {AT: {**copy.deepcopy(OURS[AT]), "next": "KO", "offers": ["buy_train", "pass"]}}
    site[following] = copy.deepcopy(OURS[AT])
    actions = {following: {"type": "pass", "entity": by, "entity_type": "corporation"}}
    found = line_differences(site[AT], OURS[AT])
    return Seen(game, actions, site, {AT: following}, AT, {}, OURS[AT], found)


def test_ahead_of_the_sites_cut_of_the_turn_is_allowed_in_a_rulebook_game_only() -> None:
    taken = allowed(_ahead_of_the_sites_pass(RULEBOOK_GAME, "KO"))
    assert taken is not None and taken.name.startswith("past a step of the site's cut")
    assert allowed(_ahead_of_the_sites_pass(GAME_DOC, "KO")) is None
    assert allowed(_ahead_of_the_sites_pass(RULEBOOK_GAME, "AR")) is None  # not whom it waits on


def _behind_a_skipped_step(game: SiteGame, step: str, found: list[str]) -> Seen:
    """Our KO waits at `step` after AT where the site's state differs by `found`; the next
    action is KO's."""
    following = AT + 1
    site = {AT: {**copy.deepcopy(OURS[AT]), "next": "KO"}, following: copy.deepcopy(OURS[AT])}
    ours = {"round": {"type": "operating_round", "operating": "KO", "step": step}}
    actions = {following: {"type": "buy_train", "entity": "KO", "entity_type": "corporation"}}
    return Seen(game, actions, site, {AT: following}, AT, ours, OURS[AT], found)


def test_behind_a_step_the_site_skips_is_allowed_in_a_rulebook_game_for_the_price_only() -> None:
    price = ["KO price: site 60, ours 65"]
    taken = allowed(_behind_a_skipped_step(RULEBOOK_GAME, "routes", price))
    assert taken is not None and taken.name == "behind a step the site skips (a rulebook game)"
    assert allowed(_behind_a_skipped_step(GAME_DOC, "routes", price)) is None
    assert allowed(_behind_a_skipped_step(RULEBOOK_GAME, "trains", price)) is None
    cash = [*price, "KO cash: site 10, ours 20"]
    assert allowed(_behind_a_skipped_step(RULEBOOK_GAME, "routes", cash)) is None
