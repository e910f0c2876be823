"""decide(state, command) -> events (an `Evolved`: the list of events with the state they lead
to), or raises Rejected. Pure: the same state and command always give the same events; nothing
is read from a clock or a random source.

A command yields one event, then everything that follows from it without anyone choosing (a
private sold to its only bidder, a stock round ending, privates paying, a phase change...),
each round module saying what comes next. `evolve` only bookkeeps.
"""

from __future__ import annotations

from collections.abc import Iterator

from kernel.rejection import Kind, Rejected
from services.rules.domain import abilities, auction, operating_round, setup, stock_round
from services.rules.domain.commands import (
    Command,
    CreateGame,
    EndGame,
    Pass,
    PlayerCommand,
    Undo,
)
from services.rules.domain.events import BankBroken, Event
from services.rules.domain.evolve import Evolved, evolve
from services.rules.domain.game_end import game_ended
from services.rules.domain.legal import LegalAction, PassOption
from services.rules.domain.state import GameState, OperatingRound, PrivateAuction, StockRound
from services.rules.domain.turn_steps import turn_steps


def decide(state: GameState, command: Command) -> Evolved:
    if isinstance(command, CreateGame):
        return with_consequences(state, setup.create_game(state, command))
    if isinstance(command, EndGame):
        if not state.players:
            raise Rejected("GAME_NOT_FOUND", "the game has not been created", Kind.NOT_FOUND)
        if state.result is not None:
            raise Rejected("GAME_OVER", "the game has ended")
        ended = game_ended(state, "ended")
        return Evolved([ended], state, evolve(state, ended))
    if isinstance(command, Undo):
        raise TypeError("Undo is decided on the log: services.rules.domain.undo.decide_undo")
    if abilities.is_out_of_turn(state, command):
        _check_seat(state, command)
        return with_consequences(state, [abilities.decide(state, command)])
    _check_turn(state, command)
    return with_consequences(state, _decide_in_round(state, command))


def _decide_in_round(state: GameState, command: PlayerCommand) -> list[Event]:
    decided: Event | list[Event]
    match state.round:
        case PrivateAuction() as current:
            decided = auction.decide(state, current, command)
        case StockRound() as current:
            decided = stock_round.decide(state, current, command)
        case OperatingRound() as current:
            decided = operating_round.decide(state, current, command)
        case _:
            raise Rejected("NO_ROUND", "no round is being played")
    return decided if isinstance(decided, list) else [decided]


def _check_turn(state: GameState, command: PlayerCommand) -> None:
    _check_seat(state, command)
    if command.seat not in state.acting_seats:
        raise Rejected(
            "NOT_YOUR_TURN",
            f"it is not seat {command.seat}'s turn",
            details={"seat": command.seat, "acting": ",".join(map(str, state.acting_seats))},
        )


def _check_seat(state: GameState, command: PlayerCommand) -> None:
    if not state.players:
        raise Rejected("GAME_NOT_FOUND", "the game has not been created", Kind.NOT_FOUND)
    if state.result is not None:
        raise Rejected("GAME_OVER", "the game has ended")
    if command.seat not in state.order:
        raise Rejected(
            "SEAT_NOT_IN_GAME",
            f"seat {command.seat} does not play in this game",
            Kind.PERMISSION_DENIED,
            {"seat": command.seat},
        )


def with_consequences(state: GameState, events: list[Event]) -> Evolved:
    """`events`, then every event that follows from them without a choice, with the state
    they lead to."""
    before = state
    events = list(events)
    for event in events:
        state = evolve(state, event)
    while events and (batch := next_events(state, events[-1]) or _only_pass(state)):
        for event in batch:
            events.append(event)
            state = evolve(state, event)
    return Evolved(events, before, state)


def _only_pass(state: GameState) -> list[Event]:
    """Whoever must act and can do nothing but pass, passes: a player without a choice is not
    kept waiting (and the site's engine, whose logs we replay, does the same)."""
    if state.result is not None or _waits(state):
        return []
    # The first option tells, when it is not a pass; else the second: the lays, tokens and
    # shares beyond them are never looked at.
    options = _each_in_turn(state)
    first = next(options, None)
    if isinstance(first, PassOption) and next(options, None) is None:
        return _decide_in_round(state, Pass(first.seat))
    return []


def _waits(state: GameState) -> bool:
    """The operating corporation is at a step that waits for its pass (`waits_for_pass`)."""
    round_ = state.round
    if not isinstance(round_, OperatingRound) or round_.ability is not None or round_.discarding:
        return False
    return turn_steps(state.rules).spec(round_.step).waits_for_pass


def next_events(state: GameState, last: Event) -> list[Event]:
    if state.result is not None:
        return []
    if state.bank <= 0 and not state.bank_broken:
        return [BankBroken()]  # rulebook 10.2, whatever paid the last of it
    if (share_change := stock_round.after_share_change(state, last)) is not None:
        return [share_change]
    match state.round:
        case PrivateAuction() as current:
            follow = auction.next_event(state, current)
            return [follow] if follow is not None else []
        case StockRound() as current:
            return stock_round.next_events(state, current, last)
        case OperatingRound() as current:
            return operating_round.next_events(state, current, last)
    return []


def legal_actions(state: GameState) -> list[LegalAction]:
    """What the acting player may do, then the abilities private owners may use now (those
    may come from any seat)."""
    if state.result is not None:
        return []
    return [*_each_in_turn(state), *abilities.options(state)]


def _each_in_turn(state: GameState) -> Iterator[LegalAction]:
    """What the acting player may do, in the order listed, found one at a time."""
    match state.round:
        case PrivateAuction() as current:
            return iter(auction.legal_actions(state, current))
        case StockRound() as current:
            return stock_round.each_legal_action(state, current)
        case OperatingRound() as current:
            return operating_round.each_legal_action(state, current)
    return iter(())
