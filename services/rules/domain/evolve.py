"""evolve(state, event) -> state: applies one fact. No decisions here: every choice was made
in decide(); this only bookkeeps (cash moves, ownership, whose turn)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from functools import reduce
from types import MappingProxyType

from services.rules.domain import events as ev
from services.rules.domain.state import (
    ClosedAuction,
    GameState,
    Player,
    PrivateAuction,
    StockRound,
)


def evolve(state: GameState, event: ev.Event) -> GameState:
    return _HANDLERS[type(event)](state, event)


def fold(events: Iterable[ev.Event], state: GameState | None = None) -> GameState:
    return reduce(evolve, events, state or GameState())


def _update_player(state: GameState, seat: int, change: Callable[[Player], Player]) -> GameState:
    players = tuple(change(p) if p.seat == seat else p for p in state.players)
    return dataclasses.replace(state, players=players)


def _pay_bank(state: GameState, seat: int, amount: int) -> GameState:
    state = _update_player(state, seat, lambda p: dataclasses.replace(p, cash=p.cash - amount))
    return dataclasses.replace(state, bank=state.bank + amount)


def _auction(state: GameState) -> PrivateAuction:
    assert isinstance(state.round, PrivateAuction), state.round
    return state.round


def _next_turn(state: GameState, turn: int) -> int:
    return (turn + 1) % len(state.players)


def _game_created(state: GameState, event: ev.GameCreated) -> GameState:
    return GameState(
        title=event.title,
        beginner_game=event.beginner_game,
        bank=event.bank,
        players=tuple(Player(seat=p.seat, name=p.name) for p in event.players),
    )


def _player_order_drawn(state: GameState, event: ev.PlayerOrderDrawn) -> GameState:
    by_seat = {p.seat: p for p in state.players}
    return dataclasses.replace(
        state, players=tuple(by_seat[seat] for seat in event.order), priority=event.order[0]
    )


def _starting_capital_dealt(state: GameState, event: ev.StartingCapitalDealt) -> GameState:
    players = tuple(dataclasses.replace(p, cash=p.cash + event.amount) for p in state.players)
    return dataclasses.replace(
        state, players=players, bank=state.bank - event.amount * len(players)
    )


def _private_auction_started(state: GameState, event: ev.PrivateAuctionStarted) -> GameState:
    auction = PrivateAuction(
        offer=tuple(item.company for item in event.offer),
        prices=MappingProxyType({item.company: item.price for item in event.offer}),
        bids=MappingProxyType({}),
        turn=state.index_of(state.priority),
    )
    return dataclasses.replace(state, round=auction)


def _privates_dealt(state: GameState, event: ev.PrivatesDealt) -> GameState:
    for deal in event.deal:
        state = _give_private(state, deal.seat, deal.company, deal.price)
    return state


def _give_private(state: GameState, seat: int, company: str, price: int) -> GameState:
    state = _pay_bank(state, seat, price)
    state = _update_player(
        state, seat, lambda p: dataclasses.replace(p, privates=(*p.privates, company))
    )
    return dataclasses.replace(
        state, privates_owned=MappingProxyType({**state.privates_owned, company: seat})
    )


def _take_private(state: GameState, seat: int, company: str, price: int) -> GameState:
    """The seat pays `price` for `company`, which leaves the offer with all bids on it."""
    state = _give_private(state, seat, company, price)
    auction = _auction(state)
    auction = dataclasses.replace(
        auction,
        offer=tuple(c for c in auction.offer if c != company),
        bids=MappingProxyType({c: b for c, b in auction.bids.items() if c != company}),
        closed=None,
    )
    return dataclasses.replace(state, round=auction)


def _private_bought(state: GameState, event: ev.PrivateBought) -> GameState:
    state = _take_private(state, event.seat, event.company, event.price)
    auction = _auction(state)
    auction = dataclasses.replace(auction, turn=_next_turn(state, auction.turn), passes_in_a_row=0)
    return dataclasses.replace(state, round=auction)


def _private_sold(state: GameState, event: ev.PrivateSold) -> GameState:
    return _take_private(state, event.seat, event.company, event.price)


def _replace_bid(
    bids: tuple[tuple[int, int], ...], seat: int, price: int
) -> tuple[tuple[int, int], ...]:
    return (*((s, p) for s, p in bids if s != seat), (seat, price))


def _bid_placed(state: GameState, event: ev.BidPlaced) -> GameState:
    auction = _auction(state)
    bids = _replace_bid(auction.bids_on(event.company), event.seat, event.price)
    auction = dataclasses.replace(
        auction,
        bids=MappingProxyType({**auction.bids, event.company: bids}),
        turn=_next_turn(state, auction.turn),
        passes_in_a_row=0,
    )
    return dataclasses.replace(state, round=auction)


def _passed(state: GameState, event: ev.Passed) -> GameState:
    match state.round:
        case PrivateAuction() as auction:
            auction = dataclasses.replace(
                auction,
                turn=_next_turn(state, auction.turn),
                passes_in_a_row=auction.passes_in_a_row + 1,
            )
            return dataclasses.replace(state, round=auction)
        case StockRound() as stock_round:
            return dataclasses.replace(
                state,
                round=dataclasses.replace(stock_round, turn=_next_turn(state, stock_round.turn)),
            )
    raise AssertionError(f"Passed in {state.round}")


def _closed_auction_started(state: GameState, event: ev.ClosedAuctionStarted) -> GameState:
    auction = _auction(state)
    bids = dict(auction.bids_on(event.company))
    closed = ClosedAuction(
        company=event.company,
        order=event.order,
        bids=tuple((seat, bids[seat]) for seat in event.order),
        turn=0,
    )
    return dataclasses.replace(state, round=dataclasses.replace(auction, closed=closed))


def _closed(state: GameState) -> ClosedAuction:
    closed = _auction(state).closed
    assert closed is not None
    return closed


def _with_closed(state: GameState, closed: ClosedAuction) -> GameState:
    return dataclasses.replace(state, round=dataclasses.replace(_auction(state), closed=closed))


def _closed_auction_bid(state: GameState, event: ev.ClosedAuctionBid) -> GameState:
    closed = _closed(state)
    closed = dataclasses.replace(
        closed,
        bids=tuple((s, event.price if s == event.seat else p) for s, p in closed.bids),
        turn=(closed.turn + 1) % len(closed.order),
    )
    return _with_closed(state, closed)


def _closed_auction_passed(state: GameState, event: ev.ClosedAuctionPassed) -> GameState:
    closed = _closed(state)
    order = tuple(s for s in closed.order if s != event.seat)
    closed = dataclasses.replace(
        closed,
        order=order,
        bids=tuple((s, p) for s, p in closed.bids if s != event.seat),
        # The next bidder now stands at the passer's index.
        turn=closed.turn % len(order),
    )
    auction = _auction(state)
    bids = tuple((s, p) for s, p in auction.bids_on(event.company) if s != event.seat)
    auction = dataclasses.replace(
        auction, bids=MappingProxyType({**auction.bids, event.company: bids}), closed=closed
    )
    return dataclasses.replace(state, round=auction)


def _private_price_reduced(state: GameState, event: ev.PrivatePriceReduced) -> GameState:
    auction = _auction(state)
    auction = dataclasses.replace(
        auction,
        prices=MappingProxyType({**auction.prices, event.company: event.price}),
        passes_in_a_row=0,
    )
    return dataclasses.replace(state, round=auction)


def _private_revenue_paid(state: GameState, event: ev.PrivateRevenuePaid) -> GameState:
    for payment in event.payments:
        state = _pay_bank(state, payment.seat, -payment.amount)
    if isinstance(state.round, PrivateAuction):
        state = dataclasses.replace(
            state, round=dataclasses.replace(state.round, passes_in_a_row=0)
        )
    return state


def _stock_round_started(state: GameState, event: ev.StockRoundStarted) -> GameState:
    return dataclasses.replace(
        state,
        priority=event.priority,
        round=StockRound(number=event.number, turn=state.index_of(event.priority)),
    )


_HANDLERS: dict[type[ev.Event], Callable[[GameState, ev.Event], GameState]] = {
    ev.GameCreated: _game_created,  # type: ignore[dict-item]
    ev.PlayerOrderDrawn: _player_order_drawn,  # type: ignore[dict-item]
    ev.StartingCapitalDealt: _starting_capital_dealt,  # type: ignore[dict-item]
    ev.PrivateAuctionStarted: _private_auction_started,  # type: ignore[dict-item]
    ev.PrivatesDealt: _privates_dealt,  # type: ignore[dict-item]
    ev.PrivateBought: _private_bought,  # type: ignore[dict-item]
    ev.BidPlaced: _bid_placed,  # type: ignore[dict-item]
    ev.Passed: _passed,  # type: ignore[dict-item]
    ev.PrivateSold: _private_sold,  # type: ignore[dict-item]
    ev.ClosedAuctionStarted: _closed_auction_started,  # type: ignore[dict-item]
    ev.ClosedAuctionBid: _closed_auction_bid,  # type: ignore[dict-item]
    ev.ClosedAuctionPassed: _closed_auction_passed,  # type: ignore[dict-item]
    ev.PrivatePriceReduced: _private_price_reduced,  # type: ignore[dict-item]
    ev.PrivateRevenuePaid: _private_revenue_paid,  # type: ignore[dict-item]
    ev.StockRoundStarted: _stock_round_started,  # type: ignore[dict-item]
}
