"""Connectivity (rulebook 4.2) against hand-made boards and a brute-force reference."""

from __future__ import annotations

import random

import pytest

from services.rules.board import (
    Position,
    apply_lay,
    apply_token,
    connectivity,
    initial_position,
    load_title,
)
from services.rules.board.connectivity import reach_of
from services.rules.board.upgrades import fits
from tests.board import trails
from tests.board.build import board
from tests.board.games import FIXTURES, final_position, replay


def test_no_reversing_at_a_junction() -> None:
    # K6 carries 24: K4 (north, edge 3) to K8 (south, edge 0) and to L7 (edge 5). Edge 3 is
    # a junction: coming up from K8, a trail may not turn onto the branch to L7.
    position = board(
        lays=[("K6", "8", 3), ("K6", "24", 3), ("K8", "6", 1)],
        tokens=[("KO", "K4"), ("AR", "K8")],
    )
    ko = connectivity(position, "KO")
    ar = connectivity(position, "AR")
    assert {("K8", 0), ("L7", 0)} <= ko.stops
    assert ("K4", 0) in ar.stops
    assert ("L7", 0) not in ar.stops


def test_a_blocked_city_ends_a_trail_and_a_free_spot_opens_it() -> None:
    # K4 → J3 → Marugame (I2, SR's single spot) → Kotohira (I4).
    lays = [("J3", "9", 2), ("I2", "5", 5), ("I4", "438", 1)]
    blocked = board(lays=lays, tokens=[("KO", "K4"), ("SR", "I2")])
    assert ("I2", 0) in connectivity(blocked, "KO").stops
    assert ("I4", 0) not in connectivity(blocked, "KO").stops
    assert ("I4", 0) in connectivity(blocked, "SR").stops
    opened = board(lays=[*lays, ("I2", "15", 4)], tokens=[("KO", "K4"), ("SR", "I2")])
    assert ("I4", 0) in connectivity(opened, "KO").stops


def test_an_off_board_ends_a_trail() -> None:
    # Sakaide & Okayama (J1) touches both J3 and I2: KO may reach I2 only through it.
    position = board(lays=[("J3", "8", 3), ("I2", "6", 4)], tokens=[("KO", "K4")])
    reached = connectivity(position, "KO")
    assert ("J1", 0) in reached.stops
    assert ("I2", 0) not in reached.stops
    assert ("I2", 4) not in reached.entries


def test_entries_are_the_edges_where_new_track_connects() -> None:
    reached = connectivity(board(tokens=[("KO", "K4")]), "KO")
    # Takamatsu's printed track leaves by edges 0, 1, 2: into K6, J5 and J3.
    assert reached.entries == {("K6", 3), ("J5", 4), ("J3", 5)}
    assert reached.stops == {("K4", 0)}


def test_a_corporation_without_tokens_reaches_nothing() -> None:
    reached = connectivity(board(), "AR")
    assert reached.stops == frozenset()
    assert reached.entries == frozenset()


def test_real_positions_agree_with_brute_force() -> None:
    path = FIXTURES / "314.json"
    positions = [move.position for move in replay(path)] + [final_position(path)[0]]
    for position in positions[::4]:
        _agrees(position)


@pytest.mark.parametrize("seed", range(40))
def test_dense_random_boards_agree_with_brute_force(seed: int) -> None:
    """Boards of random tiles (rules ignored) are full of junctions and loops where a trail
    could only get somewhere by crossing a hex side back the way it came."""
    _agrees(_dense_board(seed))


def test_dense_boards_need_the_u_turn_check() -> None:
    """On these boards the plain search over directed paths (before the check of each
    target's walk) claims targets that only a U-turn through a loop reaches."""
    overclaimed = 0
    for seed in range(40):
        position = _dense_board(seed)
        for corporation in position.title.corporations:
            reach = reach_of(position, corporation)
            overclaimed += sum(not reach._legal(key) for key in reach._tree.first)
    assert overclaimed > 0


def _agrees(position: Position) -> None:
    for corporation in position.title.corporations:
        stops, entries = trails.reached(position, corporation)
        reached = connectivity(position, corporation)
        assert reached.stops == stops, corporation
        assert reached.entries == entries, corporation


def _dense_board(seed: int) -> Position:
    rng = random.Random(seed)
    title = load_title("1889")
    position = initial_position(title)
    for _ in range(3):
        for hex_ in sorted(title.hexes):
            old, rotation = position.content(hex_)
            options = [
                how
                for how in fits(title, old, rotation)
                if position.supply.get(how.tile.name, 0) > 0 and not how.tile.ability_only
            ]
            if options and rng.random() < 0.8:
                how = rng.choice(options)
                position = apply_lay(position, hex_, how.tile.name, how.rotation)
    cities = [
        (hex_, index)
        for hex_ in sorted(title.hexes)
        for index in position.content(hex_)[0].city_indices()
    ]
    for _ in range(rng.randint(2, 12)):
        (hex_, index), corporation = rng.choice(cities), rng.choice(sorted(title.corporations))
        spots = position.spots((hex_, index))
        if None in spots and corporation not in spots:
            position = apply_token(position, corporation, hex_, index)
    return position


def test_the_exhaustive_fallback_agrees() -> None:
    """`Reach` falls back to walking every trail should a shortest walk ever repeat anything
    but a hex side crossed both ways (which the argument in its module says cannot happen)."""
    checked = 0
    for seed in range(3):
        position = _dense_board(seed)
        for corporation in sorted(position.title.corporations):
            reach = reach_of(position, corporation)
            for key in reach._tree.first:
                assert reach._exhaustive(key) == reach._legal(key)
                checked += 1
    assert checked > 100
