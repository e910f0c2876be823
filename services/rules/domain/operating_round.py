"""Rulebook 8: the operating round.

A corporation's turn runs through the steps of 8.2. What happens without a choice (privates
paying, the next corporation starting, the home token, skipping a step with nothing to do, the
end of the round or the set) comes from `next_event`; what the president chooses comes through
`decide`. The option functions serve both decide() and the legal-action list.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TypeVar

from kernel.rejection import Kind, Rejected, quoted
from services.rules.domain import events as ev
from services.rules.domain import on_the_board
from services.rules.domain.commands import (
    BuyPrivateForCorporation,
    BuyTrain,
    DeclareBankruptcy,
    DiscardTrain,
    LayPrivateTile,
    LayTile,
    Pass,
    PayDividends,
    PlaceToken,
    PlayerCommand,
    RunRoutes,
    SellShares,
)
from services.rules.domain.evolve import fold
from services.rules.domain.game_end import game_ended
from services.rules.domain.legal import (
    BankruptcyOption,
    BuyTrainOption,
    CorporationPrivateOption,
    DiscardOption,
    DividendOption,
    LayTileOption,
    LegalAction,
    PassOption,
    PlaceTokenOption,
    PrivateTileOption,
    RunRoutesOption,
    SellOption,
)
from services.rules.domain.ordering import stock_price_order
from services.rules.domain.route_pricing import can_run_routes
from services.rules.domain.site_deal import SITE_BEGINNER_REVENUES
from services.rules.domain.state import (
    PRESIDENT_SHARES,
    Corporation,
    GameState,
    OperatingRound,
    Step,
)
from services.rules.domain.stock_round import OPEN_MARKET_LIMIT
from services.rules.domain.trains import (
    DEPOT,
    TrainOffer,
    after_purchase,
    cheapest_available,
    offers,
    over_limit,
    phase,
)
from services.rules.domain.turn_steps import WAIT_FOR_ABILITY, EndsWhen, turn_steps

_T = TypeVar("_T")
PRIVATE_PRICE_RANGE = (0.5, 2.0)  # of face value (8.8)


def _checked(found: _T | Rejected) -> _T:
    if isinstance(found, Rejected):
        raise found
    return found


def _current(state: GameState, round_: OperatingRound) -> Corporation:
    return state.corporation(round_.current)


# ---- what happens without a choice ---------------------------------------------------------


def next_event(state: GameState) -> ev.Event | None:
    round_ = state.round
    if not isinstance(round_, OperatingRound) or state.result is not None:
        return None
    if round_.discarding:
        return None
    if not round_.current:
        return _between_turns(state, round_)
    corporation = _current(state, round_)
    spec = turn_steps(state.rules).spec(round_.step)
    if any(_ends(state, round_, corporation, condition) for condition in spec.ends_when):
        return _step_ended(state, round_, corporation)
    return None


def _ends(
    state: GameState, round_: OperatingRound, corporation: Corporation, condition: EndsWhen
) -> bool:
    """Whether `condition` holds, ending the current step by itself. A private's pending lay
    (the ER's seller's, 15 C) comes first: a tile it lays may open a token, a route or a
    purchase."""
    if condition in WAIT_FOR_ABILITY and round_.ability is not None:
        return False
    match condition:
        case EndsWhen.NO_TRAINS:
            return not corporation.trains
        case EndsWhen.NO_REVENUE:
            return round_.revenue == 0
        case EndsWhen.NO_TOKEN:
            return next(iter(on_the_board.tokens(state, corporation)), None) is None
        case EndsWhen.NO_ROUTE:
            return not can_run_routes(state, corporation.id)
        case EndsWhen.NO_TRAIN_TO_BUY:
            return not must_buy_train(state, corporation) and not offers(state, corporation)
        case EndsWhen.NO_PRIVATE_FOR_SALE:
            return not corporation_private_options(state, corporation)


def _step_ended(state: GameState, round_: OperatingRound, corporation: Corporation) -> ev.Event:
    """The event that ends the current step with nothing done there: a route or dividend step
    withholds nothing (8.6: the share price falls), the turn's last step ends the turn, any
    other step is skipped."""
    if round_.step in {Step.ROUTES, Step.DIVIDEND}:
        return _withhold(state, corporation, 0)
    if turn_steps(state.rules).after(round_.step) is None:
        return ev.OperatingTurnEnded(corporation=corporation.id)
    return ev.StepSkipped(corporation=corporation.id, step=round_.step.value)


def _between_turns(state: GameState, round_: OperatingRound) -> ev.Event:
    if not round_.privates_paid:
        return ev.PrivateRevenuePaid(payments=private_revenue(state))
    # 7.4 and 14.2: a corporation operates, and gets its home token (placed before anyone
    # operates), from the first operating round that begins after it floated.
    operating = [c for c in stock_price_order(state) if c.id in round_.floated_at_start]
    for corporation in operating:
        if corporation.tokens_placed == 0:
            charter = state.title_model.charter(corporation.id)
            return ev.HomeTokenPlaced(corporation.id, charter.home, charter.home_city)
    for corporation in operating:
        if corporation.id not in round_.operated:
            return ev.CorporationOperates(corporation=corporation.id)
    return ev.OperatingRoundEnded(number=round_.number)


def after_round(state: GameState, ended: ev.OperatingRoundEnded) -> ev.Event:
    """After an operating round: the next of the set, or the end of the set."""
    round_ = state.round
    assert isinstance(round_, OperatingRound)
    if round_.number < round_.of:
        return ev.OperatingRoundStarted(number=round_.number + 1, of=round_.of)
    if state.bank_broken and state.operating_sets >= state.last_set:
        return game_ended(state, "bank")
    return ev.StockRoundStarted(number=state.stock_rounds_played + 1, priority=state.priority)


def private_revenue(state: GameState) -> tuple[ev.Payment, ...]:
    """Every open private pays its owner (8.1); the revenue may change with the phase. Under
    `beginner_private_revenues_as_site` a beginner game pays the site's beginner revenues."""
    title = state.title_model
    payments: list[ev.Payment] = []
    for company in title.privates:
        if company.id in state.closed_privates:
            continue
        amount = company.revenue
        if state.beginner_game and state.rules.beginner_private_revenues_as_site:
            amount = SITE_BEGINNER_REVENUES.get(company.id, amount)
        change = title.private_revenue_from_phase.get(company.id)
        if change and title.phase_index(state.phase) >= title.phase_index(change.phase):
            amount = change.revenue
        if company.id in state.privates_owned:
            payments.append(ev.Payment(state.privates_owned[company.id], company.id, amount))
        for corporation in state.corporations:
            if company.id in corporation.privates:
                payments.append(ev.Payment(0, company.id, amount, corporation.id))
    return tuple(payments)


