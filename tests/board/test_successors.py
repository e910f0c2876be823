"""Applying the same lay or token to a position again gives the same position object (so what
is derived from it is derived once), equal to one built afresh; station tokens keep the track
derived from the tiles."""

from __future__ import annotations

from dataclasses import fields

import pytest

from services.rules.board import (
    Actor,
    Position,
    Situation,
    apply_lay,
    apply_token,
    legal_lays,
    track,
)
from services.rules.board.track import Network, network_of
from tests.board.test_enumeration import TITLE, random_game


def test_the_same_change_gives_the_same_position() -> None:
    for step in random_game(7, steps=15):
        corporation = step.actor.corporation
        assert corporation is not None
        lays = legal_lays(step.position, Situation("3"), Actor(corporation, 1000))
        if len(lays) < 2:
            continue
        first, second = lays[0], lays[1]
        after = apply_lay(step.position, first.hex, first.tile, first.rotation)
        assert apply_lay(step.position, first.hex, first.tile, first.rotation) is after
        other = apply_lay(step.position, second.hex, second.tile, second.rotation)
        assert other != after
        again = apply_lay(step.position, first.hex, first.tile, first.rotation)
        assert again is not after  # only the last change is remembered
        assert again == after
        assert again.tiles == {**step.position.tiles, **{first.hex: again.tiles[first.hex]}}


def test_a_token_keeps_the_track() -> None:
    position = next(iter(random_game(8, steps=1))).position
    network = network_of(position)
    unplaced = [c for c in TITLE.corporations.values() if not position.token_cities(c.id)]
    assert unplaced
    corporation = unplaced[0]
    after = apply_token(position, corporation.id, corporation.home, corporation.home_city)
    assert apply_token(position, corporation.id, corporation.home, corporation.home_city) is after
    assert network_of(after) is network
    assert after.token_cities(corporation.id) == ((corporation.home, corporation.home_city),)
    assert not position.token_cities(corporation.id)


def _fields(network: Network) -> tuple[object, ...]:
    return tuple(getattr(network, f.name) for f in fields(network))


def test_a_lays_network_made_from_the_one_before_is_the_one_built_afresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    relaid = 0
    made_from = track._relaid

    def counted(before: Network, position: Position, hex_: str) -> Network:
        nonlocal relaid
        relaid += 1
        return made_from(before, position, hex_)

    monkeypatch.setattr(track, "_relaid", counted)
    positions = 0
    for seed in (3, 11, 19):
        for step in random_game(seed, steps=40):
            # Each position's network is asked for, so the next lay's is made from it.
            assert _fields(network_of(step.position)) == _fields(track._build(step.position))
            positions += 1
    assert relaid > positions // 2
