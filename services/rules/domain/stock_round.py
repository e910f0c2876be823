"""Rulebook 7: the stock round.

As in the auction, the functions that say what a player may do serve both decide() and the
legal-action list.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

from kernel.rejection import Kind, Rejected, quoted
from services.rules.board.title import Zone
from services.rules.domain import events as ev
from services.rules.domain.commands import (
    BuyShare,
    Pass,
    PlayerCommand,
    SellShares,
    StartCorporation,
)
from services.rules.domain.legal import (
    BuyShareOption,
    LegalAction,
    PassOption,
    SellOption,
    StartOption,
)
from services.rules.domain.ordering import stock_price_order
from services.rules.domain.state import (
    PRESIDENT_SHARES,
    SHARES_PER_CORPORATION,
    Corporation,
    GameState,
    Player,
    StockRound,
)

HOLDING_LIMIT = 6  # shares: 60% (7.2.4)
OPEN_MARKET_LIMIT = 5  # shares: 50% (7.3.1)
INITIAL_OFFERING = "initial_offering"
OPEN_MARKET = "open_market"
_T = TypeVar("_T")


# ---- what a player holds -------------------------------------------------------------------


def certificates(state: GameState, player: Player) -> int:
    """Certificates counting toward the limit (7.6): privates, and shares of corporations whose
    token is not in the yellow or orange zone; a president's certificate counts once."""
    count = len(player.privates)
    shares = player.shares
    if not shares:
        return count
    market = state.title_model.market
    for corporation in state.corporations:
        held = shares.get(corporation.id, 0)
        if not held:
            continue
        position = corporation.position  # `_zone`, with the market looked up once
        if position is not None and market.space(position).zone is not Zone.NORMAL:
            continue
        count += held - 1 if corporation.president == player.seat else held
    return count


def certificate_limit(state: GameState) -> int:
    return state.title_model.by_player_count[len(state.players)].certificate_limit


def _zone(state: GameState, corporation: Corporation) -> Zone:
    if corporation.position is None:
        return Zone.NORMAL
    return state.title_model.market.space(corporation.position).zone


def _over_holding_limit(state: GameState, player: Player, corporation: Corporation) -> bool:
    return (
        player.shares_of(corporation.id) > HOLDING_LIMIT
        and _zone(state, corporation) is not Zone.ORANGE
    )


def must_sell(state: GameState, stock_round: StockRound, player: Player) -> bool:
    """7.3: over the certificate limit or a 60% holding, and able to sell: only selling is
    allowed, "until they reach the limit"."""
    return _must_sell(state, stock_round, player, certificates(state, player))


def _must_sell(state: GameState, stock_round: StockRound, player: Player, held: int) -> bool:
    """`must_sell`, for a player holding `held` certificates. A player who cannot sell what
    would help (its shares sold this turn, the open market full, a president's certificate
    nobody can take) acts as any other player, within the limits on buying (7.2.4), as the
    site's engine has it."""
    over_certificates = held > certificate_limit(state)
    over_holding = (
        [c for c in state.corporations if _over_holding_limit(state, player, c)]
        if any(held > HOLDING_LIMIT for held in player.shares.values())
        else []
    )
    if not over_certificates and not over_holding:
        return False
    if _may_sell_now(stock_round) is not None:
        return False
    candidates = state.corporations if over_certificates else over_holding
    return any(
        player.shares_of(corporation.id)  # without a share, no sale (`_sale`)
        and not isinstance(_sale(state, stock_round, player, corporation), Rejected)
        for corporation in candidates
    )


# ---- starting and buying -------------------------------------------------------------------


# `held` below: the player's certificates (`certificates`), counted once by the caller.


def _may_buy_now(
    state: GameState, stock_round: StockRound, player: Player, held: int
) -> Rejected | None:
    if "buy" in stock_round.actions:
        return Rejected("ALREADY_BOUGHT", "one certificate per stock turn (rulebook 7.2)")
    if _must_sell(state, stock_round, player, held):
        return Rejected(
            "MUST_SELL",
            "over the certificate limit or a 60% holding: sell first (rulebook 7.3)",
        )
    return None


