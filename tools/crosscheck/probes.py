"""Probes: each of the site's switches tried on the site's engine where a game met it.

Most of the `18xx.games` profile's switches narrow or reorder what is legal: an upgrade the
site's walk does not reach, the port tile after the corporation has acted, a second sale of a
corporation in a forced train purchase, another bidder first in a closed auction, the beginner
game's privates' abilities. A game under that profile meets such a switch wherever the
rulebook would list a move there that the switch takes away; the bots rarely choose it, since
it is not listed. So at the first such position of each switch in a game, the move the rulebook
allows (the first listed) is played there: the game's moves up to that position, then that one,
exported under the profile with the switch turned off, for the site's engine to replay. It
must refuse that move, as ours does under its profile; a probe it accepts is a disagreement.

`find` is pure (the game's moves in, the probes out); the site's replay is the harness's.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass

from kernel.rejection import Rejected
from services.rules.board.title import SWITCHES
from services.rules.domain import commands as cmd
from services.rules.domain import events as ev
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.evolve import fold
from services.rules.domain.legal import LegalAction
from services.rules.domain.state import GameState
from tools.bots import command_for
from tools.sitelog.deviations import Move, switches_on
from tools.sitelog.exporter import Batch


@dataclass(frozen=True, slots=True)
class Probe:
    """The move the rulebook allows where `switch` refuses it: after the game's first `move`
    moves (its batches), under the game's profile with `switch` turned off."""

    switch: str
    move: int
    command: cmd.PlayerCommand
    events: tuple[ev.Event, ...]


def without(state: GameState, switches: Sequence[str]) -> GameState:
    """The state under its own profile with `switches` turned off."""
    name = state.rules_profile + "".join(f"-{switch}" for switch in switches)
    return dataclasses.replace(state, rules_profile=name)


def find(moves: Sequence[Move]) -> list[Probe]:
    """The first position of each switch the game's profile turns on where turning it off
    would list a move the profile refuses, with that move; in the order they came."""
    found: list[Probe] = []
    state = fold(moves[0].events) if moves else GameState()
    pending = [s for s in switches_on(state) if s in SWITCHES]
    for index in range(1, len(moves) + 1):
        if not pending or state.result is not None:
            break
        listed = set(legal_actions(state))
        if set(legal_actions(without(state, pending))) - listed:
            for switch in list(pending):
                probe = _probe(state, listed, switch, index)
                if probe is not None:
                    found.append(probe)
                    pending.remove(switch)
        if index < len(moves):
            state = fold(moves[index].events, state)
    return found


def _probe(state: GameState, listed: set[LegalAction], switch: str, move: int) -> Probe | None:
    relaxed = without(state, [switch])
    for option in legal_actions(relaxed):
        if option in listed:
            continue
        command = command_for(option, random.Random(move), relaxed)
        try:
            decide(state, command)
        except Rejected:
            try:
                events = tuple(decide(relaxed, command))
            except Rejected:
                continue
            return Probe(switch, move, command, events)
    return None


def probe_batches(moves: Sequence[Move], probe: Probe) -> list[Batch] | None:
    """The game's first moves played again under the profile without the probe's switch, then
    the probe's move; None when those moves do not play the same way without it."""
    created = moves[0].command
    assert isinstance(created, cmd.CreateGame)
    relaxed = dataclasses.replace(created, rules_profile=f"{created.rules_profile}-{probe.switch}")
    batches = [Batch(relaxed, tuple(decide(GameState(), relaxed)))]
    state = fold(batches[0].events)
    for move in moves[1 : probe.move]:
        try:
            events = tuple(decide(state, move.command))
        except Rejected:
            return None
        if list(events) != list(move.events):
            return None
        batches.append(Batch(move.command, events))
        state = fold(events, state)
    return [*batches, Batch(probe.command, probe.events)]