def _withhold(state: GameState, corporation: Corporation, amount: int) -> ev.EarningsWithheld:
    assert corporation.position is not None
    position = state.title_model.market.left(corporation.position)
    return ev.EarningsWithheld(corporation=corporation.id, amount=amount, position=position)


# ---- options ---------------------------------------------------------------------------------


def must_buy_train(state: GameState, corporation: Corporation) -> bool:
    """8.7.5: a corporation without a train whose token connects to another revenue centre
    must buy one by the end of its turn."""
    return not corporation.trains and on_the_board.has_route(state, corporation)


def _train_step_options(
    state: GameState, round_: OperatingRound, corporation: Corporation
) -> Iterator[LegalAction]:
    seat = corporation.president
    forced = must_buy_train(state, corporation)
    train_offers = offers(state, corporation)
    if forced:
        train_offers = [o for o in train_offers if o.source in {DEPOT, "open_market"}] or (
            train_offers
        )
    for offer in train_offers:
        yield _offer_option(offer, seat)
    if forced and not _affordable_depot_or_market(train_offers):
        yield from _forced_purchase_options(state, corporation)
    yield from corporation_private_options(state, corporation)
    if not forced:
        yield PassOption(seat)


def _affordable_depot_or_market(train_offers: list[TrainOffer]) -> bool:
    return any(o.source in {DEPOT, "open_market"} for o in train_offers)


