"""Rulebook 10: net worth and the end of the game."""

from __future__ import annotations

from services.rules.domain import events as ev
from services.rules.domain.state import GameState, Player


def net_worth(state: GameState, player: Player) -> int:
    """Cash, shares at the market price and the face value of privates (10.3)."""
    market = state.title_model.market
    title = state.title_model
    shares = sum(
        player.shares_of(c.id) * market.price(c.position)
        for c in state.corporations
        if c.position is not None
    )
    privates = sum(
        title.private(company).face_value
        for company in player.privates
        if company not in state.closed_privates
    )
    return player.cash + shares + privates


def game_ended(state: GameState, reason: str) -> ev.GameEnded:
    return ev.GameEnded(
        reason=reason,
        net_worths=tuple(ev.PlayerNetWorth(p.seat, net_worth(state, p)) for p in state.players),
    )
