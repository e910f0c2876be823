"""Rulebook 7: the stock round."""

import dataclasses
import random
from types import MappingProxyType

import pytest

from kernel.rejection import Rejected
from services.rules.domain import events as ev
from services.rules.domain import stock_round
from services.rules.domain.commands import (
    BuyPrivate,
    BuyShare,
    Pass,
    SellShares,
    StartCorporation,
)
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.legal import SellOption
from services.rules.domain.state import GameState, StockRound
from tests.rules.helpers import new_game, play
from tests.scale import scaled
from tools.bots import command_for

A, B, C = 1, 2, 3
IPO, MARKET = "initial_offering", "open_market"


def after_auction() -> GameState:
    """Three players bought the six privates in turn; A has the priority deal."""
    state = new_game(3)
    for seat, company in zip([A, B, C] * 2, ["TR", "MF", "ER", "SMR", "DR", "SIR"], strict=True):
        state, _ = play(state, BuyPrivate(seat, company))
    assert isinstance(state.round, StockRound) and state.acting_seats == (A,)
    return state


def in_later_stock_round(state: GameState) -> GameState:
    """The same holdings, as if in the second stock round (selling allowed)."""
    assert isinstance(state.round, StockRound)
    return dataclasses.replace(state, round=dataclasses.replace(state.round, number=2))


def test_starting_a_corporation_and_floating_it() -> None:
    state = after_auction()
    cash = state.player(A).cash
    state, events = play(state, StartCorporation(A, "KO", 70))
    assert isinstance(events[0], ev.CorporationStarted) and isinstance(events[-1], ev.TurnEnded)
    ko = state.corporation("KO")
    assert (ko.par, ko.president, ko.initial_offering, ko.position) == (70, A, 8, (4, 3))
    assert state.player(A).cash == cash - 140
    state, _ = play(state, BuyShare(B, "KO", IPO), BuyShare(C, "KO", IPO))
    assert not state.corporation("KO").floated
    state, events = play(state, BuyShare(A, "KO", IPO))
    assert isinstance(events[1], ev.CorporationFloated)
    assert state.corporation("KO").floated and state.corporation("KO").cash == 700


def test_no_selling_in_the_first_stock_round() -> None:
    state, _ = play(after_auction(), StartCorporation(A, "KO", 70), Pass(B), Pass(C))
    with pytest.raises(Rejected) as rejected:
        decide(state, SellShares(A, "KO", 1))
    assert rejected.value.reason == "NO_SALES_IN_FIRST_STOCK_ROUND"


def test_one_certificate_per_turn_and_sold_shares_not_bought_back() -> None:
    state, _ = play(after_auction(), StartCorporation(A, "KO", 70))
    state, _ = play(state, BuyShare(B, "KO", IPO), BuyShare(C, "KO", IPO))
    state = in_later_stock_round(state)
    # B sells its share, then may not buy KO again this round.
    state, _ = play(state, Pass(A), SellShares(B, "KO", 1))
    with pytest.raises(Rejected) as rejected:
        decide(state, BuyShare(B, "KO", MARKET))
    assert rejected.value.reason == "SOLD_THIS_ROUND"


def test_sell_buy_sell_is_not_allowed() -> None:
    state, _ = play(after_auction(), StartCorporation(A, "KO", 70), BuyShare(B, "KO", IPO))
    state, _ = play(state, StartCorporation(C, "SR", 65))
    state = in_later_stock_round(state)
    state, _ = play(state, Pass(A), SellShares(B, "KO", 1))
    assert state.acting_seats == (B,)  # may still buy, or sell more
    state, events = play(state, BuyShare(B, "SR", IPO))
    # Nothing is left to do after sell-buy: the turn ends by itself.
    assert isinstance(events[-1], ev.TurnEnded) and state.acting_seats == (C,)
    assert isinstance(state.round, StockRound)
    selling_again = dataclasses.replace(state.round, turn=1, actions=("sell", "buy"))
    refusal = stock_round.sell_option(state, selling_again, B, "SR")
    assert isinstance(refusal, Rejected) and refusal.reason == "SELL_BUY_SELL"
    buy_then_sell = dataclasses.replace(state.round, turn=1, actions=("buy",))
    assert isinstance(stock_round.sell_option(state, buy_then_sell, B, "SR"), SellOption)


def test_holding_limit_is_sixty_percent() -> None:
    state = after_auction()
    rich = tuple(dataclasses.replace(p, cash=2000) if p.seat == A else p for p in state.players)
    state, _ = play(dataclasses.replace(state, players=rich), StartCorporation(A, "KO", 65))
    for _ in range(4):
        state, _ = play(state, Pass(B), Pass(C), BuyShare(A, "KO", IPO))
    assert state.player(A).shares_of("KO") == 6
    state, _ = play(state, Pass(B), Pass(C))
    with pytest.raises(Rejected) as rejected:
        decide(state, BuyShare(A, "KO", IPO))
    assert rejected.value.reason == "HOLDING_LIMIT"


