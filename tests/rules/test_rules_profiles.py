"""Rules profiles: each switch of the 18xx.games profile, shown on a position built here under
both profiles (rulebook: our default; 18xx.games: as the site's engine plays it). The switches
are listed in docs/rules-notes.md, "Rules profiles"."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

import pytest

from kernel.rejection import Rejected
from services.rules import board
from services.rules.board import load_title
from services.rules.board.title import SWITCHES
from services.rules.domain import events as ev
from services.rules.domain.commands import (
    BuyPrivate,
    BuyPrivateForCorporation,
    BuyTrain,
    DeclareBankruptcy,
    LayPrivateTile,
    LayTile,
    Pass,
    PlaceBid,
    PlaceToken,
    SellShares,
)
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.evolve import fold
from services.rules.domain.legal import (
    BidRange,
    LayTileOption,
    PlaceTokenOption,
    PrivateTileOption,
    RunRoutesOption,
    SellOption,
)
from services.rules.domain.state import GameState, Step, StockRound
from tests.rules.builders import (
    after_auction,
    floated,
    operating,
    with_corporation,
    with_player,
    with_tiles,
)
from tests.rules.helpers import new_game, play

A, B, C = 1, 2, 3
RULEBOOK, SITE = "rulebook", "18xx.games"


def under(state: GameState, profile: str) -> GameState:
    return dataclasses.replace(state, rules_profile=profile)


# ---- the profiles themselves --------------------------------------------------------------


def test_the_rulebook_profile_turns_no_switch_on_and_the_site_profile_all() -> None:
    profiles = load_title("1889").profiles
    assert set(profiles) == {RULEBOOK, SITE}
    assert not any(getattr(profiles[RULEBOOK], switch) for switch in SWITCHES)
    assert all(getattr(profiles[SITE], switch) for switch in SWITCHES)


# ---- 8.7.6: a bankrupt president's cash ---------------------------------------------------


def bankrupt_position(profile: str) -> GameState:
    """SR has ¥300 and must buy a ¥1100 Diesel; its president has ¥200 and can raise ¥180."""
    state = under(after_auction(), profile)
    state = floated(state, "SR", {A: 2, B: 3}, (2, 3), cash=300)
    state = floated(state, "IR", {A: 5}, (6, 3), par=65, open_market=0)
    state = with_player(state, A, cash=200, shares={"SR": 2, "IR": 5})
    depot = MappingProxyType({"2": 0, "3": 0, "4": 0, "5": 0, "6": 0, "D": -1})
    state = dataclasses.replace(state, depot=depot, phase="D")
    state = with_corporation(state, "SR", president=A)
    return operating(with_tiles(state, ("I2", "6", 4)), "SR", step=Step.TRAINS)


@pytest.mark.parametrize(("profile", "to_bank"), [(RULEBOOK, False), (SITE, True)])
def test_a_bankrupt_presidents_cash_goes_to_the_corporation_or_the_bank(
    profile: str, to_bank: bool
) -> None:
    state = bankrupt_position(profile)
    bank = state.bank
    state, events = play(state, DeclareBankruptcy(A))
    cash = 200 + 3 * 60  # three IR sold at ¥60 (the president's certificate stays)
    assert ev.PlayerBankrupt(A, "SR", cash, to_bank=to_bank) in events
    assert state.player(A).cash == 0
    assert state.corporation("SR").cash == 300 + (0 if to_bank else cash)
    assert state.bank == bank - 3 * 60 + (cash if to_bank else 0)


# ---- 5.2: who acts in a closed auction of three or more bidders ---------------------------


def closed_auction_for_er(profile: str) -> GameState:
    """ER reaches the top with bids of seat 1 (¥45), seat 3 (¥50) and seat 2 (¥55)."""
    state = new_game(3, rules_profile=profile)
    state, _ = play(
        state,
        PlaceBid(A, "ER", 45),
        Pass(B),
        PlaceBid(C, "ER", 50),
        Pass(A),
        PlaceBid(B, "ER", 55),
        BuyPrivate(C, "TR"),
        BuyPrivate(A, "MF"),
    )
    assert state.round is not None and state.round.closed is not None  # type: ignore[union-attr]
    return state


def test_rulebook_closed_auction_starts_left_of_the_highest_bidder_and_goes_clockwise() -> None:
    state = closed_auction_for_er(RULEBOOK)
    assert state.acting_seats == (C,)  # left of seat 2, the highest
    state, _ = play(state, PlaceBid(C, "ER", 60))
    assert state.acting_seats == (A,)
    state, _ = play(state, Pass(A))
    assert state.acting_seats == (B,)


def test_site_closed_auction_always_lets_the_lowest_bidder_act() -> None:
    state = closed_auction_for_er(SITE)
    assert state.acting_seats == (A,)  # ¥45, the lowest
    state, _ = play(state, PlaceBid(A, "ER", 60))
    assert state.acting_seats == (C,)  # ¥50
    state, _ = play(state, Pass(C))
    assert state.acting_seats == (B,)  # ¥55 against seat 1's ¥60
    state, _ = play(state, PlaceBid(B, "ER", 65))
    assert state.acting_seats == (A,)
    state, events = play(state, Pass(A))
    assert ev.PrivateSold(seat=B, company="ER", price=65) in events


# ---- 8.7.6: selling the same corporation's shares again in a forced purchase --------------


def forced_purchase(profile: str) -> GameState:
    """SR, without cash, must buy a ¥80 2-train; its president (seat 1, no cash) holds 3 IR at
    ¥60 and 2 KO at ¥55 (others preside over both)."""
    state = with_tiles(under(after_auction(), profile), ("I2", "6", 4))
    state = floated(state, "SR", {A: 2, B: 2}, (2, 3), cash=0)
    state = floated(state, "IR", {B: 5, A: 3}, (6, 3), par=65)
    state = floated(state, "KO", {C: 4, A: 2}, (7, 3), par=65)
    state = with_player(state, A, cash=0)
    return operating(state, "SR", step=Step.TRAINS)


def sales(state: GameState) -> list[SellOption]:
    return [o for o in legal_actions(state) if isinstance(o, SellOption)]


@pytest.mark.parametrize("profile", [RULEBOOK, SITE])
def test_a_forced_purchase_may_sell_two_corporations_shares(profile: str) -> None:
    state = forced_purchase(profile)
    assert sales(state) == [SellOption("IR", 2, 60, A), SellOption("KO", 2, 55, A)]


def test_rulebook_forced_purchase_may_sell_a_corporations_shares_again() -> None:
    state, _ = play(forced_purchase(RULEBOOK), SellShares(A, "IR", 1))  # ¥60 of ¥80
    assert sales(state) == [SellOption("IR", 1, 55, A), SellOption("KO", 1, 55, A)]
    state, _ = play(state, SellShares(A, "IR", 1), BuyTrain(A, "2", "depot", 80))
    assert state.corporation("SR").trains == ("2",)
    assert state.player(A).shares_of("IR") == 1


def test_site_forced_purchase_sells_each_corporation_once() -> None:
    state, _ = play(forced_purchase(SITE), SellShares(A, "IR", 1))
    assert sales(state) == [SellOption("KO", 1, 55, A)]
    with pytest.raises(Rejected) as refused:
        decide(state, SellShares(A, "IR", 1))
    assert refused.value.reason == "CANNOT_SELL"
    state, _ = play(state, SellShares(A, "KO", 1))
    assert state.round.sold_for_train == {"IR", "KO"}  # type: ignore[union-attr]
    # The next corporation's turn starts afresh.
    after = fold([ev.CorporationOperates("KO")], state)
    assert after.round.sold_for_train == frozenset()  # type: ignore[union-attr]
    state, _ = play(state, BuyTrain(A, "2", "depot", 80))
    assert state.corporation("SR").trains == ("2",)


# ---- 15 B: when the Mitsubishi Ferry's port tile may go down ------------------------------

MF_OWNER = B  # after_auction(3) deals the MF to seat 2
PORT = LayPrivateTile(MF_OWNER, "MF", "G10", "437", 0)


def ferry_position(profile: str, operating_corporation: str, **round_changes: object) -> GameState:
    """KO (seat 1 presides) and AR (seat 2, the MF's owner) floated, in phase 3, one of them
    operating."""
    state = dataclasses.replace(under(after_auction(), profile), phase="3")
    state = floated(state, "KO", {A: 6}, (1, 3), cash=500, trains=("2",))
    state = floated(state, "AR", {MF_OWNER: 6}, (1, 4), cash=500, trains=("2",))
    return operating(state, operating_corporation, **round_changes)


def may_lay_port(state: GameState) -> bool:
    listed = PrivateTileOption("MF", "G10", "437", 0, MF_OWNER) in legal_actions(state)
    try:
        decide(state, PORT)
    except Rejected as refused:
        assert refused.reason == "ABILITY_NOT_AVAILABLE"
        assert not listed
        return False
    assert listed
    return True


@pytest.mark.parametrize(("profile", "allowed"), [(RULEBOOK, False), (SITE, True)])
def test_port_tile_at_the_start_of_another_players_corporations_turn(
    profile: str, allowed: bool
) -> None:
    assert may_lay_port(ferry_position(profile, "KO")) is allowed


@pytest.mark.parametrize("profile", [RULEBOOK, SITE])
def test_no_port_tile_once_another_players_corporation_has_acted(profile: str) -> None:
    state = ferry_position(profile, "KO")
    bought, _ = play(state, BuyPrivateForCorporation(A, "SMR", 50))
    assert bought.round.step is Step.TRACK  # type: ignore[union-attr]
    assert not may_lay_port(bought)
    lay = next(o for o in legal_actions(state) if isinstance(o, LayTileOption))
    laid, _ = play(state, LayTile(A, lay.hex, lay.tile, lay.rotation))
    assert not may_lay_port(laid)


@pytest.mark.parametrize("profile", [RULEBOOK, SITE])
def test_port_tile_at_the_track_step_of_the_owners_corporation(profile: str) -> None:
    state = ferry_position(profile, "AR")
    assert may_lay_port(state)
    bought, _ = play(state, BuyPrivateForCorporation(MF_OWNER, "TR", 20))
    assert bought.round.step is Step.TRACK  # type: ignore[union-attr]
    assert may_lay_port(bought)


@pytest.mark.parametrize(("profile", "allowed"), [(RULEBOOK, True), (SITE, False)])
def test_port_tile_after_the_track_step_of_the_owners_corporation(
    profile: str, allowed: bool
) -> None:
    for step in (Step.TOKEN, Step.ROUTES, Step.TRAINS):
        assert may_lay_port(ferry_position(profile, "AR", step=step)) is allowed


@pytest.mark.parametrize("profile", [RULEBOOK, SITE])
def test_port_tile_at_any_time_in_a_stock_round(profile: str) -> None:
    state = ferry_position(profile, "KO")
    state = dataclasses.replace(state, round=StockRound(number=2, turn=0))
    assert state.acting_seats == (A,)
    assert may_lay_port(state)


# ---- 8.2: a token step with no token to place ---------------------------------------------

ER_OWNER = C  # after_auction(3) deals the ER to seat 3


def uwajima_at_track(profile: str) -> GameState:
    """UR (seat 1) at its track step in phase 3: its track from Uwajima (B7) reaches only
    Ohzu (C4, one spot, taken by IR), so it has no token to place; the ER is a player's."""
    state = dataclasses.replace(under(after_auction(), profile), phase="3")
    state = floated(state, "UR", {A: 6}, (1, 3), cash=500, trains=("2",))
    state = floated(state, "IR", {B: 6}, (1, 4), cash=500, trains=("2",))
    state = with_tiles(state, ("B5", "9", 0))  # Uwajima - B5 - Yawatahama (B3) - Ohzu
    assert state.board is not None
    state = dataclasses.replace(state, board=board.apply_token(state.board, "IR", "C4"))
    return operating(state, "UR")


def buy_the_er_and_lay_two_spots_on_ohzu(state: GameState) -> GameState:
    state, _ = play(state, BuyPrivateForCorporation(A, "ER", 40))
    state, _ = play(state, LayPrivateTile(ER_OWNER, "ER", "C4", "14", 1))
    assert state.round.ability is None  # type: ignore[union-attr]
    return state


def test_rulebook_token_step_waits_and_a_token_fits_after_the_ers_lay() -> None:
    state, _ = play(uwajima_at_track(RULEBOOK), Pass(A))
    assert state.round.step is Step.TOKEN  # type: ignore[union-attr]
    assert not any(isinstance(o, PlaceTokenOption) for o in legal_actions(state))
    state = buy_the_er_and_lay_two_spots_on_ohzu(state)
    assert PlaceTokenOption("C4", 0, 40, A) in legal_actions(state)
    state, _ = play(state, PlaceToken(A, "C4"))
    assert state.corporation("UR").tokens_placed == 2


def test_site_token_step_ends_when_no_token_can_be_placed() -> None:
    state, events = play(uwajima_at_track(SITE), Pass(A))
    assert ev.StepSkipped("UR", "token") in events
    assert state.round.step is Step.ROUTES  # type: ignore[union-attr]
    state = buy_the_er_and_lay_two_spots_on_ohzu(state)
    assert state.round.step is Step.ROUTES  # type: ignore[union-attr]
    assert not any(isinstance(o, PlaceTokenOption) for o in legal_actions(state))
    with pytest.raises(Rejected):
        decide(state, PlaceToken(A, "C4"))


@pytest.mark.parametrize("profile", [RULEBOOK, SITE])
def test_a_token_step_with_a_token_to_place_waits(profile: str) -> None:
    state = uwajima_at_track(profile)
    assert state.board is not None
    state = dataclasses.replace(state, board=board.apply_lay(state.board, "C4", "14", 1))
    state, _ = play(state, Pass(A))
    assert state.round.step is Step.TOKEN  # type: ignore[union-attr]
    assert PlaceTokenOption("C4", 0, 40, A) in legal_actions(state)


# ---- 8.2, 8.5: a route step with no route to run -------------------------------------------


def matsuyama_towards_ohzu(profile: str) -> GameState:
    """IR (seat 1) with a 2-train at its track step in phase 3: its track from Matsuyama (E2)
    runs through D3 to Ohzu (C4), which has no tile yet, so it has no route; the ER, whose
    seller lays on Ohzu, is a player's."""
    state = dataclasses.replace(under(after_auction(), profile), phase="3")
    state = floated(state, "IR", {A: 6}, (1, 3), cash=500, trains=("2",))
    return operating(with_tiles(state, ("E2", "5", 0), ("D3", "9", 1)), "IR")


def pass_track_and_token(state: GameState) -> GameState:
    for _ in range(2):
        if state.round.step in (Step.TRACK, Step.TOKEN):  # type: ignore[union-attr]
            state, _ = play(state, Pass(A))
    return state


def buy_the_er_and_lay_ohzu(state: GameState) -> GameState:
    state, _ = play(state, BuyPrivateForCorporation(A, "ER", 40))
    state, _ = play(state, LayPrivateTile(ER_OWNER, "ER", "C4", "13", 0))
    return state


def test_rulebook_route_step_waits_and_runs_a_route_the_ers_lay_opened() -> None:
    state = pass_track_and_token(matsuyama_towards_ohzu(RULEBOOK))
    assert state.round.step is Step.ROUTES  # type: ignore[union-attr]
    state = buy_the_er_and_lay_ohzu(state)
    assert state.round.step is Step.ROUTES  # type: ignore[union-attr]
    assert any(isinstance(o, RunRoutesOption) for o in legal_actions(state))


def test_site_route_step_ends_when_no_route_can_be_run() -> None:
    state = pass_track_and_token(matsuyama_towards_ohzu(SITE))
    assert state.round.step is Step.TRAINS  # type: ignore[union-attr]
    assert state.corporation("IR").position == (1, 2)  # withheld: one space left
    state = buy_the_er_and_lay_ohzu(state)
    assert state.round.step is Step.TRAINS  # type: ignore[union-attr]
    assert not any(isinstance(o, RunRoutesOption) for o in legal_actions(state))


@pytest.mark.parametrize("profile", [RULEBOOK, SITE])
def test_a_route_step_with_a_route_to_run_waits(profile: str) -> None:
    state = matsuyama_towards_ohzu(profile)
    assert state.board is not None
    state = dataclasses.replace(state, board=board.apply_lay(state.board, "C4", "13", 0))
    state = pass_track_and_token(state)
    assert state.round.step is Step.ROUTES  # type: ignore[union-attr]
    assert any(isinstance(o, RunRoutesOption) for o in legal_actions(state))


# ---- 8.3 / 4.2: an upgrade whose new track only a trail round a loop reaches ---------------


def takamatsu_triangle(profile: str) -> GameState:
    """AR (home Kotohira, K8) in phase 5; K6 (tile 24) joins K8 to Takamatsu (K4) and to the
    town of J5 (tile 3), which is joined to Takamatsu too: a loop K6-K4-J5."""
    state = dataclasses.replace(under(after_auction(), profile), phase="5")
    state = with_tiles(state, ("K8", "5", 2), ("K6", "9", 0), ("K6", "24", 0), ("J5", "3", 4))
    state = floated(state, "AR", {A: 6}, (1, 3), cash=500, trains=("5",))
    return operating(state, "AR")


def k6_upgrades(state: GameState) -> set[tuple[str, int]]:
    return {
        (o.tile, o.rotation)
        for o in legal_actions(state)
        if isinstance(o, LayTileOption) and o.hex == "K6"
    }


def test_rulebook_upgrade_connected_by_a_trail_round_the_loop() -> None:
    """Tile 42 adds K6's J5-K4 side: a trail K8-K6-K4-J5 arrives at it (8.3: connected)."""
    state = takamatsu_triangle(RULEBOOK)
    assert k6_upgrades(state) == {("42", 3), ("47", 2), ("47", 5)}
    state, _ = play(state, LayTile(A, "K6", "42", 3))
    assert state.board is not None and state.board.content("K6")[0].name == "42"


def test_site_upgrade_must_use_new_track_its_walk_reaches() -> None:
    """The site's walk leaves K6 by the K4 side or the J5 side before coming back by the
    other, so the new path between them is never taken: no new track, no city changed."""
    state = takamatsu_triangle(SITE)
    assert k6_upgrades(state) == {("47", 2), ("47", 5)}
    with pytest.raises(Rejected) as refused:
        decide(state, LayTile(A, "K6", "42", 3))
    assert refused.value.reason == "NO_NEW_TRACK_WALKED"
    state, _ = play(state, LayTile(A, "K6", "47", 2))
    assert state.board is not None and state.board.content("K6")[0].name == "47"


# ---- 5.2: a bid on the topmost private ----------------------------------------------------


def test_rulebook_refuses_a_bid_on_the_topmost_private_naming_the_price() -> None:
    state = new_game(3, rules_profile=RULEBOOK)
    with pytest.raises(Rejected) as refused:
        decide(state, PlaceBid(A, "TR", 25))
    assert refused.value.reason == "BID_ON_TOP_PRIVATE"
    assert "¥25" in refused.value.message and "¥20" in refused.value.message
    assert not any(isinstance(o, BidRange) and o.company == "TR" for o in legal_actions(state))


def test_site_bid_on_the_topmost_private_buys_it_at_the_bid() -> None:
    state = new_game(3, rules_profile=SITE)
    listed = [o for o in legal_actions(state) if isinstance(o, BidRange) and o.company == "TR"]
    assert [(o.min_price, o.step) for o in listed] == [(20, 5)]
    cash = state.player(A).cash
    state, events = play(state, PlaceBid(A, "TR", 25))
    assert ev.PrivateBought(seat=A, company="TR", price=25) in events
    assert state.player(A).cash == cash - 25
    assert state.acting_seats == (B,)
    with pytest.raises(Rejected) as refused:
        decide(state, PlaceBid(B, "MF", 25))  # MF, topmost now: from its face value ¥30 up
    assert refused.value.reason == "BID_TOO_LOW"


# ---- 14.1: the beginner game's extra tiles --------------------------------------------------


def test_the_beginner_games_extra_tiles_are_the_rulebooks_or_the_sites() -> None:
    def supply(state: GameState) -> Mapping[str, int]:
        assert state.board is not None
        return state.board.supply

    plain = supply(new_game(4))
    added = {
        profile: {
            tile: count - plain.get(tile, 0)
            for tile, count in supply(new_game(4, beginner=True, rules_profile=profile)).items()
            if count != plain.get(tile, 0)
        }
        for profile in (RULEBOOK, SITE)
    }
    assert added[RULEBOOK] == {"6": 2, "7": 1, "8": 1, "9": 1, "23": 1, "24": 1, "57": 1}
    assert added[SITE] == {"6": 2, "7": 1, "8": 1, "9": 1, "23": 1, "24": 1}