def _offer_option(offer: TrainOffer, seat: int) -> BuyTrainOption:
    return BuyTrainOption(
        train=offer.train,
        source=offer.source,
        min_price=offer.min_price,
        max_price=offer.max_price,
        exchange=offer.exchange,
        seat=seat,
    )


def _forced_purchase_options(state: GameState, corporation: Corporation) -> list[LegalAction]:
    """8.7.6: the cheapest train with the president's cash; else share sales; else bankruptcy."""
    train, source, price = cheapest_available(state)
    president = state.player(corporation.president)
    needed = price - corporation.cash
    if president.cash >= needed:
        return [BuyTrainOption(train, source, price, price, "", needed, corporation.president)]
    short = needed - president.cash
    sales: list[LegalAction] = list(emergency_sales(state, corporation, short))
    if sum(o.max_count * o.price for o in sales if isinstance(o, SellOption)) >= short:
        return sales
    # Selling all they may does not raise enough: the president may sell some first, but goes
    # bankrupt in the end, and bankruptcy sells what is left (8.7.6).
    return [*sales, BankruptcyOption(corporation.president)]


def emergency_sales(state: GameState, corporation: Corporation, short: int) -> list[SellOption]:
    """Shares the president may sell to raise `short` (8.7.6): the usual limits, never a
    president's certificate, no presidency change of the seller's corporations, and no more
    shares than needed. Under the `forced_sale_once_per_corporation` switch, none of a
    corporation whose shares they have already sold for this purchase."""
    seat = corporation.president
    player = state.player(seat)
    market = state.title_model.market
    options: list[SellOption] = []
    sold: frozenset[str] = frozenset()
    if state.rules.forced_sale_once_per_corporation and isinstance(state.round, OperatingRound):
        sold = state.round.sold_for_train
    for other in state.corporations:
        held = player.shares_of(other.id)
        if not held or other.position is None or other.id in sold:
            continue
        limit = min(held, OPEN_MARKET_LIMIT - other.open_market)
        if other.president == seat:
            most_of_others = max(p.shares_of(other.id) for p in state.players if p.seat != seat)
            limit = min(limit, held - max(PRESIDENT_SHARES, most_of_others))
        price = market.price(other.position)
        limit = min(limit, math.ceil(short / price))
        if limit > 0:
            options.append(SellOption(other.id, limit, price, seat))
    return options


def corporation_private_options(
    state: GameState, corporation: Corporation
) -> list[CorporationPrivateOption]:
    """8.8: privates the corporation may buy from players now."""
    if state.beginner_game or not phase(state).private_purchases or corporation.cash < 1:
        return []  # 14.1: in the beginner game corporations never buy privates
    title = state.title_model
    options = []
    for company, seat in sorted(state.privates_owned.items()):
        if company in state.closed_privates:
            continue
        face = title.private(company).face_value
        low = max(1, math.ceil(face * PRIVATE_PRICE_RANGE[0]))
        high = min(int(face * PRIVATE_PRICE_RANGE[1]), corporation.cash)
        if low <= high:
            options.append(
                CorporationPrivateOption(company, seat, low, high, corporation.president)
            )
    return options


def legal_actions(state: GameState, round_: OperatingRound) -> list[LegalAction]:
    return list(each_legal_action(state, round_))


