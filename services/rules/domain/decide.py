"""decide(state, command) -> events, or raises Rejected. Pure: the same state and command
always give the same events; nothing is read from a clock or a random source."""

from __future__ import annotations

from services.rules.domain import auction, setup, stock_round
from services.rules.domain.commands import Command, CreateGame
from services.rules.domain.events import Event
from services.rules.domain.legal import LegalAction
from services.rules.domain.state import GameState, PrivateAuction, StockRound
from shikoku.rejection import Kind, Rejected


def decide(state: GameState, command: Command) -> list[Event]:
    if isinstance(command, CreateGame):
        return setup.create_game(state, command)
    if not state.players:
        raise Rejected("GAME_NOT_FOUND", "the game has not been created", Kind.NOT_FOUND)
    if command.seat not in state.order:
        raise Rejected(
            "SEAT_NOT_IN_GAME",
            f"seat {command.seat} does not play in this game",
            Kind.PERMISSION_DENIED,
            {"seat": command.seat},
        )
    if command.seat not in state.acting_seats:
        raise Rejected(
            "NOT_YOUR_TURN",
            f"it is not seat {command.seat}'s turn",
            details={"seat": command.seat, "acting": ",".join(map(str, state.acting_seats))},
        )
    match state.round:
        case PrivateAuction() as private_auction:
            return auction.decide(state, private_auction, command)
        case StockRound() as current:
            return stock_round.decide(state, current, command)
    raise Rejected(
        "ROUND_NOT_SUPPORTED",
        f"{type(state.round).__name__} commands are not supported yet",
        details={"round": type(state.round).__name__},
    )


def legal_actions(state: GameState) -> list[LegalAction]:
    match state.round:
        case PrivateAuction() as private_auction:
            return auction.legal_actions(state, private_auction)
        case StockRound() as current:
            return stock_round.legal_actions(state, current)
    return []
