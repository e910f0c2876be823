"""Snapshots' plain data gives back the very state: equal, and of the same types all the way
down (a StrEnum stored as its str compares equal to the member, yet `is` and `.value` fail)."""

from __future__ import annotations

import dataclasses
import enum
import random
from collections.abc import Mapping
from typing import Any

import msgpack

from services.rules.domain import events as ev
from services.rules.domain.commands import CreateGame
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState, OperatingRound, Step
from services.rules.shell.snapshot_encoding import from_plain, to_plain
from tools.bots import choose, command_for


def same_types(a: Any, b: Any, path: str = "state") -> None:
    if not (isinstance(a, Mapping) and isinstance(b, Mapping)):  # any mapping reads back frozen
        assert type(a) is type(b), f"{path}: {type(a).__name__} became {type(b).__name__}"
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        for field in (f for f in dataclasses.fields(a) if f.init):  # not the derived caches
            same_types(getattr(a, field.name), getattr(b, field.name), f"{path}.{field.name}")
    elif isinstance(a, Mapping):
        for key in a:
            same_types(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, tuple | list):
        for n, (x, y) in enumerate(zip(a, b, strict=True)):
            same_types(x, y, f"{path}[{n}]")


def stored(state: GameState) -> Any:
    """`state` written and read back as a snapshot is (msgpack, which knows no enums)."""
    return from_plain(msgpack.unpackb(msgpack.packb(to_plain(state)), strict_map_key=False))


def states_of_a_game(seed: int, most: int = 400) -> list[GameState]:
    """The states of a random 4-player game, from its creation, for `most` commands at most."""
    rng = random.Random(seed)
    players = tuple(ev.SeatedPlayer(s, f"p{s}") for s in (1, 2, 3, 4))
    states = [fold(decide(GameState(), CreateGame(players, seed=seed)))]
    while states[-1].result is None and len(states) < most:
        state = states[-1]
        command = command_for(choose(legal_actions(state), rng), rng, state)
        states.append(fold(decide(state, command), state))
    return states


def test_every_state_of_a_game_comes_back_as_it_was() -> None:
    states = states_of_a_game(11)
    operating = [s for s in states if isinstance(s.round, OperatingRound)]
    assert operating, "the game reached no operating round"
    for state in states[::7] + operating[:: max(1, len(operating) // 20)]:
        back = stored(state)
        assert back == state
        same_types(state, back)


def test_an_operating_step_is_still_its_enum() -> None:
    state = next(s for s in states_of_a_game(11) if isinstance(s.round, OperatingRound))
    assert isinstance(state.round, OperatingRound)
    back = stored(state)
    assert isinstance(back.round, OperatingRound)
    assert isinstance(back.round.step, Step) and isinstance(back.round.step, enum.Enum)
    assert back.round.step.value == state.round.step.value
