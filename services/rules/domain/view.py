"""The state as a plain document for clients (GameState.state in the public API)."""

from __future__ import annotations

from typing import Any

from services.rules.domain.state import (
    ClosedAuction,
    GameState,
    OperatingRound,
    PrivateAuction,
    StockRound,
)


def state_document(state: GameState) -> dict[str, Any]:
    return {
        "title": state.title,
        "beginner_game": state.beginner_game,
        "rules_profile": state.rules_profile,
        "bank": state.bank,
        "priority_deal": state.priority,
        "players": [
            {
                "seat": p.seat,
                "name": p.name,
                "cash": p.cash,
                "privates": list(p.privates),
                "shares": {c: n for c, n in p.shares.items() if n},
            }
            for p in state.players
        ],
        "corporations": [
            {
                "id": c.id,
                "par": c.par,
                "share_price": state.title_model.market.price(c.position) if c.position else None,
                "market_position": list(c.position) if c.position else None,
                "initial_offering": c.initial_offering,
                "open_market": c.open_market,
                "cash": c.cash,
                "floated": c.floated,
                "president": c.president or None,
                "trains": list(c.trains),
                "privates": list(c.privates),
                "tokens_placed": c.tokens_placed,
            }
            for c in state.corporations
        ],
        "round": _round(state),
        "phase": state.phase,
        "depot": {train: left for train, left in state.depot.items() if left},
        "open_market_trains": list(state.pool_trains),
        "closed_privates": sorted(state.closed_privates),
        "bank_broken": state.bank_broken,
        "result": _result(state),
        "board": _board(state),
    }


def _board(state: GameState) -> dict[str, Any]:
    """Tiles laid over the printed map, and station tokens by city."""
    if state.board is None:
        return {"tiles": [], "tokens": []}
    return {
        "tiles": [
            {"hex": hex_, "tile": placed.tile, "rotation": placed.rotation}
            for hex_, placed in sorted(state.board.tiles.items())
        ],
        "tokens": [
            {"hex": hex_, "city": city, "spots": [holder or "" for holder in held]}
            for (hex_, city), held in sorted(state.board.tokens.items())
        ],
    }


def _result(state: GameState) -> dict[str, Any] | None:
    if state.result is None:
        return None
    return {
        "reason": state.result.reason,
        "net_worths": [{"seat": s, "net_worth": n} for s, n in state.result.net_worths],
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
        case StockRound(number=number, actions=actions, passes_in_a_row=passes):
            return {
                "type": "stock_round",
                "number": number,
                "turn_actions": list(actions),
                "passes_in_a_row": passes,
            }
        case OperatingRound() as operating:
            return {
                "type": "operating_round",
                "number": operating.number,
                "of": operating.of,
                "operating": operating.current or None,
                "step": operating.step.value if operating.current else None,
                "revenue": operating.revenue,
                "operated": sorted(operating.operated),
                "discarding": list(operating.discarding),
                "ability": (
                    {"company": operating.ability[0], "seat": operating.ability[1]}
                    if operating.ability
                    else None
                ),
            }
    return None


def _closed(closed: ClosedAuction | None) -> dict[str, Any] | None:
    if closed is None:
        return None
    return {
        "company": closed.company,
        "bidders": list(closed.order),
        "bids": [{"seat": s, "price": p} for s, p in closed.bids],
    }
