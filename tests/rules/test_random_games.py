"""Random legal games played to their end, with the invariants checked after every command.
SHIKOKU_PROPERTY_SCALE multiplies the number of games (make soak)."""

from __future__ import annotations

import os
import random

import msgpack
import pytest

from kernel.rejection import Rejected
from services.rules.board import load_title
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.events import (
    CorporationStarted,
    Event,
    ShareBought,
    event_from_payload,
)
from services.rules.domain.evolve import fold
from services.rules.domain.legal import ExchangeOption, PrivateTileOption
from services.rules.domain.state import GameState
from services.rules.domain.stock_round import certificate_limit, certificates
from services.rules.domain.trains import train_limit
from tests.rules.helpers import new_game
from tools.bots import choose, command_for

SCALE = float(os.environ.get("SHIKOKU_PROPERTY_SCALE", "1"))  # make fast: 0.25
MAX_COMMANDS = 4000


def check_invariants(state: GameState) -> None:
    corporations = sum(c.cash for c in state.corporations)
    if not state.bank_broken:
        assert state.bank >= 0
    assert state.bank + sum(p.cash for p in state.players) + corporations == load_title("1889").bank
    assert all(p.cash >= 0 for p in state.players)
    assert all(c.cash >= 0 for c in state.corporations)
    for corporation in state.corporations:
        held = sum(p.shares_of(corporation.id) for p in state.players)
        assert held + corporation.initial_offering + corporation.open_market == 10
        assert corporation.open_market <= 5
        if corporation.started:
            president = state.player(corporation.president).shares_of(corporation.id)
            assert president >= 2
            assert all(p.shares_of(corporation.id) <= president for p in state.players)
        discarding = getattr(state.round, "discarding", ())
        if corporation.id not in discarding:
            assert len(corporation.trains) <= train_limit(state)


def play_random_game(players: int, seed: int) -> tuple[GameState, list[Event]]:
    rng = random.Random(seed)
    state = new_game(players, seed=seed, fixed=False)
    log: list[Event] = []
    for _ in range(MAX_COMMANDS):
        if state.result is not None:
            return state, log
        options = legal_actions(state)
        assert options, f"nobody can act in {state.round}"
        in_turn = {o.seat for o in options if not isinstance(o, PrivateTileOption | ExchangeOption)}
        assert in_turn == set(state.acting_seats)
        command = command_for(choose(options, rng), rng, state)
        events = decide(state, command)
        log += events
        state = fold(events, state)
        check_invariants(state)
        for event in events:
            if isinstance(event, ShareBought | CorporationStarted):
                # A certificate is bought only within the limit (7.2.4).
                buyer = state.player(event.seat)
                assert certificates(state, buyer) <= certificate_limit(state)
    raise AssertionError(f"game {seed} did not end within {MAX_COMMANDS} commands")


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_random_games_end_and_keep_every_invariant(players: int) -> None:
    for seed in range(max(1, round(4 * SCALE))):
        state, log = play_random_game(players, seed)
        assert state.result is not None
        assert state.result.reason in {"bank", "bankrupt"}
        assert fold(log, new_game(players, seed=seed, fixed=False)) == state
        # As stored: msgpack payloads read back into the same events.
        stored = [msgpack.unpackb(msgpack.packb(event.payload())) for event in log]
        assert [
            event_from_payload(e.TYPE, e.SCHEMA, p) for e, p in zip(log, stored, strict=True)
        ] == log


def test_unlisted_commands_are_rejected_during_random_play() -> None:
    """A legal action's parameters just outside its range are refused."""
    from services.rules.domain import commands as cmd
    from services.rules.domain.legal import BidRange, BuyTrainOption, SellOption

    rng = random.Random(11)
    state = new_game(4, seed=11, fixed=False)
    checked = 0
    for _ in range(1500):
        if state.result is not None:
            break
        options = legal_actions(state)
        for option in options:
            wrong: cmd.PlayerCommand | None = None
            match option:
                case BidRange(company=company, min_price=low, seat=seat):
                    wrong = cmd.PlaceBid(seat, company, low - 5)
                case SellOption(corporation=corporation, max_count=most, seat=seat):
                    wrong = cmd.SellShares(seat, corporation, most + 1)
                case BuyTrainOption(
                    train=train, source=source, max_price=high, exchange=old, seat=seat
                ):
                    wrong = cmd.BuyTrain(seat, train, source, high + 1, old)
            if wrong is not None:
                with pytest.raises(Rejected):
                    decide(state, wrong)
                checked += 1
        state = fold(decide(state, command_for(choose(options, rng), rng, state)), state)
    assert checked > 50