def _within_certificate_limit(state: GameState, held: int, zone: Zone) -> Rejected | None:
    added = 1 if zone is Zone.NORMAL else 0
    if held + added > certificate_limit(state):
        return Rejected(
            "CERT_LIMIT",
            f"the certificate limit is {certificate_limit(state)} (rulebook 7.6)",
            details={"limit": certificate_limit(state)},
        )
    return None


def start_option(
    state: GameState, stock_round: StockRound, seat: int, corporation_id: str
) -> StartOption | Rejected:
    player = state.player(seat)
    corporation = _find(state, corporation_id)
    if isinstance(corporation, Rejected):
        return corporation
    if corporation.started:
        return Rejected(
            "ALREADY_STARTED",
            f"{corporation_id} has been started",
            details={"corporation": corporation_id},
        )
    held = certificates(state, player)
    if refusal := _may_buy_now(state, stock_round, player, held):
        return refusal
    return _start_offer(state, player, held, corporation_id)


def _start_offer(
    state: GameState, player: Player, held: int, corporation_id: str
) -> StartOption | Rejected:
    """The rest of `start_option`, once buying now is allowed at all."""
    if refusal := _within_certificate_limit(state, held, Zone.NORMAL):
        return refusal
    affordable = _affordable_pars(state, player)
    if not affordable:
        return Rejected(
            "INSUFFICIENT_CASH",
            "starting a corporation costs twice its par price",
            details={"corporation": corporation_id, "cash": player.cash},
        )
    return StartOption(corporation=corporation_id, par_prices=affordable, seat=player.seat)


def _affordable_pars(state: GameState, player: Player) -> tuple[int, ...]:
    """The par prices the player can start a corporation at (twice the par)."""
    return tuple(
        par for par in sorted(state.title_model.market.par_positions()) if 2 * par <= player.cash
    )


def _start_pars(state: GameState, player: Player, held: int) -> tuple[int, ...]:
    """What `_start_offer` offers for any corporation, without the refusals: the affordable
    par prices, none over the certificate limit."""
    if held + 1 > certificate_limit(state):
        return ()
    return _affordable_pars(state, player)


def buy_option(
    state: GameState, stock_round: StockRound, seat: int, corporation_id: str, source: str
) -> BuyShareOption | Rejected:
    player = state.player(seat)
    corporation = _find(state, corporation_id)
    if isinstance(corporation, Rejected):
        return corporation
    if not corporation.started:
        return Rejected(
            "NOT_STARTED",
            f"{corporation_id} has not been started: start it with a par price",
            details={"corporation": corporation_id},
        )
    held = certificates(state, player)
    if refusal := _may_buy_now(state, stock_round, player, held):
        return refusal
    return _share_offer(state, stock_round, player, held, corporation, source)


def _share_offer(
    state: GameState,
    stock_round: StockRound,
    player: Player,
    held: int,
    corporation: Corporation,
    source: str,
) -> BuyShareOption | Rejected:
    """The rest of `buy_option`, once buying now is allowed at all."""
    seat, corporation_id = player.seat, corporation.id
    if (seat, corporation_id) in stock_round.sold:
        return Rejected(
            "SOLD_THIS_ROUND",
            f"{corporation_id} was sold by this player this stock round (rulebook 7.2.4)",
            details={"corporation": corporation_id},
        )
    if source == INITIAL_OFFERING:
        available, price = corporation.initial_offering, corporation.par
    elif source == OPEN_MARKET:
        assert corporation.position is not None
        available = corporation.open_market
        price = state.title_model.market.price(corporation.position)
    else:
        return Rejected(
            "UNKNOWN_SOURCE",
            f"shares come from {INITIAL_OFFERING} or {OPEN_MARKET}, not {quoted(source)!r}",
            Kind.INVALID_ARGUMENT,
            {"field": "source"},
        )
    if not available:
        return Rejected(
            "NO_SHARE_AVAILABLE",
            f"no {corporation_id} share in the {source.replace('_', ' ')}",
            details={"corporation": corporation_id, "source": source},
        )
    zone = _zone(state, corporation)
    if player.shares_of(corporation_id) >= HOLDING_LIMIT and zone is not Zone.ORANGE:
        return Rejected(
            "HOLDING_LIMIT",
            f"60% of {corporation_id} is the most a player may hold (rulebook 7.2.4)",
            details={"corporation": corporation_id},
        )
    if refusal := _within_certificate_limit(state, held, zone):
        return refusal
    if price > player.cash:
        return Rejected(
            "INSUFFICIENT_CASH",
            f"a {corporation_id} share costs ¥{price}",
            details={"corporation": corporation_id, "price": price, "cash": player.cash},
        )
    return BuyShareOption(corporation=corporation_id, source=source, price=price, seat=seat)


