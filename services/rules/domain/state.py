"""The state of a game: the fold of its events. Immutable; evolve() returns new values."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

EMPTY: MappingProxyType[Any, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Player:
    seat: int
    name: str
    cash: int = 0
    privates: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ClosedAuction:
    """Rulebook 5.2: only the bidders on `company` take part, in `order`, until one is left."""

    company: str
    order: tuple[int, ...]  # seats still in, clockwise
    bids: tuple[tuple[int, int], ...]  # (seat, price), one per seat still in
    turn: int  # index into order

    @property
    def acting(self) -> int:
        return self.order[self.turn]

    @property
    def high_bid(self) -> int:
        return max(price for _seat, price in self.bids)


@dataclass(frozen=True, slots=True)
class PrivateAuction:
    """Rulebook 5.2. `offer` is the column of unsold privates, topmost first."""

    offer: tuple[str, ...]
    prices: MappingProxyType[str, int]
    bids: MappingProxyType[str, tuple[tuple[int, int], ...]]  # company -> ((seat, price), ...)
    turn: int  # index into GameState.order of the player to act
    passes_in_a_row: int = 0
    closed: ClosedAuction | None = None

    @property
    def top(self) -> str:
        return self.offer[0]

    def bids_on(self, company: str) -> tuple[tuple[int, int], ...]:
        return self.bids.get(company, ())

    def committed(self, seat: int, except_company: str | None = None) -> int:
        """Cash the seat has promised in reservation bids (rulebook 5.2: no bidding beyond it)."""
        return sum(
            price
            for company, bids in self.bids.items()
            if company != except_company
            for bidder, price in bids
            if bidder == seat
        )


@dataclass(frozen=True, slots=True)
class StockRound:
    number: int
    turn: int  # index into GameState.order


Round = PrivateAuction | StockRound


@dataclass(frozen=True, slots=True)
class GameState:
    title: str = ""
    beginner_game: bool = False
    bank: int = 0
    players: tuple[Player, ...] = ()  # in play order once drawn
    round: Round | None = None
    priority: int = 0  # seat holding the priority deal
    privates_owned: MappingProxyType[str, int] = field(
        default_factory=lambda: EMPTY
    )  # company -> seat

    @property
    def order(self) -> tuple[int, ...]:
        return tuple(player.seat for player in self.players)

    def player(self, seat: int) -> Player:
        for player in self.players:
            if player.seat == seat:
                return player
        raise KeyError(seat)

    def index_of(self, seat: int) -> int:
        return self.order.index(seat)

    @property
    def acting_seats(self) -> tuple[int, ...]:
        """Who must act now."""
        match self.round:
            case PrivateAuction(closed=ClosedAuction() as closed):
                return (closed.acting,)
            case PrivateAuction(turn=turn) | StockRound(turn=turn):
                return (self.players[turn].seat,)
        return ()
