"""Two rules the cross-checks with the site's engine caught ours getting wrong: 8.7.5, a
corporation must own a train if it has a station token in a city connected to another revenue
centre (another city holding its own token counts as one); and 7.4/14.2, a corporation that
floats during an operating round operates from the next one."""

from __future__ import annotations

import dataclasses

from services.rules import board
from services.rules.domain.commands import Pass
from services.rules.domain.operating_round import must_buy_train
from services.rules.domain.state import GameState
from tests.rules.builders import after_auction, floated, operating, with_tiles
from tests.rules.helpers import play


def sanuki(*lays: tuple[str, str, int], second_token: str = "") -> GameState:
    """SR (home Marugame, I2) floated without trains, operating, with these tiles laid."""
    state = floated(after_auction(3), "SR", {1: 6}, (0, 5), trains=(), cash=1_000)
    state = with_tiles(operating(state, "SR"), *lays)
    if second_token:
        assert state.board is not None
        state = dataclasses.replace(state, board=board.apply_token(state.board, "SR", second_token))
    return state


# Marugame (I2) and Kotohira (I4), side by side, their tiles' track joined across their common
# edge; nothing else reached.
JOINED = (("I2", "5", 5), ("I4", "438", 1))


def test_two_cities_holding_its_own_tokens_are_a_route() -> None:
    state = sanuki(*JOINED, second_token="I4")
    assert state.board is not None
    reached = {hex_ for hex_, _city in board.connectivity(state.board, "SR").stops}
    assert reached == {"I2", "I4"}  # only its own token cities
    assert must_buy_train(state, state.corporation("SR"))


def test_a_lone_token_city_is_no_route() -> None:
    state = sanuki(("I2", "5", 5))
    assert not must_buy_train(state, state.corporation("SR"))


def test_two_token_cities_not_joined_are_no_route() -> None:
    state = sanuki(("I2", "5", 5), ("I4", "438", 0), second_token="I4")  # track apart
    assert not must_buy_train(state, state.corporation("SR"))


def test_a_corporation_floated_during_an_operating_round_operates_from_the_next() -> None:
    """7.4, 14.2: IR floats in the middle of an operating round (as by the Dogo Railway
    exchange): it gets its home token and operates from the next operating round, not this."""
    state = floated(after_auction(3), "AR", {1: 6}, (0, 5), trains=(), cash=100)
    state = operating(state, "AR")  # AR operates in this round (of one)
    state = floated(state, "IR", {2: 5}, (0, 4), tokens_placed=0, has_operated=False)
    assert state.corporation("IR").floated
    state, events = play(state, Pass(1), Pass(1), Pass(1))  # AR: track, token, trains
    names = [type(event).__name__ for event in events]
    assert "OperatingRoundEnded" in names, names
    assert not any(getattr(event, "corporation", "") == "IR" for event in events), names
    assert state.corporation("IR").tokens_placed == 0