def _sold_then_bought(actions: tuple[str, ...]) -> bool:
    return "sell" in actions and "buy" in actions and actions.index("sell") < actions.index("buy")


# ---- selling -------------------------------------------------------------------------------


def _successor(state: GameState, corporation: Corporation, seller: int, left: int) -> int | None:
    """Who becomes president if the seller keeps `left` shares: the player holding most,
    more than the seller, ties broken clockwise from the seller (7.5)."""
    start = state.index_of(seller)
    count = len(state.players)
    best, best_shares = None, left
    for step in range(1, count):
        other = state.players[(start + step) % count]
        if other.shares_of(corporation.id) > best_shares:
            best, best_shares = other.seat, other.shares_of(corporation.id)
    return best


def sell_option(
    state: GameState, stock_round: StockRound, seat: int, corporation_id: str
) -> SellOption | Rejected:
    """How many shares of the corporation the player may sell now (1..max_count)."""
    corporation = _find(state, corporation_id)
    if isinstance(corporation, Rejected):
        return corporation
    if refusal := _may_sell_now(stock_round):
        return refusal
    return _sale(state, stock_round, state.player(seat), corporation)


def _may_sell_now(stock_round: StockRound) -> Rejected | None:
    if stock_round.number == 1:
        return Rejected(
            "NO_SALES_IN_FIRST_STOCK_ROUND", "no shares are sold in the first stock round (7.3.1)"
        )
    if _sold_then_bought(stock_round.actions):
        return Rejected("SELL_BUY_SELL", "sell, buy and sell again is not allowed (rulebook 7.1)")
    return None


def _sale(
    state: GameState, stock_round: StockRound, player: Player, corporation: Corporation
) -> SellOption | Rejected:
    """The rest of `sell_option`, once selling now is allowed at all."""
    seat, corporation_id = player.seat, corporation.id
    if corporation_id in stock_round.sold_this_turn:
        return Rejected(
            "SOLD_THIS_TURN",
            f"{corporation_id} shares are sold together, at one price, once a turn (7.3)",
            details={"corporation": corporation_id},
        )
    held = player.shares_of(corporation_id)
    limit = min(held, OPEN_MARKET_LIMIT - corporation.open_market)
    if corporation.president == seat:
        # The president's certificate is never sold: keep it unless another player takes it.
        while limit > 0 and held - limit < PRESIDENT_SHARES:
            successor = _successor(state, corporation, seat, held - limit)
            if successor is not None and state.player(successor).shares_of(corporation_id) >= 2:
                break
            limit -= 1
    if limit <= 0:
        return Rejected(
            "CANNOT_SELL",
            f"no {corporation_id} share can be sold now (rulebook 7.3.1)",
            details={"corporation": corporation_id},
        )
    assert corporation.position is not None
    price = state.title_model.market.price(corporation.position)
    return SellOption(corporation=corporation_id, max_count=limit, price=price, seat=seat)


# ---- decide --------------------------------------------------------------------------------


def _find(state: GameState, corporation_id: str) -> Corporation | Rejected:
    try:
        return state.corporation(corporation_id)
    except KeyError:
        return Rejected(
            "UNKNOWN_CORPORATION",
            f"there is no corporation {quoted(corporation_id)!r}",
            Kind.INVALID_ARGUMENT,
            {"field": "corporation", "corporation": quoted(corporation_id)},
        )


