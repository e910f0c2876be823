"""Rulebook 3.3 and the facts sheet's stock market."""

import pytest

from services.rules.board import load_title
from services.rules.board.title import Zone

MARKET = load_title("1889").market


def test_par_spaces_are_the_printed_ones() -> None:
    assert MARKET.par_positions() == {
        100: (0, 3),
        90: (1, 3),
        80: (2, 3),
        75: (3, 3),
        70: (4, 3),
        65: (5, 3),
    }


def test_zones() -> None:
    assert MARKET.space((5, 0)).zone is Zone.YELLOW
    assert MARKET.space((8, 0)).zone is Zone.ORANGE
    assert MARKET.space((8, 1)).zone is Zone.YELLOW
    assert MARKET.space((4, 0)).zone is Zone.NORMAL


@pytest.mark.parametrize(
    ("start", "move", "end"),
    [
        ((2, 3), "right", (2, 4)),
        ((2, 11), "right", (1, 11)),  # end of row: up
        ((0, 14), "right", (0, 14)),  # 350: no move
        ((2, 3), "left", (2, 2)),
        ((2, 0), "left", (3, 0)),  # start of row: down
        ((10, 0), "left", (10, 0)),  # 10: no move
        ((2, 3), "up", (1, 3)),
        ((0, 3), "up", (0, 3)),  # top of column
        ((3, 9), "up", (2, 9)),
        ((2, 11), "down", (2, 11)),  # 200 has nothing below it
        ((4, 4), "down", (5, 4)),
    ],
)
def test_single_moves(start: tuple[int, int], move: str, end: tuple[int, int]) -> None:
    assert getattr(MARKET, move)(start) == end


def test_selling_several_shares_drops_a_row_each_until_the_bottom() -> None:
    assert MARKET.down((1, 3), 3) == (4, 3)
    assert MARKET.down((5, 6), 4) == (5, 6)  # 80 in row 5 is the bottom of its column
    assert MARKET.down((6, 4), 2) == (7, 4)
