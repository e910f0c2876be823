"""evolve(state, event) -> state: applies one fact. No decisions here: every choice was made
in decide(); this only bookkeeps (cash moves, ownership, whose turn)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import MappingProxyType

from services.rules import board
from services.rules.board.title import UNLIMITED
from services.rules.domain import events as ev
from services.rules.domain.state import (
    ClosedAuction,
    Corporation,
    GameResult,
    GameState,
    OperatingRound,
    Player,
    PrivateAuction,
    Round,
    Step,
    StockRound,
    replace,
)
from services.rules.domain.turn_steps import turn_steps


def evolve(state: GameState, event: ev.Event) -> GameState:
    handler = _HANDLERS.get(type(event))
    if handler is None:
        if isinstance(event, ev.Undone):
            raise ValueError("an Undone event is folded by services.rules.domain.undo, not evolve")
        raise KeyError(type(event))
    return handler(state, event)


def fold(events: Iterable[ev.Event], state: GameState | None = None) -> GameState:
    if isinstance(events, Evolved) and (known := events.state_after(state)) is not None:
        return known
    state = state or GameState()
    handlers = _HANDLERS  # `evolve` for each event, without its call
    for event in events:
        handler = handlers.get(type(event))
        state = evolve(state, event) if handler is None else handler(state, event)
    return state


class Evolved(list[ev.Event]):
    """Events that were folded onto `before` already (decide works out what follows from its
    events by folding them), with the state they led to: the state their writer folds them
    onto next is the same, and folding them again would give the same state."""

    __slots__ = ("_after", "_before", "_folded")

    def __init__(self, events: list[ev.Event], before: GameState, after: GameState) -> None:
        super().__init__(events)
        self._before = before
        self._after = after
        self._folded = tuple(events)

    def state_after(self, state: GameState | None) -> GameState | None:
        """The state these events lead to from `state`, if known: from `before` itself and
        with the list unchanged since."""
        unchanged = len(self) == len(self._folded) and all(
            event is folded for event, folded in zip(self, self._folded, strict=True)
        )
        return self._after if state is self._before and unchanged else None


# A GameState has many fields to copy: the busiest handlers build each new one in one step,
# from the players and corporations these return.


def _players(state: GameState, seat: int, change: Callable[[Player], Player]) -> tuple[Player, ...]:
    players = state.players
    for index, player in enumerate(players):
        if player.seat == seat:  # seats are unique
            return (*players[:index], change(player), *players[index + 1 :])
    return players


def _corporations(
    state: GameState, corporation_id: str, change: Callable[[Corporation], Corporation]
) -> tuple[Corporation, ...]:
    corporations = state.corporations
    for index, corporation in enumerate(corporations):
        if corporation.id == corporation_id:  # ids are unique
            return (*corporations[:index], change(corporation), *corporations[index + 1 :])
    return corporations


def _update_player(state: GameState, seat: int, change: Callable[[Player], Player]) -> GameState:
    return replace(state, players=_players(state, seat, change))


def _pay_bank(state: GameState, seat: int, amount: int) -> GameState:
    players = _players(state, seat, lambda p: replace(p, cash=p.cash - amount))
    return replace(state, players=players, bank=state.bank + amount)


def _auction(state: GameState) -> PrivateAuction:
    assert isinstance(state.round, PrivateAuction), state.round
    return state.round


def _next_turn(state: GameState, turn: int) -> int:
    return (turn + 1) % len(state.players)


def _game_created(state: GameState, event: ev.GameCreated) -> GameState:
    # The one place a game's title is found by its name: from here on the game holds it
    # (`GameState.title_model`, through its board).
    title = board.load_title(event.title)
    return GameState(
        title=event.title,
        beginner_game=event.beginner_game,
        trust_submitted_revenue=event.trust_submitted_revenue,
        undo_allowed=event.undo_allowed,
        rules_profile=event.rules_profile,
        bank=event.bank,
        players=tuple(Player(seat=p.seat, name=p.name) for p in event.players),
        corporations=tuple(Corporation(c) for c in title.corporations),
        depot=MappingProxyType({t.name: t.count for t in title.trains}),
        board=board.initial_position(
            title, beginner=event.beginner_game, profile=event.rules_profile
        ),
        phase=title.phases[0].name,
    )


def _player_order_drawn(state: GameState, event: ev.PlayerOrderDrawn) -> GameState:
    by_seat = {p.seat: p for p in state.players}
    return replace(
        state, players=tuple(by_seat[seat] for seat in event.order), priority=event.order[0]
    )


def _starting_capital_dealt(state: GameState, event: ev.StartingCapitalDealt) -> GameState:
    players = tuple(replace(p, cash=p.cash + event.amount) for p in state.players)
    return replace(state, players=players, bank=state.bank - event.amount * len(players))


def _private_auction_started(state: GameState, event: ev.PrivateAuctionStarted) -> GameState:
    auction = PrivateAuction(
        offer=tuple(item.company for item in event.offer),
        prices=MappingProxyType({item.company: item.price for item in event.offer}),
        bids=MappingProxyType({}),
        turn=state.index_of(state.priority),
    )
    return replace(state, round=auction)


def _privates_dealt(state: GameState, event: ev.PrivatesDealt) -> GameState:
    for deal in event.deal:
        state = _give_private(state, deal.seat, deal.company, deal.price)
    return state


def _give_private(state: GameState, seat: int, company: str, price: int) -> GameState:
    state = _pay_bank(state, seat, price)
    state = _update_player(state, seat, lambda p: replace(p, privates=(*p.privates, company)))
    return replace(state, privates_owned=MappingProxyType({**state.privates_owned, company: seat}))


def _take_private(state: GameState, seat: int, company: str, price: int) -> GameState:
    """The seat pays `price` for `company`, which leaves the offer with all bids on it."""
    state = _give_private(state, seat, company, price)
    auction = _auction(state)
    auction = replace(
        auction,
        offer=tuple(c for c in auction.offer if c != company),
        bids=MappingProxyType({c: b for c, b in auction.bids.items() if c != company}),
        closed=None,
    )
    return replace(state, round=auction)


def _private_bought(state: GameState, event: ev.PrivateBought) -> GameState:
    state = _take_private(state, event.seat, event.company, event.price)
    auction = _auction(state)
    auction = replace(auction, turn=_next_turn(state, auction.turn), passes_in_a_row=0)
    return replace(state, round=auction)


def _private_sold(state: GameState, event: ev.PrivateSold) -> GameState:
    return _take_private(state, event.seat, event.company, event.price)


def _replace_bid(
    bids: tuple[tuple[int, int], ...], seat: int, price: int
) -> tuple[tuple[int, int], ...]:
    return (*((s, p) for s, p in bids if s != seat), (seat, price))


def _bid_placed(state: GameState, event: ev.BidPlaced) -> GameState:
    auction = _auction(state)
    bids = _replace_bid(auction.bids_on(event.company), event.seat, event.price)
    auction = replace(
        auction,
        bids=MappingProxyType({**auction.bids, event.company: bids}),
        turn=_next_turn(state, auction.turn),
        passes_in_a_row=0,
    )
    return replace(state, round=auction)


def _passed(state: GameState, event: ev.Passed) -> GameState:
    match state.round:
        case PrivateAuction() as auction:
            auction = replace(
                auction,
                turn=_next_turn(state, auction.turn),
                passes_in_a_row=auction.passes_in_a_row + 1,
            )
            return replace(state, round=auction)
        case StockRound() as stock_round:
            stock_round = replace(
                stock_round,
                turn=_next_turn(state, stock_round.turn),
                passes_in_a_row=stock_round.passes_in_a_row + 1,
            )
            return replace(state, round=stock_round)
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
    return replace(state, round=replace(auction, closed=closed))


def _closed(state: GameState) -> ClosedAuction:
    closed = _auction(state).closed
    assert closed is not None
    return closed


def _with_closed(state: GameState, closed: ClosedAuction) -> GameState:
    return replace(state, round=replace(_auction(state), closed=closed))


def _closed_auction_bid(state: GameState, event: ev.ClosedAuctionBid) -> GameState:
    closed = _closed(state)
    closed = replace(
        closed,
        bids=tuple((s, event.price if s == event.seat else p) for s, p in closed.bids),
        turn=(closed.turn + 1) % len(closed.order),
    )
    return _with_closed(state, closed)


def _closed_auction_passed(state: GameState, event: ev.ClosedAuctionPassed) -> GameState:
    closed = _closed(state)
    order = tuple(s for s in closed.order if s != event.seat)
    closed = replace(
        closed,
        order=order,
        bids=tuple((s, p) for s, p in closed.bids if s != event.seat),
        # The next bidder now stands at the passer's index.
        turn=closed.turn % len(order),
    )
    auction = _auction(state)
    bids = tuple((s, p) for s, p in auction.bids_on(event.company) if s != event.seat)
    auction = replace(
        auction, bids=MappingProxyType({**auction.bids, event.company: bids}), closed=closed
    )
    return replace(state, round=auction)


def _private_price_reduced(state: GameState, event: ev.PrivatePriceReduced) -> GameState:
    auction = _auction(state)
    auction = replace(
        auction,
        prices=MappingProxyType({**auction.prices, event.company: event.price}),
        passes_in_a_row=0,
    )
    return replace(state, round=auction)


def _private_revenue_paid(state: GameState, event: ev.PrivateRevenuePaid) -> GameState:
    to_players: dict[int, int] = {}
    to_corporations: dict[str, int] = {}
    for payment in event.payments:
        if payment.seat:
            to_players[payment.seat] = to_players.get(payment.seat, 0) + payment.amount
        else:
            to_corporations[payment.corporation] = (
                to_corporations.get(payment.corporation, 0) + payment.amount
            )
    round_ = state.round
    match round_:
        case PrivateAuction():
            round_ = replace(round_, passes_in_a_row=0)
        case OperatingRound():
            round_ = replace(round_, privates_paid=True)
    return replace(
        state,
        players=_players_paid(state.players, to_players),
        corporations=_corporations_paid(state.corporations, to_corporations),
        bank=state.bank - sum(to_players.values()) - sum(to_corporations.values()),
        round=round_,
    )


def _players_paid(players: tuple[Player, ...], amounts: dict[int, int]) -> tuple[Player, ...]:
    """The players, each seat in `amounts` with that much more cash."""
    if not amounts:
        return players
    return tuple(
        replace(p, cash=p.cash + amounts[p.seat]) if p.seat in amounts else p for p in players
    )


def _corporations_paid(
    corporations: tuple[Corporation, ...], amounts: dict[str, int]
) -> tuple[Corporation, ...]:
    """The corporations, each in `amounts` with that much more cash."""
    if not amounts:
        return corporations
    return tuple(
        replace(c, cash=c.cash + amounts[c.id]) if c.id in amounts else c for c in corporations
    )


def _corporation_receives(state: GameState, corporation_id: str, amount: int) -> GameState:
    """`amount` from the bank to the corporation's treasury (negative: to the bank)."""
    corporations = _corporations(state, corporation_id, lambda c: replace(c, cash=c.cash + amount))
    return replace(state, corporations=corporations, bank=state.bank - amount)


