"""The stock market (rulebook 3): spaces, zones and how stock tokens move.

A position is (row, column), row 0 at the top. Tokens on one space form a stack; a token that
enters a space goes beneath those already there (3.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cache

from services.rules.domain.title import load_raw_title

Position = tuple[int, int]


class Zone(Enum):
    NORMAL = "normal"
    YELLOW = "yellow"  # certificates do not count toward the certificate limit (3.1)
    ORANGE = "orange"  # as yellow, and no 60% holding limit


_ZONES = {"": Zone.NORMAL, "p": Zone.NORMAL, "y": Zone.YELLOW, "o": Zone.ORANGE}


@dataclass(frozen=True, slots=True)
class Space:
    price: int
    zone: Zone
    par: bool


@dataclass(frozen=True, slots=True)
class Market:
    rows: tuple[tuple[Space, ...], ...]

    def space(self, position: Position) -> Space:
        row, column = position
        return self.rows[row][column]

    def price(self, position: Position) -> int:
        return self.space(position).price

    def exists(self, position: Position) -> bool:
        row, column = position
        return 0 <= row < len(self.rows) and 0 <= column < len(self.rows[row])

    def par_positions(self) -> dict[int, Position]:
        """Par price -> its space."""
        return {
            space.price: (r, c)
            for r, row in enumerate(self.rows)
            for c, space in enumerate(row)
            if space.par
        }

    def up(self, position: Position) -> Position:
        """Sold out at the end of a stock round: one row up; the top row does not move."""
        row, column = position
        return (row - 1, column) if self.exists((row - 1, column)) else position

    def down(self, position: Position, shares: int = 1) -> Position:
        """Shares sold: one row down per share; the bottom of a column stops the token."""
        row, column = position
        for _ in range(shares):
            if self.exists((row + 1, column)):
                row += 1
        return (row, column)

    def right(self, position: Position) -> Position:
        """Dividends paid: one space right, or up at the end of a row; at the very top right
        corner it does not move."""
        row, column = position
        if self.exists((row, column + 1)):
            return (row, column + 1)
        return self.up(position)

    def left(self, position: Position) -> Position:
        """No dividends: one space left, or down at the start of a row; at the very bottom left
        corner it does not move."""
        row, column = position
        if column > 0:
            return (row, column - 1)
        return self.down(position)


def parse_market(rows: list[str]) -> Market:
    parsed = []
    for line in rows:
        spaces = []
        for cell in line.split():
            digits = cell.rstrip("pyo")
            suffix = cell[len(digits) :]
            if not digits.isdigit() or suffix not in _ZONES:
                raise ValueError(f"bad market space {cell!r} in row {line!r}")
            spaces.append(Space(int(digits), _ZONES[suffix], suffix == "p"))
        parsed.append(tuple(spaces))
    return Market(tuple(parsed))


@cache
def load_market(title: str = "1889") -> Market:
    return parse_market(load_raw_title(title)["market"]["rows"])
