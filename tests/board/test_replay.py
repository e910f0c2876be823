"""Every tile lay and station token of the real games is legal, and in the enumeration."""

from __future__ import annotations

import pytest

from services.rules.board import (
    LayOption,
    Rejection,
    TokenOption,
    check_lay,
    check_token,
    legal_lays,
    legal_tokens,
)
from tests.board.games import Move, game_files, replay

GAMES = game_files()
MOVES = [(path.stem, move) for path in GAMES for move in replay(path)]


def test_the_shared_games_are_found() -> None:
    assert {path.stem for path in GAMES} >= {"314", "hs_jmmljkbw_17502", "hs_lhglbbiz_17502"}
    lays = [move for _, move in MOVES if move.lay is not None]
    tokens = [move for _, move in MOVES if move.token is not None]
    assert len(lays) >= 40  # game 314 alone has 40 lays and 6 tokens
    assert len(tokens) >= 6


@pytest.mark.parametrize(
    ("game", "move"), MOVES, ids=[f"{game}-{move.action_id}" for game, move in MOVES]
)
def test_real_move_is_legal_and_enumerated(game: str, move: Move) -> None:
    if move.lay is not None:
        result = check_lay(move.position, move.situation, move.actor, move.lay)
        assert isinstance(result, LayOption), result
        listed = {
            (o.hex, o.tile, o.rotation): o
            for o in legal_lays(move.position, move.situation, move.actor)
        }
        assert listed[(move.lay.hex, move.lay.tile, move.lay.rotation)] == result
    else:
        assert move.token is not None
        hex_, city = move.token
        token = check_token(move.position, move.actor, hex_, city)
        assert isinstance(token, TokenOption), token
        assert token in legal_tokens(move.position, move.actor)
        assert not token.home
    if move.site_tokens_after is not None and move.actor.corporation is not None:
        # The tracker's home tokens agree with the site's token count.
        placed = len(move.position.token_cities(move.actor.corporation))
        assert placed + (move.token is not None) == move.site_tokens_after


def test_a_real_lay_shown_to_another_corporation_is_refused() -> None:
    # Action 22: KO's first lay (J3, beside its home K4) is nowhere near IR, which has not
    # started yet and so has no station token.
    move = next(m for game, m in MOVES if game == "314" and m.action_id == 22)
    assert move.lay is not None
    other = type(move.actor)("IR", 1000)
    result = check_lay(move.position, move.situation, other, move.lay)
    assert isinstance(result, Rejection)
    assert result.reason == "NOT_CONNECTED"


def test_costs_of_real_lays() -> None:
    by_id = {m.action_id: m for game, m in MOVES if game == "314"}
    costs = {}
    for action_id in (47, 84, 181, 351, 253):
        move = by_id[action_id]
        assert move.lay is not None
        result = check_lay(move.position, move.situation, move.actor, move.lay)
        assert isinstance(result, LayOption)
        costs[action_id] = result.cost
    # K6 river ¥80; Kotohira's printed ¥80, then the ¥80 printed on 438 and on 439; K6 again:
    # the river is covered by the tile, which has no cost.
    assert costs == {47: 80, 84: 80, 181: 80, 351: 80, 253: 0}