def test_presidency_passes_to_a_buyer_with_more_shares() -> None:
    state, _ = play(after_auction(), StartCorporation(A, "KO", 65))
    for _ in range(2):
        state, _ = play(state, BuyShare(B, "KO", IPO), Pass(C), Pass(A))
    assert state.corporation("KO").president == A  # 2 shares each: a tie changes nothing
    state, events = play(state, BuyShare(B, "KO", IPO))
    assert events[1] == ev.PresidencyChanged("KO", B, A)
    assert state.corporation("KO").president == B


def test_rulebook_presidency_example() -> None:
    """7.5: the president holds 6, the player to the left 2; selling 5 hands the presidency
    over and leaves the seller one share."""
    state = after_auction()
    shares = {A: 6, B: 2}
    players = tuple(
        dataclasses.replace(p, shares=MappingProxyType({"UR": shares.get(p.seat, 0)}))
        for p in state.players
    )
    corporations = tuple(
        dataclasses.replace(
            c, par=90, position=(1, 3), initial_offering=2, president=A, floated=True
        )
        if c.id == "UR"
        else c
        for c in state.corporations
    )
    state = in_later_stock_round(
        dataclasses.replace(state, players=players, corporations=corporations)
    )
    option = next(
        o for o in legal_actions(state) if isinstance(o, SellOption) and o.corporation == "UR"
    )
    assert option.max_count == 5
    state, events = play(state, SellShares(A, "UR", 5))
    assert [type(e) for e in events[:2]] == [ev.SharesSold, ev.PresidencyChanged]
    assert state.corporation("UR").president == B
    assert state.player(A).shares_of("UR") == 1
    assert state.corporation("UR").open_market == 5
    assert state.corporation("UR").position == (6, 3)


def test_round_ends_when_all_pass_in_a_row_and_priority_follows_the_last_actor() -> None:
    state, _ = play(after_auction(), StartCorporation(A, "KO", 65), Pass(B), Pass(C))
    assert isinstance(state.round, StockRound) and state.acting_seats == (A,)
    state, events = play(state, Pass(A))
    assert [type(e) for e in events[:3]] == [
        ev.Passed,
        ev.StockRoundEnded,
        ev.OperatingRoundStarted,
    ]
    assert state.priority == B  # the player after the last to pass
    # No corporation has floated: the operating round only pays the privates.
    assert [type(e) for e in events[3:]] == [
        ev.PrivateRevenuePaid,
        ev.OperatingRoundEnded,
        ev.StockRoundStarted,
    ]
    assert isinstance(state.round, StockRound) and state.round.number == 2
    assert state.acting_seats == (B,)


def test_sold_out_corporations_rise_at_the_end_of_the_round() -> None:
    state = after_auction()
    players = tuple(
        dataclasses.replace(p, shares=MappingProxyType({"AR": {A: 6, B: 2, C: 2}[p.seat]}))
        for p in state.players
    )
    corporations = tuple(
        dataclasses.replace(
            c, par=75, position=(3, 3), initial_offering=0, president=A, floated=True
        )
        if c.id == "AR"
        else c
        for c in state.corporations
    )
    state = dataclasses.replace(state, players=players, corporations=corporations)
    state, events = play(state, Pass(A), Pass(B), Pass(C))
    assert ev.SoldOutPriceRaised("AR", (2, 3)) in events
    assert state.corporation("AR").position == (2, 3)


def test_random_stock_rounds_keep_the_invariants() -> None:
    rng = random.Random(5)
    for _game in range(scaled(20)):
        state = in_later_stock_round(after_auction())
        total = state.bank + sum(p.cash for p in state.players)
        for _step in range(80):
            if not isinstance(state.round, StockRound):
                break
            options = legal_actions(state)
            pick = options[-1] if rng.random() < 0.3 else rng.choice(options)
            state, _ = play(state, command_for(pick, rng, state))
            money = state.bank + sum(p.cash for p in state.players)
            money += sum(c.cash for c in state.corporations)
            assert money == total
            for corporation in state.corporations:
                held = sum(p.shares_of(corporation.id) for p in state.players)
                assert held + corporation.initial_offering + corporation.open_market == 10
                assert corporation.open_market <= 5
                if corporation.started:
                    president = state.player(corporation.president).shares_of(corporation.id)
                    assert president >= 2
                    assert all(p.shares_of(corporation.id) <= president for p in state.players)