def _update_corporation(
    state: GameState, corporation_id: str, change: Callable[[Corporation], Corporation]
) -> GameState:
    return replace(state, corporations=_corporations(state, corporation_id, change))


def _with_shares(player: Player, corporation_id: str, count: int) -> MappingProxyType[str, int]:
    """The player's shares with `count` more of the corporation."""
    return MappingProxyType(
        {**player.shares, corporation_id: player.shares_of(corporation_id) + count}
    )


def _add_shares(state: GameState, seat: int, corporation_id: str, count: int) -> GameState:
    return _update_player(
        state, seat, lambda p: replace(p, shares=_with_shares(p, corporation_id, count))
    )


def _stock_action(state: GameState, seat: int, action: str, corporation_id: str) -> GameState:
    return replace(state, round=_after_stock_action(state, seat, action, corporation_id))


def _after_stock_action(
    state: GameState, seat: int, action: str, corporation_id: str
) -> Round | None:
    stock_round = state.round
    if isinstance(stock_round, OperatingRound):  # an emergency sale (8.7.6)
        return replace(stock_round, sold_for_train=stock_round.sold_for_train | {corporation_id})
    if not isinstance(stock_round, StockRound):
        return stock_round
    if action != "sell":
        return replace(
            stock_round, actions=(*stock_round.actions, action), passes_in_a_row=0, last_actor=seat
        )
    return replace(
        stock_round,
        actions=(*stock_round.actions, action),
        passes_in_a_row=0,
        sold=stock_round.sold | {(seat, corporation_id)},
        sold_this_turn=stock_round.sold_this_turn | {corporation_id},
        last_actor=seat,
    )