def _checked(found: _T | Rejected) -> _T:
    if isinstance(found, Rejected):
        raise found
    return found


def decide(state: GameState, stock_round: StockRound, command: PlayerCommand) -> ev.Event:
    match command:
        case StartCorporation(seat=seat, corporation=corporation_id, par=par):
            option = _checked(start_option(state, stock_round, seat, corporation_id))
            positions = state.title_model.market.par_positions()
            if par not in positions:
                raise Rejected(
                    "INVALID_PAR",
                    f"par prices are {sorted(positions)}, not {par}",
                    Kind.INVALID_ARGUMENT,
                    {"field": "par", "par": par},
                )
            if par not in option.par_prices:
                raise Rejected(
                    "INSUFFICIENT_CASH",
                    f"starting at par ¥{par} costs ¥{2 * par}",
                    details={"par": par, "cash": state.player(seat).cash},
                )
            first: ev.Event = ev.CorporationStarted(
                seat=seat, corporation=corporation_id, par=par, position=positions[par]
            )
        case BuyShare(seat=seat, corporation=corporation_id, source=source):
            bought = _checked(buy_option(state, stock_round, seat, corporation_id, source))
            first = ev.ShareBought(
                seat=seat, corporation=corporation_id, source=source, price=bought.price
            )
        case SellShares(seat=seat, corporation=corporation_id, count=count):
            if count <= 0:
                raise Rejected(
                    "INVALID_COUNT",
                    "sell at least one share",
                    Kind.INVALID_ARGUMENT,
                    {"field": "count", "count": count},
                )
            sell = _checked(sell_option(state, stock_round, seat, corporation_id))
            if count > sell.max_count:
                raise Rejected(
                    "CANNOT_SELL",
                    f"at most {sell.max_count} {corporation_id} shares can be sold now (7.3.1)",
                    details={"corporation": corporation_id, "max_count": sell.max_count},
                )
            corporation = state.corporation(corporation_id)
            assert corporation.position is not None
            first = ev.SharesSold(
                seat=seat,
                corporation=corporation_id,
                count=count,
                price=sell.price,
                position=state.title_model.market.down(corporation.position, count),
            )
        case Pass(seat=seat):
            if not _may_pass(state, stock_round, seat):
                raise Rejected(
                    "MUST_SELL", "over a limit: sell until within it before passing (rulebook 7.3)"
                )
            first = ev.TurnEnded(seat=seat) if stock_round.actions else ev.Passed(seat=seat)
        case _:
            raise Rejected(
                "ACTION_NOT_ALLOWED",
                f"{type(command).__name__} is not a stock round action",
                details={"action": type(command).__name__},
            )
    return first


def next_events(state: GameState, stock_round: StockRound, last: ev.Event) -> list[ev.Event]:
    """What follows without anyone choosing: presidency changes, floating, the end of a turn
    with nothing left to do, the end of the round."""
    if stock_round.passes_in_a_row == len(state.players):
        return _end_of_round(state, stock_round)
    return []


#: Events after which a presidency may change hands, and a corporation may float (made once:
#: `after_share_change` follows every event).
_SHARES_CHANGED = (ev.CorporationStarted, ev.ShareBought, ev.SharesSold, ev.PrivateExchanged)
_SHARES_GAINED = (ev.CorporationStarted, ev.ShareBought, ev.PresidencyChanged, ev.PrivateExchanged)


def after_share_change(state: GameState, last: ev.Event) -> ev.Event | None:
    """A presidency changing hands (7.5) or a corporation floating (7.4), in whatever round a
    share changed hands."""
    if isinstance(last, _SHARES_CHANGED):
        corporation = state.corporation(last.corporation)
        if (presidency := _presidency_change(state, corporation)) is not None:
            return presidency
    if isinstance(last, _SHARES_GAINED):
        corporation = state.corporation(last.corporation)
        if not corporation.floated and corporation.initial_offering <= SHARES_PER_CORPORATION // 2:
            return ev.CorporationFloated(corporation=corporation.id, capital=10 * corporation.par)
    return None