def each_legal_action(state: GameState, round_: OperatingRound) -> Iterator[LegalAction]:
    """The legal actions in the order they are listed, found one at a time: whether there is
    any (or only a pass) is known without listing every lay."""
    if state.result is not None:
        return
    if round_.discarding:
        corporation = state.corporation(round_.discarding[0])
        for train in sorted(set(corporation.trains)):
            yield DiscardOption(corporation.id, train, corporation.president)
        return
    if not round_.current:
        return
    corporation = _current(state, round_)
    if round_.ability is not None:
        company, seat = round_.ability
        for o in on_the_board.lays(state, corporation, company):
            yield PrivateTileOption(company, o.hex, o.tile, o.rotation, seat)
        yield PassOption(seat)
        return
    seat = corporation.president
    if round_.step is Step.TRAINS:
        yield from _train_step_options(state, round_, corporation)
        return
    yield from corporation_private_options(state, corporation)
    match round_.step:
        case Step.TRACK:
            for lay in on_the_board.lays(state, corporation):
                yield LayTileOption(lay.hex, lay.tile, lay.rotation, lay.cost, seat)
            yield PassOption(seat)
        case Step.TOKEN:
            for token in on_the_board.tokens(state, corporation):
                yield PlaceTokenOption(token.hex, token.city, token.cost, seat)
            yield PassOption(seat)
        case Step.ROUTES:
            yield RunRoutesOption(corporation.id, corporation.trains, seat)
        case Step.DIVIDEND:
            yield DividendOption(corporation.id, round_.revenue, seat)
        case Step.PRIVATES:
            yield PassOption(seat)


# ---- decide --------------------------------------------------------------------------------


def decide(
    state: GameState, round_: OperatingRound, command: PlayerCommand
) -> ev.Event | list[ev.Event]:
    return _decide(state, round_, command)


def next_events(state: GameState, round_: OperatingRound, last: ev.Event) -> list[ev.Event]:
    """What follows without anyone choosing."""
    if isinstance(last, ev.TrainBought):
        changes = after_purchase(state, last)
        if changes:
            excess = over_limit(fold(changes, state), last.corporation)
            return changes + ([ev.TrainsOverLimit(corporations=excess)] if excess else [])
    if isinstance(last, ev.OperatingRoundEnded):
        return [after_round(state, last)]
    if isinstance(last, ev.PlayerBankrupt):
        return [game_ended(state, "bankrupt")]
    if (
        isinstance(last, ev.PrivateSoldToCorporation)
        and state.title_model.private(last.company).lay_when_sold
    ):
        return [ev.AbilityOffered(last.company, last.seat, last.corporation)]
    follow = next_event(state)
    return [follow] if follow is not None else []


def _not_now(command: PlayerCommand, round_: OperatingRound) -> Rejected:
    return Rejected(
        "ACTION_NOT_ALLOWED",
        f"{type(command).__name__} is not allowed at the {round_.step.value} step",
        details={"action": type(command).__name__, "step": round_.step.value},
    )


def _decide(
    state: GameState, round_: OperatingRound, command: PlayerCommand
) -> ev.Event | list[ev.Event]:
    if round_.discarding:
        return _decide_discard(state, round_, command)
    corporation = _current(state, round_)
    if round_.ability is not None:
        return _decide_ability(state, corporation, round_.ability, command)
    if not turn_steps(state.rules).takes(round_.step, command):
        raise _not_now(command, round_)
    if isinstance(command, BuyPrivateForCorporation):
        return _decide_private(state, corporation, command)
    match round_.step, command:
        case ((Step.TRACK | Step.TOKEN | Step.PRIVATES), Pass()):
            return _passed(state, round_, corporation)
        case Step.TRACK, LayTile(hex=hex_, tile=tile, rotation=rotation):
            lay = on_the_board.check_lay(state, corporation, hex_, tile, rotation)
            return ev.TileLaid(corporation.id, hex_, tile, rotation, lay.cost)
        case Step.TOKEN, PlaceToken(hex=hex_, city=city):
            token = on_the_board.check_token(state, corporation, hex_, city)
            return ev.TokenPlaced(corporation.id, hex_, city, token.cost)
        case Step.ROUTES, RunRoutes(priced=priced):
            if priced is None:
                raise Rejected("ROUTES_NOT_CHECKED", "routes must be checked before running")
            return _decide_routes(state, corporation, priced)
        case Step.DIVIDEND, PayDividends(payout=payout):
            if payout:
                return dividends_paid(state, corporation, round_.revenue)
            return _withhold(state, corporation, round_.revenue)
        case Step.TRAINS, BuyTrain():
            return _decide_train(state, round_, corporation, command)
        case Step.TRAINS, SellShares(corporation=sold, count=count):
            return _decide_emergency_sale(state, round_, corporation, sold, count)
        case Step.TRAINS, DeclareBankruptcy(seat=seat):
            if not any(
                isinstance(o, BankruptcyOption)
                for o in _train_step_options(state, round_, corporation)
            ):
                raise Rejected(
                    "NOT_BANKRUPT", "bankruptcy only when no legal sale raises enough (8.7.6)"
                )
            return _bankruptcy(state, corporation, seat)
        case Step.TRAINS, Pass():
            if must_buy_train(state, corporation):
                raise Rejected(
                    "MUST_BUY_TRAIN",
                    f"{corporation.id} owns no train and must buy one (rulebook 8.7.5)",
                    details={"corporation": corporation.id},
                )
            return _passed(state, round_, corporation)
    raise _not_now(command, round_)


