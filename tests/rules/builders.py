"""Hand-made positions for scenario tests: a game after the auction with holdings set."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from services.rules import board
from services.rules.domain.commands import BuyPrivate
from services.rules.domain.state import GameState, OperatingRound, StockRound
from tests.rules.helpers import new_game, play


def after_auction(players: int = 3) -> GameState:
    """Each player in turn bought the topmost private until none was left."""
    state = new_game(players)
    while not isinstance(state.round, StockRound):
        (seat,) = state.acting_seats
        assert state.round is not None
        state, _ = play(state, BuyPrivate(seat, state.round.offer[0]))  # type: ignore[union-attr]
    return state


def with_player(state: GameState, seat: int, **changes: Any) -> GameState:
    if "shares" in changes:
        changes["shares"] = MappingProxyType(dict(changes["shares"]))
    players = tuple(
        dataclasses.replace(p, **changes) if p.seat == seat else p for p in state.players
    )
    return dataclasses.replace(state, players=players)


def with_corporation(state: GameState, corporation: str, **changes: Any) -> GameState:
    corporations = tuple(
        dataclasses.replace(c, **changes) if c.id == corporation else c for c in state.corporations
    )
    return dataclasses.replace(state, corporations=corporations)


def floated(
    state: GameState,
    corporation: str,
    holdings: Mapping[int, int],
    position: tuple[int, int],
    **changes: Any,
) -> GameState:
    """`corporation` started and floated, `holdings` shares per seat, the first seat president;
    the rest of the ten shares in the initial offering unless `open_market` says otherwise."""
    for seat, count in holdings.items():
        shares = dict(state.player(seat).shares)
        shares[corporation] = count
        state = with_player(state, seat, shares=shares)
    in_market = changes.pop("open_market", 0)
    defaults: dict[str, Any] = {
        "par": 100,
        "position": position,
        "initial_offering": 10 - sum(holdings.values()) - in_market,
        "open_market": in_market,
        "floated": True,
        "president": next(iter(holdings)),
        "tokens_placed": 1,
        "has_operated": True,
    }
    state = with_corporation(state, corporation, **{**defaults, **changes})
    if state.corporation(corporation).tokens_placed:
        home = state.title_model.charter(corporation).home
        assert state.board is not None
        state = dataclasses.replace(state, board=board.apply_token(state.board, corporation, home))
    return state


def with_tiles(state: GameState, *lays: tuple[str, str, int]) -> GameState:
    """Tiles (hex, tile, rotation) on the map, as if laid earlier."""
    position = state.board
    assert position is not None
    for hex_, tile, rotation in lays:
        position = board.apply_lay(position, hex_, tile, rotation)
    return dataclasses.replace(state, board=position)


def operating(state: GameState, corporation: str, **round_changes: Any) -> GameState:
    """`corporation` operating in the first operating round of a set."""
    floated = frozenset(c.id for c in state.corporations if c.floated)
    round_ = OperatingRound(
        number=1, of=1, privates_paid=True, current=corporation, floated_at_start=floated
    )
    return dataclasses.replace(state, round=dataclasses.replace(round_, **round_changes))
