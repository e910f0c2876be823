"""Private companies' abilities that their owners use outside the turn order (rulebook 15):
laying the MF's port tile and exchanging the DR for an IR share.

The MF's tile may go down at any time in a stock round, and in an operating round except during
the turn of a corporation another player presides (under the `port_tile_at_track_step_or_turn_start`
switch, as on the site: only at the track step of a corporation the owner presides, or before
the operating corporation, whoever presides it, has done anything in its turn). The DR may be
exchanged at any time in a stock or operating round (the site's engine allows the same).
Neither passes anyone's turn. Under `beginner_privates_without_abilities` a beginner game has
neither, as on the site.
"""

from __future__ import annotations

from kernel.rejection import Rejected, quoted
from services.rules import board
from services.rules.board.title import Zone
from services.rules.domain import events as ev
from services.rules.domain import on_the_board
from services.rules.domain.commands import ExchangePrivate, LayPrivateTile, PlayerCommand
from services.rules.domain.legal import ExchangeOption, LegalAction, PrivateTileOption
from services.rules.domain.state import GameState, OperatingRound, Step, StockRound
from services.rules.domain.stock_round import (
    HOLDING_LIMIT,
    certificate_limit,
    certificates,
)


def is_out_of_turn(state: GameState, command: PlayerCommand) -> bool:
    """Whether the command is an ability used outside the turn order (not the ER's lay, which
    its sale offers within the buying corporation's turn)."""
    if isinstance(command, ExchangePrivate):
        return True
    if isinstance(command, LayPrivateTile):
        round_ = state.round
        window = round_.ability if isinstance(round_, OperatingRound) else None
        return window != (command.company, command.seat)
    return False


def options(state: GameState) -> list[LegalAction]:
    if state.privates_without_abilities:
        return []  # the site's beginner game strips every private of its abilities
    found: list[LegalAction] = []
    for company, seat in sorted(state.privates_owned.items()):
        found += _tile_options(state, company, seat)
        found += _exchange_options(state, company, seat)
    return found


def _may_lay_now(state: GameState, seat: int) -> bool:
    match state.round:
        case StockRound():
            return True
        case OperatingRound(current=current, discarding=discarding, ability=ability) as round_:
            if discarding or ability is not None:
                return False
            if not current:
                return True
            presides = state.corporation(current).president == seat
            if state.rules.port_tile_at_track_step_or_turn_start:
                return (presides and round_.step is Step.TRACK) or not round_.corporation_acted
            return presides
    return False


def _tile_options(state: GameState, company: str, seat: int) -> list[PrivateTileOption]:
    ability = state.title_model.lay_abilities.get(company)
    if (
        ability is None
        or ability.owner is not board.title.Owner.PLAYER
        or company in state.used_abilities
        or not _may_lay_now(state, seat)
    ):
        return []
    return [
        PrivateTileOption(company, o.hex, o.tile, o.rotation, seat)
        for o in on_the_board.private_lays(state, company)
    ]


def _exchange_options(state: GameState, company: str, seat: int) -> list[ExchangeOption]:
    target = state.title_model.private(company).exchange_for
    if not target or not isinstance(state.round, StockRound | OperatingRound):
        return []
    corporation = state.corporation(target)
    player = state.player(seat)
    zone = (
        state.title_model.market.space(corporation.position).zone
        if corporation.position
        else Zone.NORMAL
    )
    holding_ok = player.shares_of(target) < HOLDING_LIMIT or zone is Zone.ORANGE
    # The private's certificate goes as the share comes: the count does not grow.
    if not corporation.started or corporation.initial_offering == 0 or not holding_ok:
        return []
    if certificates(state, player) > certificate_limit(state):
        return []
    return [ExchangeOption(company, target, seat)]


def decide(state: GameState, command: PlayerCommand) -> ev.Event:
    for option in options(state):
        match option, command:
            case (
                PrivateTileOption(company=c, hex=h, tile=t, rotation=r, seat=s),
                LayPrivateTile(seat=seat, company=company, hex=hex_, tile=tile, rotation=rotation),
            ) if (c, h, t, r, s) == (company, hex_, tile, rotation, seat):
                return ev.TileLaid("", hex_, tile, rotation, 0, ability=company)
            case (
                ExchangeOption(company=c, corporation=target, seat=s),
                ExchangePrivate(seat=seat, company=company),
            ) if (c, s) == (company, seat):
                return ev.PrivateExchanged(seat=seat, company=company, corporation=target)
    company = getattr(command, "company", "")
    raise Rejected(
        "ABILITY_NOT_AVAILABLE",
        f"{quoted(company)}'s ability cannot be used so now (its owner, its timing, what it "
        "allows: rulebook 15)",
        details={"company": quoted(company)},
    )
