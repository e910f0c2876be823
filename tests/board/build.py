"""Hand-made positions for the tests: tiles and tokens put down without asking the rules."""

from __future__ import annotations

from collections.abc import Iterable

from services.rules.board import Position, apply_lay, apply_token, initial_position, load_title


def board(
    lays: Iterable[tuple[str, str, int]] = (),
    tokens: Iterable[tuple[str, str]] = (),
    *,
    beginner: bool = False,
) -> Position:
    """`lays` as (hex, tile, rotation), in order; `tokens` as (corporation, hex), each on the
    first city of the hex."""
    position = initial_position(load_title("1889"), beginner=beginner)
    for hex_, tile, rotation in lays:
        position = apply_lay(position, hex_, tile, rotation)
    for corporation, hex_ in tokens:
        position = apply_token(position, corporation, hex_)
    return position
