"""Random legal games: the enumerations and the checks always agree.

Each seeded walk lays random enumerated tiles and places random enumerated tokens for random
corporations, moving through the phases and handing the private companies around. At every
step every enumerated lay and token is accepted, random (hex, tile, rotation) and (hex, city)
outside the lists are refused, and now and then every combination is tried.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from services.rules.board import (
    Actor,
    Lay,
    LayOption,
    Position,
    Rejection,
    Situation,
    TokenOption,
    apply_lay,
    apply_token,
    check_lay,
    check_token,
    initial_position,
    legal_lays,
    legal_tokens,
    load_title,
)
from tests.scale import scaled

PHASES = ("2", "3", "4", "5", "6", "D")
BOARD_PRIVATES = ("TR", "MF", "ER", "SMR")
TITLE = load_title("1889")
#: Off the map, unknown and out-of-range values, mixed into the random probes.
ODD_HEXES = ("A2", "M7", "K3", "Z99")
ODD_TILES = ("0", "99", "X")
ROTATIONS = range(-1, 8)


@dataclass(frozen=True)
class Step:
    position: Position
    situation: Situation
    actor: Actor


def random_game(seed: int, steps: int) -> Iterator[Step]:
    rng = random.Random(seed)
    beginner = rng.random() < 0.25
    position = initial_position(TITLE, beginner=beginner)
    corporations = sorted(TITLE.corporations)
    started = rng.sample(corporations, rng.randint(2, len(corporations)))
    for corporation in started:
        home = TITLE.corporations[corporation]
        position = apply_token(position, corporation, home.home, home.home_city)
    phase = 0
    for _ in range(steps):
        if rng.random() < 0.12 and phase < len(PHASES) - 1:
            phase += 1
        situation = _random_privates(rng, PHASES[phase], started, beginner)
        corporation = rng.choice(started)
        actor = Actor(corporation, rng.choice((0, 40, 79, 80, 1000)))
        yield Step(position, situation, actor)
        lays = legal_lays(position, situation, Actor(corporation, 1000))
        if lays:
            lay = rng.choice(lays)
            position = apply_lay(position, lay.hex, lay.tile, lay.rotation)
        tokens = legal_tokens(position, Actor(corporation, 1000))
        if tokens and rng.random() < 0.3:
            token = rng.choice(tokens)
            position = apply_token(position, corporation, token.hex, token.city)


def _random_privates(
    rng: random.Random, phase: str, started: list[str], beginner: bool
) -> Situation:
    if PHASES.index(phase) >= PHASES.index("5"):
        return Situation(phase, beginner=beginner)
    with_players = set()
    with_corporations = {}
    for private in BOARD_PRIVATES:
        if rng.random() < 0.5:
            with_players.add(private)
        else:
            with_corporations[private] = rng.choice(started)
    return Situation(phase, frozenset(with_players), with_corporations, beginner)


def _agree(step: Step, rng: random.Random, exhaustive: bool) -> None:
    position, situation = step.position, step.situation
    actors = [step.actor, Actor(None, 0, ability="MF"), Actor(None, 0, ability="ER")]
    for actor in actors:
        exhaustive = exhaustive and actor is step.actor
        listed = {(o.hex, o.tile, o.rotation): o for o in legal_lays(position, situation, actor)}
        for (hex_, tile, rotation), option in listed.items():
            assert check_lay(position, situation, actor, Lay(hex_, tile, rotation)) == option
        hexes = [*TITLE.hexes, *ODD_HEXES]
        tiles = [*TITLE.tiles, *ODD_TILES]
        probes = (
            [Lay(h, t, r) for h in hexes for t in tiles for r in range(6)]
            if exhaustive
            else [
                Lay(rng.choice(hexes), rng.choice(tiles), rng.choice(ROTATIONS)) for _ in range(150)
            ]
        )
        for lay in probes:
            result = check_lay(position, situation, actor, lay)
            if (lay.hex, lay.tile, lay.rotation) in listed:
                assert isinstance(result, LayOption)
            else:
                assert isinstance(result, Rejection), lay
    tokens = {(t.hex, t.city): t for t in legal_tokens(position, step.actor)}
    for listed_token in tokens.values():
        checked = check_token(position, step.actor, listed_token.hex, listed_token.city)
        assert checked == listed_token
    for hex_ in [*TITLE.hexes, *ODD_HEXES]:
        for city in (-1, 0, 1):
            token = check_token(position, step.actor, hex_, city)
            if isinstance(token, TokenOption):
                assert tokens[(hex_, city)] == token
            else:
                assert (hex_, city) not in tokens


STEPS = 20


@pytest.mark.parametrize("seed", range(scaled(6)))
def test_enumeration_and_check_agree(seed: int) -> None:
    rng = random.Random(seed * 7919)
    for number, step in enumerate(random_game(seed, steps=STEPS)):
        _agree(step, rng, exhaustive=number == STEPS - 1)


def test_random_games_build_a_board() -> None:
    """The walks above reach green and brown tiles, upgrades and extra tokens."""
    steps = list(random_game(3, steps=40))
    final = steps[-1].position
    colours = {TITLE.tiles[placed.tile].colour for placed in final.tiles.values()}
    assert colours >= {"yellow", "green"}
    assert sum(len(final.token_cities(c)) for c in TITLE.corporations) > len(
        [c for c in TITLE.corporations if steps[0].position.token_cities(c)]
    )
