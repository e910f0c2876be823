"""8.7.5: a corporation must own a train if it has a station token in a city connected to
another revenue centre; another city holding its own token counts as one."""

from __future__ import annotations

import dataclasses

from services.rules import board
from services.rules.domain.operating_round import must_buy_train
from services.rules.domain.state import GameState
from tests.rules.builders import after_auction, floated, operating, with_tiles


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