def _move_token(state: GameState, corporation_id: str, position: tuple[int, int]) -> GameState:
    moved, moves = _token_moved(state, state.corporation(corporation_id), position)
    if moves == state.market_moves:
        return state
    corporations = _corporations(state, corporation_id, lambda _: moved)
    return replace(state, corporations=corporations, market_moves=moves)


def _token_moved(
    state: GameState, corporation: Corporation, position: tuple[int, int]
) -> tuple[Corporation, int]:
    """The corporation with its stock token on `position`, and the count of token arrivals
    after: a token entering a space goes beneath those already there (3.4)."""
    if corporation.position == position:
        return corporation, state.market_moves
    arrival = state.market_moves + 1
    return replace(corporation, position=position, arrival=arrival), arrival


def _corporation_started(state: GameState, event: ev.CorporationStarted) -> GameState:
    state = _pay_bank(state, event.seat, 2 * event.par)
    state = _add_shares(state, event.seat, event.corporation, 2)
    state = _update_corporation(
        state,
        event.corporation,
        lambda c: replace(
            c, par=event.par, initial_offering=c.initial_offering - 2, president=event.seat
        ),
    )
    state = _move_token(state, event.corporation, event.position)
    return _stock_action(state, event.seat, "buy", event.corporation)


def _share_bought(state: GameState, event: ev.ShareBought) -> GameState:
    def buyer(player: Player) -> Player:
        shares = _with_shares(player, event.corporation, 1)
        return replace(player, cash=player.cash - event.price, shares=shares)

    def share_leaves(corporation: Corporation) -> Corporation:
        if event.source == "initial_offering":
            return replace(corporation, initial_offering=corporation.initial_offering - 1)
        return replace(corporation, open_market=corporation.open_market - 1)

    return replace(
        state,
        players=_players(state, event.seat, buyer),
        bank=state.bank + event.price,
        corporations=_corporations(state, event.corporation, share_leaves),
        round=_after_stock_action(state, event.seat, "buy", event.corporation),
    )


