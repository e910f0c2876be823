"""Rulebook 10: net worth and the end of the game."""

from __future__ import annotations

from services.rules.domain import events as ev
from services.rules.domain.site_deal import SITE_BEGINNER_PRICES
from services.rules.domain.state import GameState, Player


def net_worth(state: GameState, player: Player) -> int:
    """Cash, shares at the market price and the face value of privates (10.3); in a beginner
    game dealt as the site deals it, a private is worth what it was dealt for, as there."""
    market = state.title_model.market
    shares = sum(
        player.shares_of(c.id) * market.price(c.position)
        for c in state.corporations
        if c.position is not None
    )
    privates = sum(
        private_value(state, company)
        for company in player.privates
        if company not in state.closed_privates
    )
    return player.cash + shares + privates


def private_value(state: GameState, company: str) -> int:
    face = state.title_model.private(company).face_value
    if state.beginner_game and state.rules.beginner_deal_as_site:
        return SITE_BEGINNER_PRICES.get(company, face)
    return face


def game_ended(state: GameState, reason: str) -> ev.GameEnded:
    return ev.GameEnded(
        reason=reason,
        net_worths=tuple(ev.PlayerNetWorth(p.seat, net_worth(state, p)) for p in state.players),
    )
