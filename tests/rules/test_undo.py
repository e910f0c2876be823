"""Undo: an Undone event revokes the last command's events; the log stays append-only."""

from __future__ import annotations

import pytest

from kernel.rejection import Rejected
from services.rules.domain import events as ev
from services.rules.domain.commands import (
    BuyPrivate,
    Command,
    CreateGame,
    Pass,
    PlaceBid,
    Undo,
    command_to_plain,
)
from services.rules.domain.decide import decide
from services.rules.domain.undo import Logged, decide_undo, state_of

PLAYERS = tuple(ev.SeatedPlayer(s, f"p{s}") for s in (1, 2, 3))


def logged_game(*commands: Command, undo: bool = True) -> list[Logged]:
    log: list[Logged] = []
    create = CreateGame(PLAYERS, seed=0, fixed_seat_order=True, undo_allowed=undo)
    for command in (create, *commands):
        state = state_of(log)
        if isinstance(command, Undo):
            events = decide_undo(state, log, command)
        else:
            events = decide(state, command)
        for index, event in enumerate(events):
            cause = command_to_plain(command) if index == 0 else None
            log.append(Logged(len(log) + 1, event, cause))
    return log


def test_undo_takes_back_the_last_action_and_its_consequences() -> None:
    before = state_of(logged_game(PlaceBid(1, "MF", 35)))
    log = logged_game(PlaceBid(1, "MF", 35), BuyPrivate(2, "TR"), Undo(2))
    assert isinstance(log[-1].event, ev.Undone)
    assert state_of(log) == before
    # Then the game goes on from there.
    after = state_of(logged_game(PlaceBid(1, "MF", 35), BuyPrivate(2, "TR"), Undo(2), Pass(2)))
    assert after.acting_seats == (3,)


def test_undo_twice_takes_back_two_actions() -> None:
    start = state_of(logged_game())
    log = logged_game(Pass(1), Pass(2), Undo(2), Undo(1))
    assert state_of(log) == start


@pytest.mark.parametrize(
    ("commands", "reason"),
    [
        ((Pass(1), Undo(2)), "NOT_YOUR_ACTION"),
        ((Undo(1),), "NOT_YOUR_ACTION"),  # the game's creation cannot be undone
    ],
)
def test_only_the_last_actor_may_undo(commands: tuple[Command, ...], reason: str) -> None:
    with pytest.raises(Rejected) as rejected:
        logged_game(*commands)
    assert rejected.value.reason == reason


def test_tables_without_undo_refuse_it() -> None:
    with pytest.raises(Rejected) as rejected:
        logged_game(Pass(1), Undo(1), undo=False)
    assert rejected.value.reason == "UNDO_NOT_ALLOWED"
