"""Rulebook 5.2, including its worked example."""

import random

import pytest

from kernel.rejection import Rejected
from services.rules.domain import events as ev
from services.rules.domain.commands import BuyPrivate, Pass, PlaceBid, PlayerCommand
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.legal import BidRange
from services.rules.domain.state import GameState, PrivateAuction, StockRound
from tests.rules.helpers import new_game, play
from tests.scale import scaled
from tools.bots import command_for

BLUE, YELLOW, RED = 1, 2, 3


def owner(state: GameState, company: str) -> int:
    return state.privates_owned[company]


def test_rulebook_example() -> None:
    state = new_game(3)
    state, _ = play(state, PlaceBid(BLUE, "MF", 35), PlaceBid(YELLOW, "ER", 45))
    state, events = play(state, BuyPrivate(RED, "TR"))
    assert [type(e) for e in events] == [ev.PrivateBought, ev.PrivateSold, ev.PrivateSold]
    assert (owner(state, "TR"), owner(state, "MF"), owner(state, "ER")) == (RED, BLUE, YELLOW)
    assert state.acting_seats == (BLUE,)

    state, _ = play(
        state,
        PlaceBid(BLUE, "SIR", 85),
        PlaceBid(YELLOW, "DR", 65),
        PlaceBid(RED, "SIR", 90),
        PlaceBid(BLUE, "DR", 70),
        BuyPrivate(YELLOW, "SMR"),
    )
    assert state.acting_seats == (YELLOW,)  # closed auction for DR, left of Blue
    state, _ = play(state, PlaceBid(YELLOW, "DR", 75), Pass(BLUE))
    assert owner(state, "DR") == YELLOW
    assert state.acting_seats == (BLUE,)  # closed auction for SIR, left of Red
    state, events = play(state, Pass(BLUE))
    assert owner(state, "SIR") == RED
    assert isinstance(events[-1], ev.StockRoundStarted)
    assert isinstance(state.round, StockRound)
    assert state.priority == RED
    cash = {p.seat: p.cash for p in state.players}
    assert cash == {BLUE: 420 - 35, YELLOW: 420 - 45 - 50 - 75, RED: 420 - 20 - 90}
    assert state.bank + sum(cash.values()) == 7000


def test_out_of_turn_is_rejected() -> None:
    state = new_game(3)
    with pytest.raises(Rejected) as rejected:
        decide(state, Pass(YELLOW))
    assert rejected.value.reason == "NOT_YOUR_TURN"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (BuyPrivate(BLUE, "MF"), "NOT_TOPMOST_PRIVATE"),
        (PlaceBid(BLUE, "TR", 25), "BID_ON_TOP_PRIVATE"),
        (PlaceBid(BLUE, "MF", 30), "BID_TOO_LOW"),
        (PlaceBid(BLUE, "MF", 37), "BID_NOT_MULTIPLE_OF_5"),
        (PlaceBid(BLUE, "MF", 425), "INSUFFICIENT_CASH"),
        (PlaceBid(BLUE, "UTF", 200), "PRIVATE_NOT_ON_OFFER"),
    ],
)
def test_illegal_auction_commands(command: PlayerCommand, reason: str) -> None:
    with pytest.raises(Rejected) as rejected:
        decide(new_game(3), command)
    assert rejected.value.reason == reason


def test_bids_count_against_cash_for_other_bids() -> None:
    state = new_game(3)
    state, _ = play(state, PlaceBid(BLUE, "SIR", 400), Pass(YELLOW), Pass(RED))
    with pytest.raises(Rejected) as rejected:
        decide(state, PlaceBid(BLUE, "DR", 65))
    assert rejected.value.reason == "INSUFFICIENT_CASH"
    assert decide(state, BuyPrivate(BLUE, "TR"))  # 20 <= 420 - 400


def test_all_pass_with_no_owner_lowers_tr_then_gives_it_away() -> None:
    state = new_game(3)
    for price in (15, 10, 5):
        state, events = play(state, Pass(BLUE), Pass(YELLOW), Pass(RED))
        assert events[-1] == ev.PrivatePriceReduced("TR", price)
        assert state.acting_seats == (BLUE,)
    state, events = play(state, Pass(BLUE), Pass(YELLOW), Pass(RED))
    assert events[-1] == ev.PrivateBought(BLUE, "TR", 0)
    assert owner(state, "TR") == BLUE
    assert state.player(BLUE).cash == 420
    assert state.acting_seats == (YELLOW,)


def test_all_pass_with_an_owner_pays_private_revenue() -> None:
    state = new_game(3)
    state, _ = play(state, BuyPrivate(BLUE, "TR"))
    state, events = play(state, Pass(YELLOW), Pass(RED), Pass(BLUE))
    assert events[-1] == ev.PrivateRevenuePaid((ev.Payment(BLUE, "TR", 5),))
    assert state.player(BLUE).cash == 420 - 20 + 5
    assert state.acting_seats == (YELLOW,)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_random_auctions_accept_exactly_the_listed_actions_and_conserve_money(players: int) -> None:
    rng = random.Random(players)
    for _game in range(scaled(30)):
        state = new_game(players, seed=rng.randrange(10**6), fixed=False)
        total = state.bank + sum(p.cash for p in state.players)
        steps = 0
        while isinstance(state.round, PrivateAuction):
            options = legal_actions(state)
            assert options and all(o.seat in state.acting_seats for o in options)
            # Unlisted commands are rejected: a bid just below the minimum, a wrong seat.
            for option in options:
                if isinstance(option, BidRange):
                    with pytest.raises(Rejected):
                        decide(state, PlaceBid(option.seat, option.company, option.min_price - 5))
            other = next(p.seat for p in state.players if p.seat not in state.acting_seats)
            with pytest.raises(Rejected):
                decide(state, Pass(other))
            pick = options[-1] if rng.random() < 0.4 else rng.choice(options)
            state, _ = play(state, command_for(pick, rng, state))
            assert state.bank + sum(p.cash for p in state.players) == total
            assert all(p.cash >= 0 for p in state.players)
            steps += 1
            assert steps < 500
        assert isinstance(state.round, StockRound)
        owned = sorted(c for p in state.players for c in p.privates)
        assert owned == sorted(state.privates_owned)
