"""Rulebook 5.2: the reserve-bid auction of the private companies.

The same functions answer "may this seat do this?" for decide() and for the legal-action list,
so a command is accepted exactly when it is listed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

from kernel.rejection import Kind, Rejected, quoted
from services.rules.domain import events as ev
from services.rules.domain.commands import BuyPrivate, Pass, PlaceBid, PlayerCommand
from services.rules.domain.legal import BidRange, BuyOption, LegalAction, PassOption
from services.rules.domain.state import ClosedAuction, GameState, PrivateAuction

BID_STEP = 5
_T = TypeVar("_T")


def _available_cash(state: GameState, auction: PrivateAuction, seat: int, company: str) -> int:
    return state.player(seat).cash - auction.committed(seat, except_company=company)


def buy_option(state: GameState, auction: PrivateAuction, seat: int) -> BuyOption | Rejected:
    price = auction.prices[auction.top]
    if price > _available_cash(state, auction, seat, auction.top):
        return Rejected(
            "INSUFFICIENT_CASH",
            f"{auction.top} costs ¥{price}, more than the cash not promised in bids",
            details={"company": auction.top, "price": price},
        )
    return BuyOption(company=auction.top, price=price)


def bid_range(
    state: GameState, auction: PrivateAuction, seat: int, company: str
) -> BidRange | Rejected:
    """The reservation bids `seat` may place on `company` (a private below the top); under
    the `topmost_private_bid_buys_at_bid` switch, also the bids that buy the topmost private
    (from its face value up)."""
    if company not in auction.offer:
        return Rejected(
            "PRIVATE_NOT_ON_OFFER",
            f"{quoted(company)} is not for sale",
            details={"company": quoted(company)},
        )
    if company == auction.top and state.rules.topmost_private_bid_buys_at_bid:
        return _range(
            company, auction.prices[company], _available_cash(state, auction, seat, company)
        )
    if company == auction.top:
        return Rejected(
            "BID_ON_TOP_PRIVATE",
            f"{company} is the topmost private: buy it instead of bidding (rulebook 5.2)",
            details={"company": company},
        )
    floor = max([auction.prices[company], *(price for _s, price in auction.bids_on(company))])
    return _range(company, floor + BID_STEP, _available_cash(state, auction, seat, company))


def closed_bid_range(state: GameState, closed: ClosedAuction, seat: int) -> BidRange | Rejected:
    auction = state.round
    assert isinstance(auction, PrivateAuction)
    return _range(
        closed.company,
        closed.high_bid + BID_STEP,
        _available_cash(state, auction, seat, closed.company),
    )


def _range(company: str, low: int, cash: int) -> BidRange | Rejected:
    high = cash - cash % BID_STEP
    if low > high:
        return Rejected(
            "INSUFFICIENT_CASH",
            f"the lowest bid on {company} is ¥{low}, more than the cash available (¥{cash})",
            details={"company": company, "min_price": low, "cash": cash},
        )
    return BidRange(company=company, min_price=low, max_price=high, step=BID_STEP)


def legal_actions(state: GameState, auction: PrivateAuction) -> list[LegalAction]:
    if auction.closed is not None:
        seat = auction.closed.acting
        options: list[LegalAction] = [PassOption(seat)]
        found = closed_bid_range(state, auction.closed, seat)
        if isinstance(found, BidRange):
            options.insert(0, dataclasses.replace(found, seat=seat))
        return options
    seat = state.players[auction.turn].seat
    options = []
    buy = buy_option(state, auction, seat)
    if isinstance(buy, BuyOption):
        options.append(dataclasses.replace(buy, seat=seat))
    biddable = auction.offer if state.rules.topmost_private_bid_buys_at_bid else auction.offer[1:]
    for company in biddable:
        found = bid_range(state, auction, seat, company)
        if isinstance(found, BidRange):
            options.append(dataclasses.replace(found, seat=seat))
    options.append(PassOption(seat))
    return options


def _checked(found: _T | Rejected) -> _T:
    if isinstance(found, Rejected):
        raise found
    return found


def decide(state: GameState, auction: PrivateAuction, command: PlayerCommand) -> ev.Event:
    if auction.closed is not None:
        return _decide_closed(state, auction.closed, command)
    return _decide_open(state, auction, command)


def _decide_open(state: GameState, auction: PrivateAuction, command: PlayerCommand) -> ev.Event:
    match command:
        case BuyPrivate(seat=seat, company=company):
            option = _checked(buy_option(state, auction, seat))
            if company != option.company:
                raise Rejected(
                    "NOT_TOPMOST_PRIVATE",
                    f"only the topmost private ({option.company}) can be bought (rulebook 5.2)",
                    details={"company": quoted(company), "topmost": option.company},
                )
            return ev.PrivateBought(seat=seat, company=company, price=option.price)
        case PlaceBid(seat=seat, company=company, price=price):
            allowed = bid_range(state, auction, seat, company)
            if isinstance(allowed, Rejected) and allowed.reason == "BID_ON_TOP_PRIVATE":
                raise Rejected(
                    "BID_ON_TOP_PRIVATE",
                    f"a bid of ¥{price} on {company}, the topmost private: it is bought at its "
                    f"face value ¥{auction.prices[company]}, not bid on (rulebook 5.2)",
                    details={"company": company, "price": price},
                )
            _check_bid(_checked(allowed), price)
            if company == auction.top:  # the topmost_private_bid_buys_at_bid switch
                return ev.PrivateBought(seat=seat, company=company, price=price)
            return ev.BidPlaced(seat=seat, company=company, price=price)
        case Pass(seat=seat):
            return ev.Passed(seat=seat)
    raise _not_now(command)


def _decide_closed(state: GameState, closed: ClosedAuction, command: PlayerCommand) -> ev.Event:
    match command:
        case PlaceBid(seat=seat, company=company, price=price):
            if company != closed.company:
                raise Rejected(
                    "CLOSED_AUCTION_UNDER_WAY",
                    f"only {closed.company} can be bid on until its auction ends",
                    details={"company": quoted(company)},
                )
            _check_bid(_checked(closed_bid_range(state, closed, seat)), price)
            return ev.ClosedAuctionBid(seat=seat, company=company, price=price)
        case Pass(seat=seat):
            return ev.ClosedAuctionPassed(seat=seat, company=closed.company)
    raise _not_now(command)


def _not_now(command: PlayerCommand) -> Rejected:
    return Rejected(
        "ACTION_NOT_ALLOWED",
        f"{type(command).__name__} is not an action of the private auction now",
        details={"action": type(command).__name__},
    )


def _check_bid(allowed: BidRange, price: int) -> None:
    if price % BID_STEP:
        raise Rejected(
            "BID_NOT_MULTIPLE_OF_5",
            f"bids are multiples of ¥{BID_STEP}, not ¥{price}",
            Kind.INVALID_ARGUMENT,
            {"field": "price", "price": price},
        )
    if price < allowed.min_price:
        raise Rejected(
            "BID_TOO_LOW",
            f"the lowest bid on {allowed.company} is ¥{allowed.min_price}",
            details={"price": price, "min_price": allowed.min_price},
        )
    if price > allowed.max_price:
        raise Rejected(
            "INSUFFICIENT_CASH",
            f"a bid of ¥{price} is more than the cash available (¥{allowed.max_price})",
            details={"price": price, "max_price": allowed.max_price},
        )


def next_event(state: GameState, auction: PrivateAuction) -> ev.Event | None:
    """What follows without anyone choosing: sales of privates that became topmost with bids
    on them, the all-pass rules, the end of the auction."""
    if not auction.offer:
        return ev.StockRoundStarted(number=1, priority=state.players[auction.turn].seat)
    if auction.closed is not None:
        if len(auction.closed.order) == 1:
            ((seat, price),) = auction.closed.bids
            return ev.PrivateSold(seat=seat, company=auction.closed.company, price=price)
        return None
    bids = auction.bids_on(auction.top)
    if len(bids) == 1:
        ((seat, price),) = bids
        return ev.PrivateSold(seat=seat, company=auction.top, price=price)
    if len(bids) > 1:
        return ev.ClosedAuctionStarted(company=auction.top, order=_closed_order(state, bids))
    if auction.passes_in_a_row == len(state.players):
        return _after_all_passed(state, auction)
    return None


def _closed_order(state: GameState, bids: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """The bidders clockwise, starting with the one to the left of the highest bidder (5.2).

    Under the `closed_auction_lowest_bidder_acts` switch, the bidders from the lowest bid up:
    the site always lets the lowest bidder act, and since each bid tops them all, going round
    that order from the start is always going to the lowest bidder (a bidder who raises goes
    to the top, one who passes leaves)."""
    high_seat = max(bids, key=lambda bid: bid[1])[0]
    bidders = {seat for seat, _price in bids}
    start = state.index_of(high_seat) + 1
    count = len(state.players)
    clockwise = [state.players[(start + i) % count].seat for i in range(count)]
    order = tuple(seat for seat in clockwise if seat in bidders)
    if state.rules.closed_auction_lowest_bidder_acts:
        price = dict(bids)
        return tuple(sorted(order, key=lambda seat: price[seat]))
    return order


def _after_all_passed(state: GameState, auction: PrivateAuction) -> ev.Event:
    if state.privates_owned:
        return ev.PrivateRevenuePaid(payments=_private_revenue(state))
    price = max(auction.prices[auction.top] - BID_STEP, 0)
    if price == 0:
        # The player who had the first chance to buy it takes it for nothing, as their action.
        seat = state.players[auction.turn].seat
        return ev.PrivateBought(seat=seat, company=auction.top, price=0)
    return ev.PrivatePriceReduced(company=auction.top, price=price)


def _private_revenue(state: GameState) -> tuple[ev.Payment, ...]:
    title = state.title_model
    return tuple(
        ev.Payment(seat=seat, company=company, amount=title.private(company).revenue)
        for company, seat in sorted(state.privates_owned.items(), key=_column_order(state))
    )


def _column_order(state: GameState) -> Callable[[tuple[str, int]], int]:
    ids = [company.id for company in state.title_model.privates]
    return lambda item: ids.index(item[0])
