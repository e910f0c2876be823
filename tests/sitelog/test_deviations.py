"""The export names the profile a game was played under and the site's departures from the
rulebook (docs/rules-notes.md, "Rules profiles") it relied on, with the first action where the
site will read the log otherwise."""

from __future__ import annotations

import pytest

from services.rules.board import load_title
from services.rules.board.title import SITE_PROFILE
from tools.selfplay import random_game
from tools.sitelog.export_format import parse
from tools.sitelog.exporter import export
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import replay


def test_a_game_under_the_sites_profile_relies_on_no_departure() -> None:
    batches, _ = random_game(3, 1, rules_profile=SITE_PROFILE)
    document = export("site-3-1", batches)
    assert document["rules_profile"] == SITE_PROFILE
    assert document["rules_deviations"] == []


def test_a_rulebook_game_names_the_bankrupt_cash_departure_where_it_shows() -> None:
    """Seed 1 ends in a bankruptcy, whose cash the rulebook gives the corporation and the site
    the bank. Its corporations also buy privates in token steps the site would have skipped,
    then pass them: a step skipped sooner that the game leaves unused is no departure."""
    batches, final = random_game(3, 1, rules_profile="rulebook")
    assert final.result is not None and final.result.reason == "bankrupt"
    document = export("rulebook-3-1", batches)
    bankrupt = next(a for a in document["actions"] if a["type"] == "bankrupt")
    assert document["rules_profile"] == "rulebook"
    assert document["rules_deviations"] == [
        {"switch": "bankrupt_cash_to_bank", "first_action": bankrupt["id"], "moves": 1}
    ]


def test_a_rulebook_closed_auction_of_three_names_the_bidding_order_departure() -> None:
    """Seed 9 (5 players): buying the DR opens a closed auction of three bidders, where the
    rulebook lets the player left of the highest bidder act first and the site the lowest."""
    batches, _ = random_game(5, 9, rules_profile="rulebook")
    document = export("rulebook-5-9", batches)
    first = {d["switch"]: d["first_action"] for d in document["rules_deviations"]}
    assert "closed_auction_lowest_bidder_acts" in first
    action = next(
        a for a in document["actions"] if a["id"] == first["closed_auction_lowest_bidder_acts"]
    )
    assert (action["type"], action["company"]) == ("bid", "DR")


@pytest.mark.parametrize(("players", "seed"), [(3, 1), (5, 9)])
def test_a_rulebook_game_reimports_under_the_rulebook(players: int, seed: int) -> None:
    batches, final = random_game(players, seed, rules_profile="rulebook")
    exported = parse(export(f"rulebook-{players}-{seed}", batches))
    assert exported.rules_profile == "rulebook"
    table = InProcessTable(exported)
    outcome = replay(exported, table)
    assert outcome.divergence is None, outcome.divergence
    assert table.state.rules_profile == "rulebook"
    name = {p.seat: p.name for p in final.players}
    again = {p.seat: p.name for p in table.state.players}
    assert final.result is not None and table.state.result is not None
    assert {name[s]: n for s, n in final.result.net_worths} == {
        again[s]: n for s, n in table.state.result.net_worths
    }


def test_a_profile_with_added_switches_is_the_base_with_those_on() -> None:
    title = load_title("1889")
    added = title.profile("rulebook+bankrupt_cash_to_bank")
    assert added.bankrupt_cash_to_bank
    assert not added.closed_auction_lowest_bidder_acts
    with pytest.raises(KeyError):
        title.profile("rulebook+no_such_switch")