def _shares_sold(state: GameState, event: ev.SharesSold) -> GameState:
    proceeds = event.count * event.price

    def seller(player: Player) -> Player:
        shares = _with_shares(player, event.corporation, -event.count)
        return replace(player, cash=player.cash + proceeds, shares=shares)

    sold = state.corporation(event.corporation)
    sold = replace(sold, open_market=sold.open_market + event.count)
    sold, moves = _token_moved(state, sold, event.position)
    return replace(
        state,
        players=_players(state, event.seat, seller),
        bank=state.bank - proceeds,
        corporations=_corporations(state, event.corporation, lambda _: sold),
        market_moves=moves,
        round=_after_stock_action(state, event.seat, "sell", event.corporation),
    )


def _presidency_changed(state: GameState, event: ev.PresidencyChanged) -> GameState:
    return _update_corporation(state, event.corporation, lambda c: replace(c, president=event.seat))


def _corporation_floated(state: GameState, event: ev.CorporationFloated) -> GameState:
    state = _update_corporation(
        state,
        event.corporation,
        lambda c: replace(c, floated=True, cash=c.cash + event.capital),
    )
    return replace(state, bank=state.bank - event.capital)


def _turn_ended(state: GameState, event: ev.TurnEnded) -> GameState:
    stock_round = state.round
    assert isinstance(stock_round, StockRound)
    stock_round = replace(
        stock_round,
        turn=_next_turn(state, stock_round.turn),
        actions=(),
        sold_this_turn=frozenset(),
    )
    return replace(state, round=stock_round)


def _sold_out_price_raised(state: GameState, event: ev.SoldOutPriceRaised) -> GameState:
    return _move_token(state, event.corporation, event.position)


def _stock_round_ended(state: GameState, event: ev.StockRoundEnded) -> GameState:
    return replace(
        state, priority=event.priority, stock_rounds_played=state.stock_rounds_played + 1
    )


def _operating_round_started(state: GameState, event: ev.OperatingRoundStarted) -> GameState:
    sets = state.operating_sets + (1 if event.number == 1 else 0)
    floated = frozenset(c.id for c in state.corporations if c.floated)
    round_ = OperatingRound(number=event.number, of=event.of, floated_at_start=floated)
    return replace(state, round=round_, operating_sets=sets)


def _operating(state: GameState) -> OperatingRound:
    assert isinstance(state.round, OperatingRound), state.round
    return state.round


def _with_round(state: GameState, **changes: object) -> GameState:
    return replace(state, round=replace(_operating(state), **changes))  # type: ignore[arg-type]


