"""The operating round's use of the board model: what the operating corporation may build,
whether it has a route, and the board's refusals as our rejections."""

from __future__ import annotations

from collections.abc import Iterator

from kernel.rejection import Kind, Rejected
from services.rules import board
from services.rules.domain.state import Corporation, GameState

# Refusals about the request itself rather than the game position.
# The board's refusals that mean a malformed command, and the field at fault.
_MALFORMED = {
    "HEX_NOT_ON_MAP": "hex",
    "UNKNOWN_TILE": "tile",
    "BAD_ROTATION": "rotation",
    "UNKNOWN_CORPORATION": "corporation",
    "NO_SUCH_CITY": "city",
}


def position(state: GameState) -> board.Position:
    assert state.board is not None, "a game always has a board"
    return state.board


def situation(state: GameState) -> board.Situation:
    """Who holds the privates, for the hexes they block (8.3.1), and the phase's colours."""
    held_by_corporations = {
        company: corporation.id
        for corporation in state.corporations
        for company in corporation.privates
    }
    with_players = frozenset(
        company.id
        for company in state.title_model.privates
        if company.id not in state.closed_privates and company.id not in held_by_corporations
    )
    return board.Situation(
        phase=state.phase,
        privates_with_players=with_players,
        privates_with_corporations=held_by_corporations,
        beginner=state.beginner_game,
        upgrade_must_use_new_track_or_change_city=(
            state.rules.upgrade_must_use_new_track_or_change_city
        ),
    )


def actor(corporation: Corporation, ability: str | None = None) -> board.Actor:
    return board.Actor(corporation=corporation.id, cash=corporation.cash, ability=ability)


def lays(
    state: GameState, corporation: Corporation, ability: str | None = None
) -> Iterator[board.LayOption]:
    """The legal lays in the order they are listed, found one at a time."""
    return board.each_legal_lay(position(state), situation(state), actor(corporation, ability))


def private_lays(state: GameState, company: str) -> Iterator[board.LayOption]:
    """What a player may lay through their private company's ability (no corporation)."""
    player_actor = board.Actor(corporation=None, cash=0, ability=company)
    return board.each_legal_lay(position(state), situation(state), player_actor)


def check_lay(
    state: GameState,
    corporation: Corporation,
    hex_: str,
    tile: str,
    rotation: int,
    ability: str | None = None,
) -> board.LayOption:
    found = board.check_lay(
        position(state),
        situation(state),
        actor(corporation, ability),
        board.Lay(hex_, tile, rotation),
    )
    if isinstance(found, board.Rejection):
        raise as_rejected(found)
    return found


def tokens(state: GameState, corporation: Corporation) -> Iterator[board.TokenOption]:
    """The legal placements in the order they are listed, found one at a time."""
    return board.each_legal_token(position(state), actor(corporation))


def check_token(
    state: GameState, corporation: Corporation, hex_: str, city: int
) -> board.TokenOption:
    found = board.check_token(position(state), actor(corporation), hex_, city)
    if isinstance(found, board.Rejection):
        raise as_rejected(found)
    return found


def has_route(state: GameState, corporation: Corporation) -> bool:
    """8.7.5: a station token in a city connected to another revenue centre, which may be
    another city holding the corporation's own token. Whether a legal route of two stops
    exists, whatever the stops earn (a printed city earns nothing yet), as the route engine
    has it: a connection (its track from one centre to the next) leaves a city with the
    token. Every route starts with one of those, and each is a legal route of two stops."""
    return any(board.next_centres(position(state), corporation.id).values())


def as_rejected(rejection: board.Rejection) -> Rejected:
    details: dict[str, object] = dict(rejection.details)
    field = _MALFORMED.get(rejection.reason)
    if field is None:
        return Rejected(rejection.reason, rejection.message, details=details)
    return Rejected(
        rejection.reason,
        rejection.message,
        Kind.INVALID_ARGUMENT,
        {"field": field, **details},
    )
