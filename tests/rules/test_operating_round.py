"""Rulebook 8, 9 and 10 through decide and evolve."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from kernel.rejection import Rejected
from services.rules.domain import events as ev
from services.rules.domain.commands import (
    BuyPrivateForCorporation,
    BuyShare,
    BuyTrain,
    DeclareBankruptcy,
    DiscardTrain,
    EndGame,
    LayTile,
    Pass,
    PayDividends,
    RouteSubmission,
    RunRoutes,
    SellShares,
    StartCorporation,
)
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.game_end import net_worth
from services.rules.domain.legal import (
    BankruptcyOption,
    BuyTrainOption,
    LayTileOption,
    SellOption,
)
from services.rules.domain.state import OperatingRound, Step, StockRound
from tests.rules.builders import (
    after_auction,
    floated,
    operating,
    with_corporation,
    with_player,
    with_tiles,
)
from tests.rules.helpers import play

A, B, C = 1, 2, 3
IPO = "initial_offering"


def checked_run(seat: int, *runs: ev.TrainRun) -> RunRoutes:
    """Routes as the rules service hands them to decide: already checked and priced."""
    submitted = tuple(RouteSubmission(run.train, run.hexes) for run in runs)
    return RunRoutes(seat, submitted, priced=runs)


def test_first_operating_round_of_a_new_corporation() -> None:
    state = after_auction()
    state = with_player(state, A, cash=1000)
    state, _ = play(state, StartCorporation(A, "KO", 70))
    for _ in range(3):
        state, _ = play(state, Pass(B), Pass(C), BuyShare(A, "KO", IPO))
    assert state.corporation("KO").floated
    bank = state.bank
    state, events = play(state, Pass(B), Pass(C), Pass(A))
    kinds = [type(e) for e in events]
    assert kinds[-4:] == [
        ev.OperatingRoundStarted,
        ev.PrivateRevenuePaid,
        ev.HomeTokenPlaced,
        ev.CorporationOperates,
    ]
    assert state.bank == bank - 5 - 5 - 10 - 15 - 15 - 20  # the six privates paid
    assert state.acting_seats == (A,)
    options = legal_actions(state)
    assert LayTileOption("J3", "8", 3, 0, A) in options  # toward Sakaide & Okayama (J1)
    assert not [o for o in options if isinstance(o, LayTileOption) and o.hex == "K4"]  # TR
    state, events = play(state, LayTile(A, "J3", "8", 3))
    # No other city to put a token in: the token step passes by itself. No train: nothing to
    # run, the price moves left (8.6.2 note).
    assert [type(e) for e in events] == [ev.TileLaid, ev.StepSkipped, ev.EarningsWithheld]
    assert events[-1] == ev.EarningsWithheld("KO", 0, (4, 2))
    assert isinstance(state.round, OperatingRound) and state.round.step is Step.TRAINS
    with pytest.raises(Rejected) as rejected:
        decide(state, Pass(A))
    assert rejected.value.reason == "MUST_BUY_TRAIN"
    state, _ = play(state, BuyTrain(A, "2", "depot", 80))
    assert state.corporation("KO").trains == ("2",) and state.corporation("KO").cash == 620
    state, events = play(state, BuyTrain(A, "2", "depot", 80), Pass(A))
    assert [type(e) for e in events[-3:]] == [
        ev.OperatingTurnEnded,
        ev.OperatingRoundEnded,
        ev.StockRoundStarted,
    ]
    assert isinstance(state.round, StockRound) and state.round.number == 2


def test_only_the_president_acts_for_the_operating_corporation() -> None:
    """8: the president runs the corporation; a seat holding shares but not the presidency,
    or none at all, may not act for it."""
    state = after_auction()
    state = with_player(state, A, cash=1000)
    state = with_player(state, B, cash=1000)
    state, _ = play(state, StartCorporation(A, "KO", 70), BuyShare(B, "KO", IPO), Pass(C))
    for _ in range(2):
        state, _ = play(state, BuyShare(A, "KO", IPO), Pass(B), Pass(C))
    state, _ = play(state, BuyShare(A, "KO", IPO), Pass(B), Pass(C), Pass(A))
    assert isinstance(state.round, OperatingRound) and state.acting_seats == (A,)
    assert state.corporation("KO").president == A
    for seat in (B, C):  # B holds a KO share, C none
        with pytest.raises(Rejected) as rejected:
            decide(state, LayTile(seat, "J3", "8", 3))
        assert rejected.value.reason == "NOT_YOUR_TURN"
        assert not [o for o in legal_actions(state) if getattr(o, "seat", A) == seat]
    assert decide(state, LayTile(A, "J3", "8", 3))


def test_rulebook_dividend_table() -> None:
    """8.6.1: Iyo Railroad runs ¥200 with 5, 1 and 1 shares held, 1 in the initial offering
    and 2 in the open market."""
    state = floated(after_auction(), "IR", {A: 5, B: 1, C: 1}, (1, 3), open_market=2)
    state = with_corporation(state, "IR", trains=("2", "2", "3"), cash=0)
    state = operating(state, "IR", step=Step.ROUTES)
    run = (ev.TrainRun("2", ("E2", "F1"), 60), ev.TrainRun("2", ("E2", "C4"), 60))
    ran, _ = play(state, checked_run(A, *run, ev.TrainRun("3", ("E2", "F3", "F1"), 80)))
    cash = {p.seat: p.cash for p in ran.players}
    paid, events = play(ran, PayDividends(A, True))
    assert events[0] == ev.DividendsPaid(
        "IR", 200, 20, (ev.Dividend(A, 100), ev.Dividend(B, 20), ev.Dividend(C, 20)), 40, (1, 4)
    )
    assert {p.seat: p.cash - cash[p.seat] for p in paid.players} == {A: 100, B: 20, C: 20}
    assert paid.corporation("IR").cash == 40
    withheld, _ = play(ran, PayDividends(A, False))
    assert withheld.corporation("IR").cash == 200
    assert withheld.corporation("IR").position == (1, 2)


def test_phase_changes_rust_and_discards() -> None:
    state = floated(after_auction(), "KO", {A: 6}, (1, 3), cash=5000)
    state = floated(state, "SR", {B: 6}, (2, 3), cash=5000, trains=("2", "2", "3", "3"))
    depot = MappingProxyType({"2": 0, "3": 1, "4": 4, "5": 3, "6": 2, "D": -1})
    state = dataclasses.replace(state, depot=depot, phase="3")
    state = operating(state, "KO", step=Step.TRAINS)
    state, events = play(state, BuyTrain(A, "3", "depot", 180))
    assert not any(isinstance(e, ev.PhaseChanged) for e in events)
    state, events = play(state, BuyTrain(A, "4", "depot", 300))
    assert events[1:] == [ev.PhaseChanged("4"), ev.TrainsRusted("2")]
    assert state.corporation("SR").trains == ("3", "3")  # within the new limit of 3
    state = with_corporation(state, "SR", trains=("3", "3", "3", "4"))
    state = dataclasses.replace(state, round=dataclasses.replace(state.round, discarding=("SR",)))  # type: ignore[type-var]
    assert state.acting_seats == (B,)
    with pytest.raises(Rejected) as rejected:
        decide(state, BuyTrain(B, "4", "depot", 300))
    assert rejected.value.reason in {"MUST_DISCARD", "NOT_YOUR_TURN"}
    state, _ = play(state, DiscardTrain(B, "SR", "3"))
    assert state.corporation("SR").trains == ("3", "3", "4")
    assert state.pool_trains == ("3",)
    assert state.acting_seats == (A,)  # KO resumes its turn


def test_first_five_train_closes_privates_but_a_player_owned_uno_takamatsu_ferry() -> None:
    state = after_auction(4)
    assert "UTF" in state.privates_owned
    state = floated(state, "KO", {1: 6}, (1, 3), cash=5000)
    depot = MappingProxyType({"2": 0, "3": 0, "4": 0, "5": 3, "6": 2, "D": -1})
    state = operating(dataclasses.replace(state, depot=depot, phase="4"), "KO", step=Step.TRAINS)
    state, events = play(state, BuyTrain(1, "5", "depot", 450))
    assert ev.PrivatesClosed(("TR", "MF", "ER", "SMR", "DR", "SIR")) in events
    assert set(state.privates_owned) == {"UTF"}


def test_diesel_exchange_rusts_a_four_and_returns_a_five_to_the_open_market() -> None:
    state = floated(after_auction(), "KO", {A: 6}, (1, 3), cash=2000, trains=("4", "5"))
    depot = MappingProxyType({"2": 0, "3": 0, "4": 0, "5": 0, "6": 1, "D": -1})
    state = operating(dataclasses.replace(state, depot=depot, phase="6"), "KO", step=Step.TRAINS)
    options = [o for o in legal_actions(state) if isinstance(o, BuyTrainOption)]
    # At the train limit of 2: no purchase, but an exchange (8.7.4).
    assert {(o.train, o.exchange, o.min_price) for o in options} == {
        ("D", "4", 800),
        ("D", "5", 800),
    }
    below_limit = with_corporation(state, "KO", trains=("4",))
    options = [o for o in legal_actions(below_limit) if isinstance(o, BuyTrainOption)]
    assert {(o.train, o.exchange, o.min_price) for o in options} == {
        ("6", "", 630),
        ("D", "", 1100),
        ("D", "4", 800),
    }
    exchanged, events = play(state, BuyTrain(A, "D", "depot", 800, exchange="4"))
    assert ev.PhaseChanged("D") in events
    assert exchanged.corporation("KO").trains == ("5", "D")
    assert exchanged.pool_trains == ()
    exchanged, _ = play(state, BuyTrain(A, "D", "depot", 800, exchange="5"))
    assert exchanged.pool_trains == ("5",)


def test_rulebook_forced_purchase_ends_in_bankruptcy() -> None:
    """8.7.6: SR has ¥300, only a ¥1100 Diesel is available, the president has ¥200 and can
    raise only ¥500 more by selling."""
    state = with_tiles(after_auction(), ("I2", "6", 4))  # Marugame, toward Sakaide (J1)
    state = floated(state, "SR", {A: 2, B: 3}, (2, 3), cash=300)
    state = floated(state, "IR", {A: 5}, (6, 3), par=65, open_market=0)  # 5 x 60 = 300 by selling
    state = floated(state, "KO", {A: 2}, (7, 3), par=65)  # 2 x 55: the president keeps these
    state = with_player(state, A, cash=200, shares={"SR": 2, "IR": 5, "KO": 2})
    depot = MappingProxyType({"2": 0, "3": 0, "4": 0, "5": 0, "6": 0, "D": -1})
    state = dataclasses.replace(state, depot=depot, phase="D")
    state = with_corporation(state, "SR", president=A)
    state = operating(state, "SR", step=Step.TRAINS)
    # Selling all it may (3 IR; the IR president's certificate stays) raises ¥180 of ¥800.
    mine = [o for o in legal_actions(state) if o.seat == A]
    assert mine == [SellOption("IR", 3, 60, A), BankruptcyOption(A)]
    state, _ = play(state, SellShares(A, "IR", 1))
    state, events = play(state, DeclareBankruptcy(A))
    # Bankruptcy sells the rest, then the president's cash goes to the corporation.
    assert events[0] == ev.SharesSold(A, "IR", 2, 55, (9, 3))
    assert events[1] == ev.PlayerBankrupt(A, "SR", 200 + 60 + 110)
    assert state.player(A).cash == 0 and state.corporation("SR").cash == 300 + 370
    assert isinstance(events[-1], ev.GameEnded) and events[-1].reason == "bankrupt"
    assert state.result is not None and state.acting_seats == ()


def test_president_pays_the_difference_for_the_cheapest_train() -> None:
    state = with_tiles(after_auction(), ("I2", "6", 4))
    state = floated(state, "SR", {A: 6}, (2, 3), cash=50)
    state = with_player(state, A, cash=100)
    state = operating(state, "SR", step=Step.TRAINS)
    (option,) = [o for o in legal_actions(state) if isinstance(o, BuyTrainOption)]
    assert (option.train, option.contribution) == ("2", 30)
    state, _ = play(state, BuyTrain(A, "2", "depot", 80))
    assert state.player(A).cash == 70 and state.corporation("SR").cash == 0


def test_corporation_buys_a_private_for_half_to_double_face_value() -> None:
    state = floated(after_auction(), "UR", {A: 6}, (1, 3), cash=500, trains=("3",))
    state = operating(dataclasses.replace(state, phase="3"), "UR", step=Step.TRACK)
    er_owner = state.privates_owned["ER"]
    with pytest.raises(Rejected) as rejected:
        decide(state, BuyPrivateForCorporation(A, "ER", 85))
    assert rejected.value.reason == "INVALID_PRICE"
    state, _ = play(state, BuyPrivateForCorporation(A, "ER", 80))
    assert "ER" in state.corporation("UR").privates and "ER" not in state.privates_owned
    assert state.corporation("UR").cash == 420
    assert state.player(er_owner).privates.count("ER") == 0


def test_rulebook_net_worth_example() -> None:
    """10.3: 6 IR at ¥110, 3 UR at ¥90, ¥840 and the UTF: ¥1920."""
    state = after_auction(4)
    state = floated(state, "IR", {1: 6}, (0, 4))
    state = floated(state, "UR", {1: 3}, (1, 3))
    state = with_player(state, 1, cash=840, privates=("UTF",))
    assert net_worth(state, state.player(1)) == 1920


def test_bank_broken_in_an_operating_round_ends_the_game_after_the_set() -> None:
    state = floated(after_auction(), "KO", {A: 6}, (1, 3), cash=0, trains=("2",))
    state = dataclasses.replace(state, bank=100)
    state = operating(state, "KO", step=Step.ROUTES)
    state, _ = play(state, checked_run(A, ev.TrainRun("2", ("K4", "J5"), 200)))
    state, events = play(state, PayDividends(A, False))
    assert events[-1] == ev.BankBroken() and state.result is None
    state, events = play(state, Pass(A))  # KO ends its turn: the set, and the game, are over
    assert isinstance(events[-1], ev.GameEnded) and events[-1].reason == "bank"
    assert state.bank < 0  # the bank is unlimited once broken


def test_players_may_end_the_game_by_agreement() -> None:
    state = floated(after_auction(), "KO", {A: 6, B: 1}, (2, 4))  # 90
    (ended,) = decide(state, EndGame())
    assert isinstance(ended, ev.GameEnded) and ended.reason == "ended"
    worth = {n.seat: n.net_worth for n in ended.net_worths}
    assert worth[A] == state.player(A).cash + 6 * 90 + 20 + 50
    with pytest.raises(Rejected):
        decide(play(state, EndGame())[0], EndGame())