def _after(state: GameState, step: Step) -> Step:
    """The step of the turn that follows `step` (the turn's last step ends it instead)."""
    following = turn_steps(state.rules).after(step)
    assert following is not None, f"{step} is the last step of the turn"
    return following


def _corporation_operates(state: GameState, event: ev.CorporationOperates) -> GameState:
    return _with_round(
        state,
        current=event.corporation,
        step=turn_steps(state.rules).first,
        revenue=0,
        sold_for_train=frozenset(),
        bought_private=False,
    )


def _token_on_board(
    state: GameState, corporation: str, hex_: str, city: int, cost: int, round_: Round | None
) -> GameState:
    """A station token on the city, bought for `cost` from the treasury; the round after."""
    assert state.board is not None
    return replace(
        state,
        board=board.apply_token(state.board, corporation, hex_, city),
        corporations=_corporations(
            state,
            corporation,
            lambda c: replace(c, tokens_placed=c.tokens_placed + 1, cash=c.cash - cost),
        ),
        bank=state.bank + cost,
        round=round_,
    )


def _home_token_placed(state: GameState, event: ev.HomeTokenPlaced) -> GameState:
    return _token_on_board(state, event.corporation, event.hex, event.city, 0, state.round)


def _tile_laid(state: GameState, event: ev.TileLaid) -> GameState:
    assert state.board is not None
    laid = board.apply_lay(state.board, event.hex, event.tile, event.rotation)
    if not event.ability:
        corporations = state.corporations
        if event.corporation:
            corporations = _corporations_paid(corporations, {event.corporation: -event.cost})
        return replace(
            state,
            board=laid,
            corporations=corporations,
            bank=state.bank + (event.cost if event.corporation else 0),
            round=replace(_operating(state), step=_after(state, Step.TRACK)),
        )
    state = replace(state, board=laid)
    if event.corporation:
        state = _corporation_receives(state, event.corporation, -event.cost)
    state = replace(state, used_abilities=state.used_abilities | {event.ability})
    if isinstance(state.round, OperatingRound) and state.round.ability is not None:
        return _with_round(state, ability=None)
    return state


def _private_exchanged(state: GameState, event: ev.PrivateExchanged) -> GameState:
    state = _add_shares(state, event.seat, event.corporation, 1)
    state = _update_corporation(
        state,
        event.corporation,
        lambda c: replace(c, initial_offering=c.initial_offering - 1),
    )
    return _privates_closed(state, ev.PrivatesClosed(companies=(event.company,)))


def _ability_offered(state: GameState, event: ev.AbilityOffered) -> GameState:
    return _with_round(state, ability=(event.company, event.seat))


def _ability_declined(state: GameState, event: ev.AbilityDeclined) -> GameState:
    return _with_round(state, ability=None)


def _token_placed(state: GameState, event: ev.TokenPlaced) -> GameState:
    round_ = replace(_operating(state), step=_after(state, Step.TOKEN))
    return _token_on_board(state, event.corporation, event.hex, event.city, event.cost, round_)


#: The steps by their names, as events write them.
_STEPS = {step.value: step for step in Step}


def _step_skipped(state: GameState, event: ev.StepSkipped) -> GameState:
    step = _STEPS.get(event.step) or Step(event.step)  # an unknown name fails as Step's own
    return _with_round(state, step=_after(state, step))


def _trains_ran(state: GameState, event: ev.TrainsRan) -> GameState:
    return _with_round(state, revenue=event.revenue, step=_after(state, Step.ROUTES))


def _operated(
    state: GameState,
    corporation_id: str,
    position: tuple[int, int],
    to_treasury: int,
    to_players: dict[int, int],
) -> GameState:
    """The corporation has paid or withheld: `to_treasury` from the bank to it, `to_players`
    from the bank to those seats, its stock token on `position`, and its next step."""
    moved, moves = _token_moved(state, state.corporation(corporation_id), position)
    moved = replace(moved, cash=moved.cash + to_treasury, has_operated=True)
    return replace(
        state,
        players=_players_paid(state.players, to_players),
        corporations=_corporations(state, corporation_id, lambda _: moved),
        bank=state.bank - to_treasury - sum(to_players.values()),
        market_moves=moves,
        round=replace(_operating(state), step=_after(state, Step.DIVIDEND)),
    )


def _dividends_paid(state: GameState, event: ev.DividendsPaid) -> GameState:
    to_players: dict[int, int] = {}
    for dividend in event.dividends:
        to_players[dividend.seat] = to_players.get(dividend.seat, 0) + dividend.amount
    return _operated(state, event.corporation, event.position, event.to_treasury, to_players)