def _passed(state: GameState, round_: OperatingRound, corporation: Corporation) -> ev.Event:
    """A pass leaves the step; at the turn's last step it ends the turn."""
    if turn_steps(state.rules).after(round_.step) is None:
        return ev.OperatingTurnEnded(corporation=corporation.id)
    return ev.StepSkipped(corporation=corporation.id, step=round_.step.value)


def _decide_ability(
    state: GameState, corporation: Corporation, ability: tuple[str, int], command: PlayerCommand
) -> ev.Event:
    company, seat = ability
    match command:
        case LayPrivateTile(company=used, hex=hex_, tile=tile, rotation=rotation) if (
            used == company
        ):
            lay = on_the_board.check_lay(state, corporation, hex_, tile, rotation, company)
            return ev.TileLaid(corporation.id, hex_, tile, rotation, lay.cost, ability=company)
        case Pass():
            return ev.AbilityDeclined(company=company, seat=seat)
    raise Rejected(
        "ABILITY_PENDING",
        f"the seller of {quoted(company)} may first use its ability, or pass (rulebook 15)",
        details={"company": quoted(company)},
    )


def _bankruptcy(state: GameState, corporation: Corporation, seat: int) -> list[ev.Event]:
    """8.7.6: the president sells all they legally may, then all their cash goes to the
    corporation (to the bank under the `bankrupt_cash_to_bank` switch) and they are bankrupt."""
    market = state.title_model.market
    sales: list[ev.Event] = []
    raised = 0
    for option in emergency_sales(state, corporation, short=10**9):
        other = state.corporation(option.corporation)
        assert other.position is not None
        sales.append(
            ev.SharesSold(
                seat=seat,
                corporation=option.corporation,
                count=option.max_count,
                price=option.price,
                position=market.down(other.position, option.max_count),
            )
        )
        raised += option.max_count * option.price
    cash = state.player(seat).cash + raised
    to_bank = state.rules.bankrupt_cash_to_bank
    bankrupt = ev.PlayerBankrupt(seat=seat, corporation=corporation.id, cash=cash, to_bank=to_bank)
    return [*sales, bankrupt]


def _decide_discard(state: GameState, round_: OperatingRound, command: PlayerCommand) -> ev.Event:
    corporation = state.corporation(round_.discarding[0])
    if not isinstance(command, DiscardTrain):
        raise Rejected(
            "MUST_DISCARD",
            f"{corporation.id} must first discard a train over the limit (rulebook 8.7.4)",
            details={"corporation": corporation.id},
        )
    if command.corporation != corporation.id or command.train not in corporation.trains:
        raise Rejected(
            "NO_SUCH_TRAIN",
            f"{corporation.id} has no {quoted(command.train)}-train to discard",
            details={"corporation": corporation.id, "train": quoted(command.train)},
        )
    return ev.TrainDiscarded(corporation=corporation.id, train=command.train)


