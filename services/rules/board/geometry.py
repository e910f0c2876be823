"""Coordinates and edges of a map of flat-topped hexes (facts sheet, "Hex grid").

A coordinate is column letters then a row number (`K8`), in doubled form: stepping to a
neighbour changes the row by 1 or 2. Edges are numbered 0-5 clockwise from south. A tile laid
with rotation `r` shows its drawn edge `e` on board edge `(e + r) mod 6`, the convention of the
18xx.games logs, so their `hex` and `rotation` values are used unchanged.
"""

from __future__ import annotations

import re

EDGES = range(6)

#: (column step, row step) across each edge: south, south-west, north-west, north, north-east,
#: south-east.
_STEPS = ((0, 2), (-1, 1), (-1, -1), (0, -2), (1, -1), (1, 1))
_COORDINATE = re.compile(r"([A-Z]+)([1-9][0-9]*)")


def parse(coordinate: str) -> tuple[int, int] | None:
    """(column index from 0, row) of a coordinate, or None when it is not one."""
    match = _COORDINATE.fullmatch(coordinate)
    if match is None:
        return None
    column = 0
    for letter in match.group(1):
        column = column * 26 + ord(letter) - ord("A") + 1
    return column - 1, int(match.group(2))


def name(column: int, row: int) -> str:
    letters = ""
    column += 1
    while column:
        column, rest = divmod(column - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return f"{letters}{row}"


def neighbour(coordinate: str, edge: int) -> str | None:
    """The coordinate across `edge`, or None when that would be outside any map (row or column
    below the first)."""
    parsed = parse(coordinate)
    if parsed is None:
        raise ValueError(f"not a coordinate: {coordinate!r}")
    column, row = parsed
    step_column, step_row = _STEPS[edge]
    column, row = column + step_column, row + step_row
    if column < 0 or row < 1:
        return None
    return name(column, row)


def rotate(edge: int, rotation: int) -> int:
    return (edge + rotation) % 6


def opposite(edge: int) -> int:
    return (edge + 3) % 6