def _earnings_withheld(state: GameState, event: ev.EarningsWithheld) -> GameState:
    return _operated(state, event.corporation, event.position, event.amount, {})


def _remove_train(trains: tuple[str, ...], train: str) -> tuple[str, ...]:
    index = trains.index(train)
    return trains[:index] + trains[index + 1 :]


def _train_bought(state: GameState, event: ev.TrainBought) -> GameState:
    """The train moves to the buyer, its price from the buyer to the bank or the selling
    corporation, the president's contribution (through the bank: both moves balance) to the
    buyer; an exchanged train leaves it, for the open market unless it rusts. One new state."""
    title = state.title_model
    buyer = state.corporation(event.corporation)
    players, corporations = state.players, state.corporations
    depot, pool, bank = state.depot, state.pool_trains, state.bank
    if event.contribution:
        players = _players(
            state, buyer.president, lambda p: replace(p, cash=p.cash - event.contribution)
        )
    if event.source == "depot":
        left = depot[event.train]
        depot = MappingProxyType({**depot, event.train: left if left == UNLIMITED else left - 1})
        bank += event.price
    elif event.source == "open_market":
        pool = _remove_train(pool, event.train)
        bank += event.price
    else:
        corporations = tuple(
            replace(c, trains=_remove_train(c.trains, event.train), cash=c.cash + event.price)
            if c.id == event.source
            else c
            for c in corporations
        )
    bought = next(c for c in corporations if c.id == buyer.id)
    trains = (*bought.trains, event.train)
    if event.exchanged:
        trains = _remove_train(trains, event.exchanged)
        if event.exchanged not in title.train(event.train).exchange_rusts:
            pool = (*pool, event.exchanged)
    cash = bought.cash + event.contribution - event.price
    corporations = tuple(
        replace(c, cash=cash, trains=trains) if c.id == buyer.id else c for c in corporations
    )
    return replace(
        state,
        players=players,
        corporations=corporations,
        depot=depot,
        pool_trains=pool,
        bank=bank,
    )


def _phase_changed(state: GameState, event: ev.PhaseChanged) -> GameState:
    return replace(state, phase=event.phase)


def _trains_rusted(state: GameState, event: ev.TrainsRusted) -> GameState:
    corporations = tuple(
        replace(c, trains=tuple(t for t in c.trains if t != event.train))
        for c in state.corporations
    )
    pool = tuple(t for t in state.pool_trains if t != event.train)
    return replace(state, corporations=corporations, pool_trains=pool)


def _privates_closed(state: GameState, event: ev.PrivatesClosed) -> GameState:
    closing = set(event.companies)
    players = tuple(
        replace(p, privates=tuple(c for c in p.privates if c not in closing)) for p in state.players
    )
    corporations = tuple(
        replace(c, privates=tuple(x for x in c.privates if x not in closing))
        for c in state.corporations
    )
    owned = {c: s for c, s in state.privates_owned.items() if c not in closing}
    return replace(
        state,
        players=players,
        corporations=corporations,
        privates_owned=MappingProxyType(owned),
        closed_privates=state.closed_privates | closing,
    )


def _trains_over_limit(state: GameState, event: ev.TrainsOverLimit) -> GameState:
    return _with_round(state, discarding=event.corporations)


def _train_discarded(state: GameState, event: ev.TrainDiscarded) -> GameState:
    state = _update_corporation(
        state,
        event.corporation,
        lambda c: replace(c, trains=_remove_train(c.trains, event.train)),
    )
    state = replace(state, pool_trains=(*state.pool_trains, event.train))
    limit = state.title_model.phase(state.phase).train_limit
    discarding = _operating(state).discarding
    if len(state.corporation(event.corporation).trains) <= limit:
        discarding = tuple(c for c in discarding if c != event.corporation)
    return _with_round(state, discarding=discarding)


def _private_sold_to_corporation(state: GameState, event: ev.PrivateSoldToCorporation) -> GameState:
    state = _update_player(
        state,
        event.seat,
        lambda p: replace(
            p,
            cash=p.cash + event.price,
            privates=tuple(c for c in p.privates if c != event.company),
        ),
    )
    state = _update_corporation(
        state,
        event.corporation,
        lambda c: replace(c, cash=c.cash - event.price, privates=(*c.privates, event.company)),
    )
    owned = {c: s for c, s in state.privates_owned.items() if c != event.company}
    state = replace(state, privates_owned=MappingProxyType(owned))
    return _with_round(state, bought_private=True)


