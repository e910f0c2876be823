"""Rulebook 8.2: a turn's steps are the rules profile's list (services/rules/domain/turn_steps.py),
and the operating round walks it: the rulebook's list, and the site's as differences of it."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from kernel.rejection import Rejected
from services.rules.board import load_title
from services.rules.domain import events as ev
from services.rules.domain.commands import BuyPrivateForCorporation, LayTile, Pass
from services.rules.domain.decide import legal_actions
from services.rules.domain.legal import CorporationPrivateOption, PassOption
from services.rules.domain.operating_round import next_event
from services.rules.domain.state import GameState, OperatingRound, Step
from services.rules.domain.turn_steps import RULEBOOK, EndsWhen, StepSpec, site_steps, turn_steps
from tests.rules.builders import after_auction, floated, operating, with_tiles
from tests.rules.helpers import play

A, B = 1, 2
RULEBOOK_PROFILE, SITE_PROFILE = "rulebook", "18xx.games"


def at_train_step(profile: str, cash: int) -> GameState:
    """SR, with a 3-train, operating at its train step in phase 3 with `cash`; players own privates
    it could buy (the TR from ¥10), the depot sells 3-trains at ¥180."""
    state = dataclasses.replace(after_auction(), rules_profile=profile)
    state = floated(state, "SR", {A: 6}, (2, 3), cash=cash, trains=("3",))
    depot = MappingProxyType({"2": 0, "3": 5, "4": 4, "5": 3, "6": 2, "D": 20})
    state = dataclasses.replace(state, depot=depot, phase="3")
    return operating(with_tiles(state, ("I2", "6", 4)), "SR", step=Step.TRAINS)


def step_of(state: GameState) -> Step:
    assert isinstance(state.round, OperatingRound)
    return state.round.step


def test_the_rulebook_list_is_8_2_in_order_and_the_sites_its_differences() -> None:
    assert [spec.step for spec in RULEBOOK.steps] == [
        Step.TRACK,
        Step.TOKEN,
        Step.ROUTES,
        Step.DIVIDEND,
        Step.TRAINS,
    ]
    site = turn_steps(load_title("1889").profile(SITE_PROFILE))
    assert site == site_steps(RULEBOOK).ending(Step.TOKEN, EndsWhen.NO_TOKEN).ending(
        Step.ROUTES, EndsWhen.NO_ROUTE
    )
    assert site.steps[-1] == StepSpec(
        Step.PRIVATES, (BuyPrivateForCorporation, Pass), (EndsWhen.NO_PRIVATE_FOR_SALE,)
    )
    assert EndsWhen.NO_TRAIN_TO_BUY in site.spec(Step.TRAINS).ends_when
    assert turn_steps(load_title("1889").profile(RULEBOOK_PROFILE)) == RULEBOOK


def test_under_the_rulebook_a_pass_at_the_train_step_ends_the_turn() -> None:
    state = at_train_step(RULEBOOK_PROFILE, cash=500)
    _, events = play(state, Pass(A))
    assert events[0] == ev.OperatingTurnEnded(corporation="SR")


def test_under_the_site_a_pass_at_the_train_step_leads_to_its_private_step() -> None:
    state = at_train_step(SITE_PROFILE, cash=500)
    state, events = play(state, Pass(A))
    assert events == [ev.StepSkipped(corporation="SR", step="trains")]
    assert step_of(state) is Step.PRIVATES
    options = legal_actions(state)
    assert any(isinstance(o, CorporationPrivateOption) for o in options)
    assert isinstance(options[-1], PassOption)
    with pytest.raises(Rejected) as refused:
        play(state, LayTile(A, "I1", "7", 0))
    assert refused.value.reason == "ACTION_NOT_ALLOWED"
    _, events = play(state, Pass(A))
    assert events[0] == ev.OperatingTurnEnded(corporation="SR")


def test_the_sites_train_step_ends_by_itself_where_no_train_can_be_bought() -> None:
    rulebook, site = at_train_step(RULEBOOK_PROFILE, 50), at_train_step(SITE_PROFILE, 50)
    assert next_event(rulebook) is None  # the rulebook waits: a private may still be bought
    assert next_event(site) == ev.StepSkipped(corporation="SR", step="trains")


def test_the_sites_private_step_ends_the_turn_by_itself_with_nothing_for_sale() -> None:
    state = at_train_step(SITE_PROFILE, cash=500)
    state, _ = play(state, Pass(A))
    nothing_for_sale = dataclasses.replace(state, privates_owned=MappingProxyType({}))
    assert next_event(nothing_for_sale) == ev.OperatingTurnEnded(corporation="SR")
