"""The legal-action list is exact: during random games, every command near a listed one
(other prices, counts, seats, places, names) is accepted if and only if some listed option
allows it."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from kernel.rejection import Rejected
from services.rules.domain import commands as cmd
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.evolve import fold
from services.rules.domain.legal import allows
from services.rules.domain.state import GameState
from tests.rules.helpers import new_game
from tests.rules.test_random_games import SCALE
from tools.bots import choose, command_for

NAMES = ("TR", "MF", "ER", "SMR", "DR", "SIR", "UTF", "AR", "IR", "SR", "KO", "KU", "UR", "XX")
HEXES = ("J3", "K8", "I2", "G10", "C4", "K4", "F9", "Z1")


def _with(command: Any, **changes: Any) -> cmd.PlayerCommand:
    changed: cmd.PlayerCommand = dataclasses.replace(command, **changes)
    return changed


def neighbours(
    command: cmd.PlayerCommand, seats: tuple[int, ...], rng: random.Random
) -> list[cmd.PlayerCommand]:
    """The command itself and variations of it, legal or not."""
    variants = [command, _with(command, seat=rng.choice(seats))]
    for field in dataclasses.fields(command):
        value = getattr(command, field.name)
        if field.name == "seat":
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            for delta in (-5, -1, 1, 5):
                variants.append(_with(command, **{field.name: value + delta}))
        elif isinstance(value, str) and field.name in {"company", "corporation"}:
            variants.append(_with(command, **{field.name: rng.choice(NAMES)}))
        elif isinstance(value, str) and field.name == "hex":
            variants.append(_with(command, hex=rng.choice(HEXES)))
        elif isinstance(value, str) and field.name in {"source", "train", "exchange"}:
            choices = ("depot", "open_market", "2", "3", "D", "AR", "")
            variants.append(_with(command, **{field.name: rng.choice(choices)}))
    return variants


def accepted(state: GameState, command: cmd.PlayerCommand) -> bool:
    try:
        decide(state, command)
    except Rejected:
        return False
    return True


@pytest.mark.parametrize("players", [3, 4])
def test_a_command_is_accepted_exactly_when_listed(players: int) -> None:
    rng = random.Random(players)
    checked = 0
    for seed in range(max(1, round(2 * SCALE))):
        state = new_game(players, seed=seed, fixed=False)
        seats = state.order
        for _ in range(700):
            if state.result is not None:
                break
            options = legal_actions(state)
            sample = rng.sample(options, min(len(options), 4))
            for option in sample:
                for command in neighbours(command_for(option, rng, state), seats, rng):
                    listed = any(allows(o, command) for o in options)
                    assert accepted(state, command) == listed, (command, state.round)
                    checked += 1
            state = fold(decide(state, command_for(choose(options, rng), rng, state)), state)
    assert checked > 2000