def _operating_turn_ended(state: GameState, event: ev.OperatingTurnEnded) -> GameState:
    operated = _operating(state).operated | {event.corporation}
    first = turn_steps(state.rules).first
    return _with_round(state, operated=operated, current="", step=first, revenue=0)


def _operating_round_ended(state: GameState, event: ev.OperatingRoundEnded) -> GameState:
    return state


def _bank_broken(state: GameState, event: ev.BankBroken) -> GameState:
    # Broken in an operating round: that set is the last; in a stock round: the next one.
    in_operating_round = isinstance(state.round, OperatingRound)
    last_set = state.operating_sets + (0 if in_operating_round else 1)
    return replace(state, bank_broken=True, last_set=last_set)


def _player_bankrupt(state: GameState, event: ev.PlayerBankrupt) -> GameState:
    state = _update_player(state, event.seat, lambda p: replace(p, cash=p.cash - event.cash))
    if event.to_bank:
        return replace(state, bank=state.bank + event.cash)
    return _update_corporation(
        state, event.corporation, lambda c: replace(c, cash=c.cash + event.cash)
    )


def _game_ended(state: GameState, event: ev.GameEnded) -> GameState:
    result = GameResult(
        reason=event.reason, net_worths=tuple((n.seat, n.net_worth) for n in event.net_worths)
    )
    return replace(state, result=result)


def _stock_round_started(state: GameState, event: ev.StockRoundStarted) -> GameState:
    return replace(
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
    ev.CorporationStarted: _corporation_started,  # type: ignore[dict-item]
    ev.ShareBought: _share_bought,  # type: ignore[dict-item]
    ev.SharesSold: _shares_sold,  # type: ignore[dict-item]
    ev.PresidencyChanged: _presidency_changed,  # type: ignore[dict-item]
    ev.CorporationFloated: _corporation_floated,  # type: ignore[dict-item]
    ev.TurnEnded: _turn_ended,  # type: ignore[dict-item]
    ev.SoldOutPriceRaised: _sold_out_price_raised,  # type: ignore[dict-item]
    ev.StockRoundEnded: _stock_round_ended,  # type: ignore[dict-item]
    ev.OperatingRoundStarted: _operating_round_started,  # type: ignore[dict-item]
    ev.CorporationOperates: _corporation_operates,  # type: ignore[dict-item]
    ev.HomeTokenPlaced: _home_token_placed,  # type: ignore[dict-item]
    ev.TileLaid: _tile_laid,  # type: ignore[dict-item]
    ev.TokenPlaced: _token_placed,  # type: ignore[dict-item]
    ev.StepSkipped: _step_skipped,  # type: ignore[dict-item]
    ev.TrainsRan: _trains_ran,  # type: ignore[dict-item]
    ev.DividendsPaid: _dividends_paid,  # type: ignore[dict-item]
    ev.EarningsWithheld: _earnings_withheld,  # type: ignore[dict-item]
    ev.TrainBought: _train_bought,  # type: ignore[dict-item]
    ev.PhaseChanged: _phase_changed,  # type: ignore[dict-item]
    ev.TrainsRusted: _trains_rusted,  # type: ignore[dict-item]
    ev.PrivatesClosed: _privates_closed,  # type: ignore[dict-item]
    ev.TrainsOverLimit: _trains_over_limit,  # type: ignore[dict-item]
    ev.TrainDiscarded: _train_discarded,  # type: ignore[dict-item]
    ev.PrivateSoldToCorporation: _private_sold_to_corporation,  # type: ignore[dict-item]
    ev.OperatingTurnEnded: _operating_turn_ended,  # type: ignore[dict-item]
    ev.AbilityOffered: _ability_offered,  # type: ignore[dict-item]
    ev.AbilityDeclined: _ability_declined,  # type: ignore[dict-item]
    ev.PrivateExchanged: _private_exchanged,  # type: ignore[dict-item]
    ev.OperatingRoundEnded: _operating_round_ended,  # type: ignore[dict-item]
    ev.BankBroken: _bank_broken,  # type: ignore[dict-item]
    ev.PlayerBankrupt: _player_bankrupt,  # type: ignore[dict-item]
    ev.GameEnded: _game_ended,  # type: ignore[dict-item]
}
