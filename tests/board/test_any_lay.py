"""The lays found one at a time (`each_legal_lay`, `has_legal_lay`) are those `check_lay`
accepts, in the listed order: the hexes it skips unseen are hexes where it refuses every lay."""

from __future__ import annotations

import random

import pytest

from services.rules.board import (
    Actor,
    Lay,
    LayOption,
    Position,
    Situation,
    TokenOption,
    check_lay,
    check_token,
    each_legal_lay,
    each_legal_token,
    has_legal_lay,
    legal_lays,
    legal_tokens,
)
from services.rules.board.upgrades import fits, tile_order
from tests.board.test_enumeration import TITLE, random_game
from tests.scale import scaled


def _accepted_anywhere(position: Position, situation: Situation, actor: Actor) -> list[LayOption]:
    """Every lay of every fitting tile on every hex that `check_lay` accepts (no shortcut)."""
    found = []
    for hex_ in sorted(TITLE.hexes):
        old, rotation = position.content(hex_)
        for how in fits(TITLE, old, rotation):
            result = check_lay(position, situation, actor, Lay(hex_, how.tile.name, how.rotation))
            if isinstance(result, LayOption):
                found.append(result)
    return sorted(found, key=lambda o: (o.hex, tile_order(o.tile), o.rotation))


@pytest.mark.parametrize("seed", range(scaled(4)))
def test_lays_found_one_at_a_time_are_every_accepted_lay_in_order(seed: int) -> None:
    rng = random.Random(seed)
    for step in random_game(seed + 100, steps=25):
        actors = [
            step.actor,
            Actor(step.actor.corporation, rng.choice((0, 40, 80, 120))),
            Actor(None, 0, ability="MF"),
            Actor(None, 0, ability="ER"),
            Actor(step.actor.corporation, 1000, ability="ER"),
        ]
        for actor in actors:
            expected = _accepted_anywhere(step.position, step.situation, actor)
            assert list(legal_lays(step.position, step.situation, actor)) == expected
            assert list(each_legal_lay(step.position, step.situation, actor)) == expected
            assert has_legal_lay(step.position, step.situation, actor) == bool(expected)


@pytest.mark.parametrize("seed", range(scaled(3)))
def test_tokens_found_one_at_a_time_are_every_accepted_placement(seed: int) -> None:
    for step in random_game(seed + 200, steps=25):
        for cash in (0, 39, 40, 100, 1000):
            actor = Actor(step.actor.corporation, cash)
            expected = [
                result
                for hex_ in sorted(TITLE.hexes)
                for city in step.position.content(hex_)[0].city_indices()
                if isinstance(result := check_token(step.position, actor, hex_, city), TokenOption)
            ]
            assert list(each_legal_token(step.position, actor)) == expected
            assert list(legal_tokens(step.position, actor)) == expected
