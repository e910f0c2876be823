"""Which of the site's departures from the rulebook a game played under another profile relied
on: the switches (docs/rules-notes.md, "Rules profiles") that would have changed its course.

A game played under the rulebook exports like any other, but the site plays by the switches of
the `18xx.games` profile. Each switch is tried alone on the state before each move: where it
refuses the move, or makes it cause other events whose outcome the game does not reach by
itself within the next moves (a step skipped sooner, which the game then passes, is no
departure; a token placed in a step the site would have skipped is), the site will read the
log otherwise from there on. The set-up (CreateGame) is tried the same way: a switch that
deals the beginner game otherwise shows at the first move.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kernel.rejection import Rejected
from services.rules.board.title import SITE_PROFILE, SWITCHES
from services.rules.domain import commands as cmd
from services.rules.domain import events as ev
from services.rules.domain.decide import decide
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState


class Move(Protocol):
    """A command and the events it caused (the exporter's Batch)."""

    @property
    def command(self) -> cmd.Command: ...

    @property
    def events(self) -> Sequence[ev.Event]: ...


#: How many moves ahead a switch's different outcome may be reached by the game itself.
LOOKAHEAD = 30


@dataclass(frozen=True, slots=True)
class Deviation:
    switch: str
    first_move: int  # index into the game's moves (batches) where it first showed
    moves: int  # how many of the game's moves it changed


def switches_off(state: GameState, against: str = SITE_PROFILE) -> list[str]:
    """The switches `against` turns on that the game's own profile leaves off."""
    ours, theirs = state.rules, state.title_model.profile(against)
    return [s for s in SWITCHES if getattr(theirs, s) and not getattr(ours, s)]


def deviations_used(batches: Sequence[Move]) -> list[Deviation]:
    """The departures the game's moves relied on, in the order they first showed."""
    states = [GameState()]
    for batch in batches:
        states.append(fold(batch.events, states[-1]))
    first: dict[str, int] = {}
    count: dict[str, int] = {}
    for index, batch in enumerate(batches):
        before = states[index]
        if isinstance(batch.command, cmd.CreateGame):
            for switch in _changes_the_set_up(batch):
                first.setdefault(switch, index)
                count[switch] = count.get(switch, 0) + 1
            continue
        if isinstance(batch.command, cmd.EndGame) or not before.players:
            continue
        for switch in switches_off(before):
            ahead = slice(index + 1, index + 1 + LOOKAHEAD)
            if _changes_course(before, batch, switch, batches[ahead], states[ahead]):
                first.setdefault(switch, index)
                count[switch] = count.get(switch, 0) + 1
    return sorted((Deviation(s, i, count[s]) for s, i in first.items()), key=lambda d: d.first_move)


def _changes_the_set_up(batch: Move, turned_off: bool = False) -> list[str]:
    """The switches the game's profile leaves off that would have set the game up otherwise
    (the beginner game's deal, its tiles): the site reads the log otherwise from its first
    action. `turned_off`: instead, those it turns on whose absence would have."""
    created = batch.command
    assert isinstance(created, cmd.CreateGame)
    state = fold(batch.events)
    changed = []
    sign, switches = ("-", switches_on(state)) if turned_off else ("+", switches_off(state))
    for switch in switches:
        trial = dataclasses.replace(created, rules_profile=f"{created.rules_profile}{sign}{switch}")
        theirs = fold(decide(GameState(), trial))
        if dataclasses.replace(theirs, rules_profile=state.rules_profile) != state:
            changed.append(switch)
    return changed


def switches_exercised(batches: Sequence[Move]) -> set[str]:
    """The site's switches whose point came up in the game, whatever its profile: a switch the
    profile leaves off, where turning it on would have changed the game's course (as
    `deviations_used` finds); one the profile turns on, where turning it off would have. The
    set-up counts too: the beginner game's deal and tiles are set there."""
    states = [GameState()]
    for batch in batches:
        states.append(fold(batch.events, states[-1]))
    exercised: set[str] = set()
    for index, batch in enumerate(batches):
        before = states[index]
        if isinstance(batch.command, cmd.CreateGame):
            exercised |= {*_changes_the_set_up(batch), *_changes_the_set_up(batch, True)}
            continue
        if isinstance(batch.command, cmd.EndGame) or not before.players:
            continue
        ahead = slice(index + 1, index + 1 + LOOKAHEAD)
        for switch in switches_off(before):
            if switch not in exercised and _changes_course(
                before, batch, switch, batches[ahead], states[ahead]
            ):
                exercised.add(switch)
        for switch in switches_on(before):
            if switch in exercised:
                continue
            without = dataclasses.replace(before, rules_profile=f"{before.rules_profile}-{switch}")
            if _leaves_course(before, without, batch, batches[ahead], states[ahead]):
                exercised.add(switch)
    return exercised


def switches_on(state: GameState) -> list[str]:
    """The switches the game's own profile turns on."""
    return [s for s in SWITCHES if getattr(state.rules, s)]


def _changes_course(
    state: GameState, batch: Move, switch: str, later: Sequence[Move], states: Sequence[GameState]
) -> bool:
    """Whether `switch` alone refuses the move, or leads where the game's own next moves
    (`later`, with the states `states` after this move and each of them) never join it again."""
    trial = dataclasses.replace(state, rules_profile=f"{state.rules_profile}+{switch}")
    return _leaves_course(state, trial, batch, later, states)


def _leaves_course(
    state: GameState,
    trial: GameState,
    batch: Move,
    later: Sequence[Move],
    states: Sequence[GameState],
) -> bool:
    """Whether the move under the rules of `trial` (the state before it, played by other
    rules) is refused, or leads where the game's own next moves never join it again. The
    trial game follows those moves too; a pass it has no use for is left out."""
    try:
        theirs = list(decide(trial, batch.command))
    except Rejected:
        return True
    if theirs == list(batch.events):
        return False
    fork = fold(theirs, trial)
    for index, move in enumerate((*later, None)):
        reached = dataclasses.replace(fork, rules_profile=state.rules_profile)
        if any(reached == ours for ours in states[index:]):
            return False
        if move is None:
            return True
        try:
            fork = fold(decide(fork, move.command), fork)
        except Rejected:
            if not isinstance(move.command, cmd.Pass):
                return True
    return True
