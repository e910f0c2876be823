"""The site's beginner game beyond its deal (14.1; the site's `G1889::Game#setup`), under both
profiles: under `18xx.games` the privates have no abilities (`beginner_privates_without_abilities`)
and pay the site's beginner revenues (`beginner_private_revenues_as_site`); under the rulebook
they keep their abilities and face revenues. In either profile no private's icon restricts its
hex in the beginner game, as the site, which takes the blockers and icons off, also plays it."""

from __future__ import annotations

import dataclasses

import pytest

from kernel.rejection import Rejected
from services.rules.domain.commands import ExchangePrivate, LayPrivateTile
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.game_end import net_worth, private_value
from services.rules.domain.legal import ExchangeOption, LayTileOption, PrivateTileOption
from services.rules.domain.operating_round import private_revenue
from services.rules.domain.state import GameState
from tests.rules.builders import after_auction, floated, operating, with_tiles
from tests.rules.helpers import new_game

RULEBOOK, SITE = "rulebook", "18xx.games"
FACE_REVENUES = {"TR": 5, "MF": 5, "ER": 10, "SMR": 15, "DR": 15, "SIR": 20}
SITE_REVENUES = {"TR": 5, "MF": 15, "ER": 15, "SMR": 20, "DR": 20, "SIR": 25}


def owner(state: GameState, company: str) -> int:
    return state.privates_owned[company]


def six_player_game(profile: str, beginner: bool = True) -> GameState:
    """Six players, so that every private the site deals is in the game (with the MF and DR);
    outside the beginner game, each bought the topmost private in turn."""
    if beginner:
        return new_game(6, seed=12345, beginner=True, rules_profile=profile)
    return dataclasses.replace(after_auction(6), rules_profile=profile)


def with_ir_started(state: GameState) -> GameState:
    """IR floated, its president neither the DR's nor the MF's owner: the DR may be exchanged
    for one of its initial offering shares."""
    others = [
        p.seat for p in state.players if p.seat not in (owner(state, "DR"), owner(state, "MF"))
    ]
    return floated(state, "IR", {others[0]: 6}, (1, 3), cash=500)


def abilities(state: GameState) -> list[object]:
    return [o for o in legal_actions(state) if isinstance(o, ExchangeOption | PrivateTileOption)]


def test_rulebook_beginner_privates_keep_their_abilities() -> None:
    state = with_ir_started(six_player_game(RULEBOOK))
    listed = abilities(state)
    assert ExchangeOption("DR", "IR", owner(state, "DR")) in listed
    assert PrivateTileOption("MF", "G10", "437", 0, owner(state, "MF")) in listed
    exchanged = decide(state, ExchangePrivate(owner(state, "DR"), "DR"))
    assert exchanged and exchanged[0].corporation == "IR"  # type: ignore[attr-defined]


def test_site_beginner_privates_have_no_abilities() -> None:
    state = with_ir_started(six_player_game(SITE))
    assert abilities(state) == []
    for command in (
        ExchangePrivate(owner(state, "DR"), "DR"),
        LayPrivateTile(owner(state, "MF"), "MF", "G10", "437", 0),
    ):
        with pytest.raises(Rejected) as refused:
            decide(state, command)
        assert refused.value.reason == "ABILITY_NOT_AVAILABLE"


def test_site_privates_keep_their_abilities_outside_the_beginner_game() -> None:
    state = with_ir_started(six_player_game(SITE, beginner=False))
    assert not state.beginner_game
    assert ExchangeOption("DR", "IR", owner(state, "DR")) in abilities(state)


@pytest.mark.parametrize(
    ("profile", "beginner", "revenues"),
    [
        (RULEBOOK, True, FACE_REVENUES),
        (SITE, True, SITE_REVENUES),
        (SITE, False, FACE_REVENUES),
        (RULEBOOK, False, FACE_REVENUES),
    ],
)
def test_private_revenues(profile: str, beginner: bool, revenues: dict[str, int]) -> None:
    state = six_player_game(profile, beginner)
    paid = {p.company: (p.seat, p.amount) for p in private_revenue(state) if p.company in revenues}
    assert paid == {c: (owner(state, c), revenues[c]) for c in revenues}


def uwajima_reaching_ohzu(profile: str, beginner: bool) -> GameState:
    """UR (its president not the ER's owner) at its track step in phase 3, its track from
    Uwajima (B7) through B5 and Yawatahama reaching Ohzu (C4), the ER a player's."""
    state = (
        new_game(3, seed=0, beginner=True, rules_profile=profile)
        if beginner
        else dataclasses.replace(after_auction(3), rules_profile=profile)
    )
    president = next(p.seat for p in state.players if p.seat != owner(state, "ER"))
    state = dataclasses.replace(state, phase="3")
    state = floated(state, "UR", {president: 6}, (1, 3), cash=500, trains=("2",))
    state = with_tiles(state, ("B5", "9", 0))
    return operating(state, "UR")


@pytest.mark.parametrize(
    ("profile", "beginner", "ohzu_open"),
    [(RULEBOOK, True, True), (SITE, True, True), (RULEBOOK, False, False), (SITE, False, False)],
)
def test_a_players_ehime_railroad_blocks_ohzu_only_outside_the_beginner_game(
    profile: str, beginner: bool, ohzu_open: bool
) -> None:
    state = uwajima_reaching_ohzu(profile, beginner)
    assert "ER" in state.privates_owned
    hexes = {o.hex for o in legal_actions(state) if isinstance(o, LayTileOption)}
    assert ("C4" in hexes) is ohzu_open


@pytest.mark.parametrize(("profile", "value"), [("18xx.games", 90), ("rulebook", 80)])
def test_a_beginner_private_is_worth_what_it_is_dealt_for(profile: str, value: int) -> None:
    """The site deals the Pilgrimage Railway for ¥90 in its beginner game and counts it so in
    a net worth (`neuter_company` sets its value); the rulebook, at its face value ¥80."""
    state = new_game(3, beginner=True, rules_profile=profile)
    holder = next(p for p in state.players if "SIR" in p.privates)
    assert (
        net_worth(state, holder)
        - holder.cash
        - sum(private_value(state, c) for c in holder.privates if c != "SIR")
        == value
    )
