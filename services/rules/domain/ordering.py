"""Stock price order (rulebook 3.2): who operates first, who discards first."""

from __future__ import annotations

from services.rules.domain.state import Corporation, GameState


def stock_price_order(state: GameState) -> list[Corporation]:
    """Corporations with a stock token, highest price first; at equal prices the one farther
    right, then the one higher in the stack."""
    market = state.title_model.market
    placed = [(c, c.position) for c in state.corporations if c.position is not None]
    ordered = sorted(
        placed, key=lambda item: (-market.price(item[1]), -item[1][1], item[0].arrival)
    )
    return [corporation for corporation, _position in ordered]
