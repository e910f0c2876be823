"""The state as a plain document for clients (GameState.state in the public API)."""

from __future__ import annotations

from typing import Any

from services.rules.domain.state import ClosedAuction, GameState, PrivateAuction, StockRound


def state_document(state: GameState) -> dict[str, Any]:
    return {
        "title": state.title,
        "beginner_game": state.beginner_game,
        "bank": state.bank,
        "priority_deal": state.priority,
        "players": [
            {"seat": p.seat, "name": p.name, "cash": p.cash, "privates": list(p.privates)}
            for p in state.players
        ],
        "round": _round(state),
    }


def _round(state: GameState) -> dict[str, Any] | None:
    match state.round:
        case PrivateAuction() as auction:
            return {
                "type": "private_auction",
                "offer": [
                    {
                        "company": company,
                        "price": auction.prices[company],
                        "bids": [{"seat": s, "price": p} for s, p in auction.bids_on(company)],
                    }
                    for company in auction.offer
                ],
                "passes_in_a_row": auction.passes_in_a_row,
                "closed_auction": _closed(auction.closed),
            }
        case StockRound(number=number):
            return {"type": "stock_round", "number": number}
    return None


def _closed(closed: ClosedAuction | None) -> dict[str, Any] | None:
    if closed is None:
        return None
    return {
        "company": closed.company,
        "bidders": list(closed.order),
        "bids": [{"seat": s, "price": p} for s, p in closed.bids],
    }
