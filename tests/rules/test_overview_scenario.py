"""The step-by-step turn of `1889-overview-fr.txt`: four players, following player 1 and the
Awa Railroad (AR) through the auction, the first stock round and two operating rounds. Every
figure the text gives is checked."""

from __future__ import annotations

from services.rules.domain import events as ev
from services.rules.domain.commands import (
    BuyPrivate,
    BuyPrivateForCorporation,
    BuyShare,
    BuyTrain,
    LayTile,
    Pass,
    PayDividends,
    PlayerCommand,
    StartCorporation,
)
from services.rules.domain.decide import legal_actions
from services.rules.domain.legal import LayTileOption
from services.rules.domain.state import GameState, OperatingRound, Step, StockRound
from tests.rules.helpers import new_game, play
from tools.bots import best_routes

J1, J2, J3, J4 = 1, 2, 3, 4
IPO = "initial_offering"


def pass_until(state: GameState, seat: int) -> GameState:
    """Everyone else passes until `seat` must act."""
    while state.acting_seats != (seat,):
        (other,) = state.acting_seats
        state, _ = play(state, Pass(other))
    return state


def finish_stock_round(state: GameState) -> GameState:
    """Everyone passes (J1, with ¥50 or ¥65, could not buy anything anyway)."""
    while isinstance(state.round, StockRound):
        (seat,) = state.acting_seats
        state, _ = play(state, Pass(seat))
    return state


def operating(state: GameState) -> OperatingRound:
    assert isinstance(state.round, OperatingRound)
    return state.round


def act(state: GameState, command: PlayerCommand) -> GameState:
    return play(pass_until(state, command.seat), command)[0]


def test_the_overview_turn_step_by_step() -> None:
    state = new_game(4)
    # Auction: each buys the cheapest at face value; J1 takes the SMR at ¥50.
    state, _ = play(state, Pass(J1), BuyPrivate(J2, "TR"), BuyPrivate(J3, "MF"))
    state, _ = play(state, BuyPrivate(J4, "ER"), BuyPrivate(J1, "SMR"))
    assert state.player(J1).cash == 370
    for seat, company in ((J2, "DR"), (J3, "SIR"), (J4, "UTF")):
        state, _ = play(state, BuyPrivate(seat, company))
    assert isinstance(state.round, StockRound) and state.acting_seats == (J1,)

    # Stock round 1: J1 starts the AR at ¥80, then buys two shares; J3's share floats it.
    state = act(state, StartCorporation(J1, "AR", 80))
    assert state.player(J1).cash == 210
    state = act(state, BuyShare(J1, "AR", IPO))
    state = act(state, BuyShare(J1, "AR", IPO))
    assert state.player(J1).cash == 50 and state.player(J1).shares_of("AR") == 4
    state = act(state, BuyShare(J3, "AR", IPO))
    ar = state.corporation("AR")
    assert ar.floated and ar.cash == 800
    state = finish_stock_round(state)

    # Operating round 1: the SMR pays J1 ¥15; the AR's token and a straight yellow city at
    # Tokushima (K8) toward Naruto & Awaji (NE) and Komatsujima (SW).
    assert isinstance(state.round, OperatingRound) and state.round.current == "AR"
    assert state.player(J1).cash == 65
    state, _ = play(state, LayTile(J1, "K8", "57", 1))
    # No train: no revenue; the price steps left from ¥80 to ¥75.
    assert state.corporation("AR").position == (2, 2)
    assert operating(state).step is Step.TRAINS
    state, _ = play(state, BuyTrain(J1, "2", "depot", 80), BuyTrain(J1, "2", "depot", 80))
    assert state.corporation("AR").cash == 640 and state.corporation("AR").trains == ("2", "2")
    state, _ = play(state, Pass(J1))

    # Stock round 2: J1 (¥65) cannot afford a share at par; J2 starts the IR (which will
    # buy the other 2-trains); J3 buys one more AR share.
    assert isinstance(state.round, StockRound)
    state = act(state, StartCorporation(J2, "IR", 100))
    state = act(state, BuyShare(J3, "AR", IPO))
    state = act(state, BuyShare(J4, "IR", IPO))
    state = act(state, BuyShare(J2, "IR", IPO))
    state = act(state, BuyShare(J4, "IR", IPO))
    assert state.corporation("IR").floated
    state = finish_stock_round(state)

    # Operating round 2: the IR (¥100) operates before the AR and buys the four other 2-trains.
    assert isinstance(state.round, OperatingRound) and state.round.current == "IR"
    state, _ = play(state, Pass(J2))  # no track
    while operating(state).step is not Step.TRAINS:
        state, _ = play(state, Pass(J2))
    for _ in range(4):
        state, _ = play(state, BuyTrain(J2, "2", "depot", 80))
    # At the train limit of 4 the IR can do nothing more: its turn ends by itself.
    assert operating(state).current == "AR"
    assert state.player(J1).cash == 80  # the SMR paid again

    # The yellow town of Komatsujima (J9) at Tokushima's south-west exit.
    lays = [
        o
        for o in legal_actions(state)
        if isinstance(o, LayTileOption) and o.hex == "J9" and o.tile in {"3", "58"}
    ]
    assert lays
    state, _ = play(state, LayTile(J1, "J9", lays[0].tile, lays[0].rotation))
    state = pass_until(state, J1)
    assert operating(state).step is Step.ROUTES
    # Tokushima-Naruto & Awaji 20 + 20, Tokushima-Komatsujima 20 + 10: ¥70.
    run = best_routes(state, "AR", J1)
    assert run.priced is not None
    assert sorted(r.revenue for r in run.priced) == [30, 40]
    state, _ = play(state, run)
    state, events = play(state, PayDividends(J1, True))
    paid = events[0]
    assert isinstance(paid, ev.DividendsPaid) and paid.per_share == 7
    assert ev.Dividend(J1, 28) in paid.dividends
    assert state.player(J1).cash == 108
    assert state.corporation("AR").position == (2, 3)  # back to ¥80

    # The first 3-train (¥180) starts phase 3; then the AR buys the SMR from J1 for ¥100.
    state, events = play(state, BuyTrain(J1, "3", "depot", 180))
    assert ev.PhaseChanged("3") in events
    assert state.corporation("AR").cash == 460
    state, _ = play(state, BuyPrivateForCorporation(J1, "SMR", 100))
    assert state.player(J1).cash == 208 and state.corporation("AR").cash == 360
    assert "SMR" in state.corporation("AR").privates