def _decide_routes(
    state: GameState, corporation: Corporation, routes: tuple[ev.TrainRun, ...]
) -> ev.Event:
    remaining = list(corporation.trains)
    for route in routes:
        if route.train not in remaining:
            raise Rejected(
                "TRAIN_NOT_OWNED",
                f"{corporation.id} has no (other) {quoted(route.train)}-train to run",
                details={"train": quoted(route.train)},
            )
        remaining.remove(route.train)
        if route.revenue < 0:
            raise Rejected(
                "INVALID_REVENUE",
                "a route's revenue is never negative",
                Kind.INVALID_ARGUMENT,
                {"field": "routes.revenue"},
            )
    return ev.TrainsRan(
        corporation=corporation.id, routes=routes, revenue=sum(r.revenue for r in routes)
    )


def dividends_paid(state: GameState, corporation: Corporation, revenue: int) -> ev.DividendsPaid:
    """8.6.1: revenue / 10 per share; initial-offering shares pay nobody, open-market shares
    pay the treasury."""
    per_share = revenue // 10
    assert corporation.position is not None
    dividends = tuple(
        ev.Dividend(p.seat, per_share * p.shares_of(corporation.id))
        for p in state.players
        if p.shares_of(corporation.id)
    )
    return ev.DividendsPaid(
        corporation=corporation.id,
        revenue=revenue,
        per_share=per_share,
        dividends=dividends,
        to_treasury=per_share * corporation.open_market,
        position=state.title_model.market.right(corporation.position),
    )


def _decide_train(
    state: GameState, round_: OperatingRound, corporation: Corporation, command: BuyTrain
) -> ev.Event:
    for option in _train_step_options(state, round_, corporation):
        if isinstance(option, BuyTrainOption) and (
            option.train,
            option.source,
            option.exchange,
        ) == (command.train, command.source, command.exchange):
            if not option.min_price <= command.price <= option.max_price:
                raise Rejected(
                    "INVALID_PRICE",
                    f"this train costs ¥{option.min_price}"
                    + (f" to ¥{option.max_price}" if option.max_price != option.min_price else ""),
                    details={"min_price": option.min_price, "max_price": option.max_price},
                )
            return ev.TrainBought(
                corporation=corporation.id,
                train=command.train,
                source=command.source,
                price=command.price,
                exchanged=command.exchange,
                contribution=option.contribution,
            )
    raise Rejected(
        "TRAIN_NOT_AVAILABLE",
        f"{corporation.id} cannot buy a {quoted(command.train)}-train from "
        f"{quoted(command.source)} now "
        "(availability, train limit, treasury: rulebook 8.7)",
        details={"train": quoted(command.train), "source": quoted(command.source)},
    )


def _decide_emergency_sale(
    state: GameState, round_: OperatingRound, corporation: Corporation, sold: str, count: int
) -> ev.Event:
    option = next(
        (
            o
            for o in _train_step_options(state, round_, corporation)
            if isinstance(o, SellOption) and o.corporation == sold
        ),
        None,
    )
    if option is None or not 1 <= count <= option.max_count:
        raise Rejected(
            "CANNOT_SELL",
            "shares are sold in an operating round only to raise a forced train purchase, "
            "and no more than needed (rulebook 8.7.6)",
            details={"corporation": sold},
        )
    other = state.corporation(sold)
    assert other.position is not None
    return ev.SharesSold(
        seat=corporation.president,
        corporation=sold,
        count=count,
        price=option.price,
        position=state.title_model.market.down(other.position, count),
    )


def _decide_private(
    state: GameState, corporation: Corporation, command: BuyPrivateForCorporation
) -> ev.Event:
    for option in corporation_private_options(state, corporation):
        if option.company == command.company:
            if not option.min_price <= command.price <= option.max_price:
                raise Rejected(
                    "INVALID_PRICE",
                    f"{quoted(command.company)} sells for ¥{option.min_price} to "
                    f"¥{option.max_price}",
                    details={"min_price": option.min_price, "max_price": option.max_price},
                )
            return ev.PrivateSoldToCorporation(
                corporation=corporation.id,
                company=command.company,
                seat=option.owner,
                price=command.price,
            )
    raise Rejected(
        "PRIVATE_NOT_FOR_SALE",
        f"{corporation.id} cannot buy {quoted(command.company)} now "
        "(phases 3-4, player-owned: 8.8)",
        details={"company": quoted(command.company)},
    )
