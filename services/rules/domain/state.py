"""The state of a game: the fold of its events. Immutable; evolve() returns new values."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from services.rules.board import Position, Title
from services.rules.board.title import RulesProfile

EMPTY: MappingProxyType[Any, Any] = MappingProxyType({})

_Value = TypeVar("_Value")
_REPLACERS: dict[type, Any] = {}

if TYPE_CHECKING:
    # mypy checks each change against the fields, as for `dataclasses.replace`.
    from dataclasses import replace as replace
else:

    def replace(value: _Value, /, **changes: Any) -> _Value:
        """`dataclasses.replace` for the frozen state values, at a fraction of its cost (evolve
        makes a few per event): every slot copied and the changed ones set again (or, for the
        game state and the operating round, the instance's dict merged with the changes), with
        no __init__ to run; they have none but the generated one (`test_state_replace` holds
        them to that)."""
        replacer = _REPLACERS.get(type(value))
        if replacer is None:
            replacer = _REPLACERS[type(value)] = _replacer(type(value))
        return replacer(value, changes)

    def _replacer(kind: type) -> Any:
        """A function (value, changes) -> the copy of `value` with `changes`, written out for
        the fields of `kind`: one slot set per field, then one per change (or the value's dict
        merged with the changes, for a class without slots). The same for every
        caller and never changed once made: a cache of code, not of state."""
        names = tuple(f.name for f in dataclasses.fields(kind))
        scope: dict[str, Any] = {
            "_new": object.__new__,
            "_kind": kind,
            "_names": frozenset(names),
            "_unknown": _unknown_field,
        }
        slotted = "__slots__" in kind.__dict__
        lines = ["def replace(value, changes):"]
        if not slotted:
            # Fields in the instance's dict: the value's dict merged with the changes, set as
            # the new one's dict through the class's own descriptor (frozen: no __setattr__).
            scope["_set_dict"] = next(
                k.__dict__["__dict__"].__set__ for k in kind.__mro__ if "__dict__" in k.__dict__
            )
            lines += [
                "    if changes and not _names.issuperset(changes):",
                "        _unknown(_kind, changes)",
                "    new = _new(_kind)",
                "    _set_dict(new, value.__dict__ | changes)",
            ]
        else:
            # Every slot copied, then the changed ones set again (no test per field).
            scope["_setters"] = {name: kind.__dict__[name].__set__ for name in names}
            lines.append("    new = _new(_kind)")
            for name in names:
                scope[f"_set_{name}"] = kind.__dict__[name].__set__  # the slot's own setter
                lines.append(f"    _set_{name}(new, value.{name})")
            lines += [
                "    try:",
                "        for name, change in changes.items():",
                "            _setters[name](new, change)",
                "    except KeyError:",
                "        _unknown(_kind, changes)",
            ]
        lines.append("    return new")
        exec("\n".join(lines), scope)  # generated from the dataclass fields only
        return scope["replace"]

    def _unknown_field(kind: type, changes: dict[str, Any]) -> None:
        names = {f.name for f in dataclasses.fields(kind)}
        unknown = next(name for name in changes if name not in names)
        raise TypeError(f"{kind.__name__} has no field {unknown!r}")


SHARES_PER_CORPORATION = 10
PRESIDENT_SHARES = 2  # the president's certificate is 20%: two shares, one certificate


@dataclass(frozen=True, slots=True)
class Player:
    seat: int
    name: str
    cash: int = 0
    privates: tuple[str, ...] = ()
    shares: MappingProxyType[str, int] = field(default_factory=lambda: EMPTY)  # corporation ->

    def shares_of(self, corporation: str) -> int:
        return self.shares.get(corporation, 0)


@dataclass(frozen=True, slots=True)
class Corporation:
    """A public company. `par` is 0 until it is started; shares are counted in 10% units."""

    id: str
    par: int = 0
    position: tuple[int, int] | None = None  # its stock token on the market
    arrival: int = 0  # when the token entered its space: lower is higher in the stack (3.4)
    initial_offering: int = SHARES_PER_CORPORATION
    open_market: int = 0
    cash: int = 0
    floated: bool = False
    president: int = 0  # seat; 0 while not started
    trains: tuple[str, ...] = ()
    tokens_placed: int = 0  # station tokens on the map, the home token included
    privates: tuple[str, ...] = ()
    has_operated: bool = False

    @property
    def started(self) -> bool:
        return self.par > 0


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
    """Rulebook 7. `actions` are what the acting player did this turn, in order ("sell",
    "buy"); `sold` the (seat, corporation) pairs sold this round (no buying them back)."""

    number: int
    turn: int  # index into GameState.order
    actions: tuple[str, ...] = ()
    passes_in_a_row: int = 0
    sold: frozenset[tuple[int, str]] = frozenset()
    sold_this_turn: frozenset[str] = frozenset()
    last_actor: int = 0  # seat of the last player who bought or sold


class Step(StrEnum):
    """The operating steps of a corporation's turn (rulebook 8.2). Which of them a turn has,
    in which order, is the rules profile's list (services/rules/domain/turn_steps.py)."""

    TRACK = "track"
    TOKEN = "token"
    ROUTES = "routes"
    DIVIDEND = "dividend"
    TRAINS = "trains"
    #: 8.8, as a step of its own at the end of the turn (the site's cut of it).
    PRIVATES = "privates"


#: Without slots, as the game state: evolve replaces it at most events of an operating round,
#: and its dozen fields are copied as one dict.
@dataclass(frozen=True)
class OperatingRound:
    """Rulebook 8: round `number` of a set of `of`. `current` is the corporation operating,
    at `step`; `discarding` lists corporations that must first discard trains over the limit
    (8.7.4)."""

    number: int
    of: int
    operated: frozenset[str] = frozenset()
    current: str = ""
    step: Step = Step.TRACK
    revenue: int = 0
    discarding: tuple[str, ...] = ()
    privates_paid: bool = False
    #: A private's ability the given seat may use now (company, seat), e.g. ER when sold.
    ability: tuple[str, int] | None = None
    #: The corporations floated when the round began: only they operate in it (7.4, 14.2: one
    #: that floats during the round, say by an exchange, operates from the next round on).
    floated_at_start: frozenset[str] = frozenset()
    #: The corporations whose shares the operating corporation's president has sold in this
    #: turn (to raise a forced train purchase, 8.7.6).
    sold_for_train: frozenset[str] = frozenset()
    #: The operating corporation has bought a private in this turn (its other actions take it
    #: past the track step): with `step`, whether it has acted yet.
    bought_private: bool = False

    @property
    def corporation_acted(self) -> bool:
        """Whether the operating corporation has done anything yet in its turn."""
        return self.step is not Step.TRACK or self.bought_private


Round = PrivateAuction | StockRound | OperatingRound


@dataclass(frozen=True, slots=True)
class GameResult:
    reason: str  # "bankrupt", "bank" or "ended"
    net_worths: tuple[tuple[int, int], ...]  # (seat, net worth)


#: Without slots, unlike the other values: its two dozen fields are copied as one dict.
@dataclass(frozen=True)
class GameState:
    title: str = ""
    beginner_game: bool = False
    trust_submitted_revenue: bool = False
    undo_allowed: bool = False
    #: The title's rules profile (profiles.toml): which of the site's departures apply.
    rules_profile: str = "rulebook"
    bank: int = 0
    players: tuple[Player, ...] = ()  # in play order once drawn
    round: Round | None = None
    priority: int = 0  # seat holding the priority deal
    # company -> seat of the owning player
    privates_owned: MappingProxyType[str, int] = field(default_factory=lambda: EMPTY)
    corporations: tuple[Corporation, ...] = ()
    stock_rounds_played: int = 0
    market_moves: int = 0  # counts token arrivals, to order stacks
    phase: str = "2"
    depot: MappingProxyType[str, int] = field(default_factory=lambda: EMPTY)  # train -> left
    pool_trains: tuple[str, ...] = ()  # trains in the open market
    closed_privates: frozenset[str] = frozenset()
    operating_sets: int = 0  # sets of operating rounds started
    bank_broken: bool = False
    last_set: int = 0  # when the bank broke: the set of operating rounds that ends the game
    result: GameResult | None = None
    board: Position | None = None  # tiles and station tokens on the map
    used_abilities: frozenset[str] = frozenset()  # privates whose one-time ability is spent

    @property
    def title_model(self) -> Title:
        """The game's title (its board, economy, market and profiles): held by the board once
        the game is created."""
        if self.board is None:
            raise ValueError("the game has not been created: it has no title yet")
        return self.board.title

    @property
    def rules(self) -> RulesProfile:
        """The switches of the game's rules profile (the title's profiles.toml)."""
        return self.title_model.profile(self.rules_profile)

    @property
    def privates_without_abilities(self) -> bool:
        """A beginner game under `beginner_privates_without_abilities`."""
        return self.beginner_game and self.rules.beginner_privates_without_abilities

    def corporation(self, corporation_id: str) -> Corporation:
        for corporation in self.corporations:
            if corporation.id == corporation_id:
                return corporation
        raise KeyError(corporation_id)

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
        if self.result is not None:
            return ()
        match self.round:
            case PrivateAuction(closed=ClosedAuction() as closed):
                return (closed.acting,)
            case OperatingRound(ability=(_company, seat)):
                return (seat,)
            case OperatingRound(discarding=(first, *_)):
                return (self.corporation(first).president,)
            case OperatingRound(current=current) if current:
                return (self.corporation(current).president,)
            case PrivateAuction(turn=turn) | StockRound(turn=turn):
                return (self.players[turn].seat,)
        return ()