def _presidency_change(state: GameState, corporation: Corporation) -> ev.Event | None:
    president = state.player(corporation.president)
    successor = _successor(state, corporation, president.seat, president.shares_of(corporation.id))
    if successor is None:
        return None
    return ev.PresidencyChanged(corporation=corporation.id, seat=successor, previous=president.seat)


def _end_of_round(state: GameState, stock_round: StockRound) -> list[ev.Event]:
    """7.7: priority deal, sold-out corporations up (in stock price order), operating rounds."""
    market = state.title_model.market
    events: list[ev.Event] = [ev.StockRoundEnded(priority=state.players[stock_round.turn].seat)]
    for corporation in stock_price_order(state):
        assert corporation.position is not None
        raised = market.up(corporation.position)
        sold_out = corporation.initial_offering == 0 and corporation.open_market == 0
        if sold_out and raised != corporation.position:
            events.append(ev.SoldOutPriceRaised(corporation=corporation.id, position=raised))
    operating_rounds = state.title_model.phase(state.phase).operating_rounds
    events.append(ev.OperatingRoundStarted(number=1, of=operating_rounds))
    return events


# ---- legal actions -------------------------------------------------------------------------


def _share_options(state: GameState, stock_round: StockRound, seat: int) -> Iterator[LegalAction]:
    """Starting, buying and selling: every stock action but passing (what `start_option`,
    `buy_option` and `sell_option` accept, asking once whether the player may buy or sell
    now)."""
    player = state.player(seat)
    held = certificates(state, player)
    # Whether buying and selling are allowed at all (`_may_buy_now`, `_may_sell_now`), asked
    # without building their refusals.
    may_buy = "buy" not in stock_round.actions and not _must_sell(state, stock_round, player, held)
    may_sell = stock_round.number != 1 and not _sold_then_bought(stock_round.actions)
    start: tuple[int, ...] | None = None  # the par prices of any start, once asked
    for corporation in state.corporations:
        if may_buy:
            if corporation.started:
                yield from _buys(state, stock_round, player, held, corporation)
            else:
                if start is None:
                    start = _start_pars(state, player, held)
                if start:  # what `_start_offer` offers
                    yield StartOption(corporation=corporation.id, par_prices=start, seat=seat)
        if may_sell and player.shares_of(corporation.id):  # without a share, no sale
            sale = _sale(state, stock_round, player, corporation)
            if not isinstance(sale, Rejected):
                yield sale


def _buys(
    state: GameState, stock_round: StockRound, player: Player, held: int, corporation: Corporation
) -> Iterator[BuyShareOption]:
    """What `_share_offer` offers of a started corporation, passing over without asking it
    what it refuses: a corporation the player sold this round, a source without a share."""
    if (player.seat, corporation.id) in stock_round.sold:
        return
    offered = (
        (INITIAL_OFFERING, corporation.initial_offering),
        (OPEN_MARKET, corporation.open_market),
    )
    for source, available in offered:
        if not available:
            continue
        found = _share_offer(state, stock_round, player, held, corporation, source)
        if not isinstance(found, Rejected):
            yield found


def _may_pass(state: GameState, stock_round: StockRound, seat: int) -> bool:
    """7.3: a player over a limit sells "until they reach the limit" before the turn ends (a
    first sale within the turn does not end the duty), while a sale that helps is possible."""
    return not must_sell(state, stock_round, state.player(seat))


def each_legal_action(state: GameState, stock_round: StockRound) -> Iterator[LegalAction]:
    """The legal actions in the order they are listed, found one at a time."""
    seat = state.players[stock_round.turn].seat
    yield from _share_options(state, stock_round, seat)
    if _may_pass(state, stock_round, seat):
        yield PassOption(seat)


def legal_actions(state: GameState, stock_round: StockRound) -> list[LegalAction]:
    return list(each_legal_action(state, stock_round))
