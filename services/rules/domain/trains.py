"""Trains and phases (rulebook 8.7 and 9): what can be bought, and what a purchase sets off."""

from __future__ import annotations

from typing import NamedTuple

from services.rules.board.title import UNLIMITED, Phase, Title
from services.rules.domain import events as ev
from services.rules.domain.ordering import stock_price_order
from services.rules.domain.state import Corporation, GameState

DEPOT = "depot"
OPEN_MARKET = "open_market"


class TrainOffer(NamedTuple):
    """A train the operating corporation may buy: from `source` for min_price..max_price,
    giving back `exchange` if set. A named tuple, not a frozen dataclass: the train step makes
    a dozen at a state, and a tuple is made at a fraction of the cost."""

    train: str
    source: str
    min_price: int
    max_price: int
    exchange: str = ""


def phase(state: GameState) -> Phase:
    return state.title_model.phase(state.phase)


def train_limit(state: GameState) -> int:
    return phase(state).train_limit


def depot_trains(state: GameState) -> list[str]:
    """The lowest rank left in the depot, and any rank whose `available_from` phase has
    started (Diesels from phase 6, 8.7.1)."""
    title = state.title_model
    current = title.phase_index(state.phase)
    left = [train for train in title.trains if state.depot.get(train.name, 0) != 0]
    return [
        train.name
        for index, train in enumerate(left)
        if index == 0
        or (train.available_from and title.phase_index(train.available_from) <= current)
    ]


#: The last state and corporation asked about, by identity, with their offers: a memo of
#: `_offers` (the train step asks twice or three times a state: whether it ends by itself,
#: then what may be done). Holding them, their ids are not reused.
_LAST: list[tuple[GameState, Corporation, tuple[TrainOffer, ...]]] = []


def offers(state: GameState, corporation: Corporation) -> list[TrainOffer]:
    """Every train `corporation` may buy now with its own treasury."""
    last = _LAST[0] if _LAST else None
    if last is not None and last[0] is state and last[1] is corporation:
        return list(last[2])
    found = _offers(state, corporation)
    _LAST[:] = [(state, corporation, tuple(found))]
    return found


def _offers(state: GameState, corporation: Corporation) -> list[TrainOffer]:
    title = state.title_model
    found: list[TrainOffer] = []
    at_limit = len(corporation.trains) >= train_limit(state)
    for name in depot_trains(state):
        train = title.train(name)
        if not at_limit and train.price <= corporation.cash:
            found.append(TrainOffer(name, DEPOT, train.price, train.price))
        if train.exchange_price and train.exchange_price <= corporation.cash:
            for old in sorted(set(corporation.trains) & set(train.exchange_from)):
                found.append(
                    TrainOffer(name, DEPOT, train.exchange_price, train.exchange_price, old)
                )
    if at_limit:
        return found
    for name in sorted(set(state.pool_trains), key=title.train_rank):
        price = title.train(name).price
        if price <= corporation.cash:
            found.append(TrainOffer(name, OPEN_MARKET, price, price))
    if corporation.cash >= 1:
        for other in state.corporations:
            if other.id == corporation.id or not other.trains:
                continue
            for name in sorted(set(other.trains), key=title.train_rank):
                found.append(TrainOffer(name, other.id, 1, corporation.cash))
    return found


def cheapest_available(state: GameState) -> tuple[str, str, int]:
    """(train, source, price) of the cheapest train from the depot or the open market: what a
    corporation forced to buy a train must buy with its president's help (8.7.6)."""
    title = state.title_model
    choices = [(title.train(name).price, DEPOT, name) for name in depot_trains(state)]
    choices += [(title.train(name).price, OPEN_MARKET, name) for name in set(state.pool_trains)]
    price, source, name = min(
        choices, key=lambda choice: (choice[0], choice[1] != DEPOT, choice[2])
    )
    return name, source, price


def after_purchase(state: GameState, bought: ev.TrainBought) -> list[ev.Event]:
    """The phase change a purchase from the depot sets off, with all its effects (8.7.2)."""
    title = state.title_model
    new_phase = title.phase_started_by(bought.train)
    if bought.source != DEPOT or new_phase is None or _phase_reached(title, state, new_phase):
        return []
    events: list[ev.Event] = [ev.PhaseChanged(phase=new_phase.name)]
    for train in title.trains:
        if train.rusts_on == new_phase.name:
            events.append(ev.TrainsRusted(train=train.name))
    if new_phase.close_privates:
        closing = tuple(
            company.id
            for company in title.privates
            if company.id not in state.closed_privates
            and not (
                company.id in new_phase.privates_survive_if_player_owned
                and company.id in state.privates_owned
            )
        )
        if closing:
            events.append(ev.PrivatesClosed(companies=closing))
    return events


def _phase_reached(title: Title, state: GameState, candidate: Phase) -> bool:
    return title.phase_index(candidate.name) <= title.phase_index(state.phase)


def over_limit(state: GameState, first: str) -> tuple[str, ...]:
    """Corporations holding more trains than the limit: `first` (whose purchase changed the
    phase), then the others in stock price order (8.7.4)."""
    limit = train_limit(state)
    others = [c for c in stock_price_order(state) if c.id != first]
    ordered = [state.corporation(first), *others]
    return tuple(c.id for c in ordered if len(c.trains) > limit)


def in_depot(state: GameState, train: str) -> bool:
    left = state.depot.get(train, 0)
    return left == UNLIMITED or left > 0
