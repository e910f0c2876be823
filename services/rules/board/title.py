"""A title: everything about a game that never changes while it is played, as one immutable
aggregate loaded from its data folder (services/rules/board/loader.py): the board (hexes, tiles,
abilities), the economy (bank, player counts, private companies, corporations, trains, phases),
the stock market and the rules profiles.

A game's changing board is a `Position`, which holds its `Title`; the rest of the game reaches
the title through it (`GameState.title_model`). Nothing here names a particular title.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from functools import cache
from typing import Any

from services.rules.board.geometry import rotate

#: A path end at or above STOP is the stop `end - STOP` of the tile; below it, an edge 0-5.
STOP = 6

#: A drawn path: its two ends (edges, or STOP + stop index).
TrackPath = tuple[int, int]


def is_edge(end: int) -> bool:
    return end < STOP


class StopKind(StrEnum):
    CITY = "city"
    TOWN = "town"
    OFFBOARD = "offboard"


@dataclass(frozen=True, slots=True)
class Stop:
    """A revenue centre drawn on a tile or printed on a hex."""

    kind: StopKind
    revenue: int = 0
    spots: int = 0
    #: Off-boards: the revenue by the phase's off-board value ("low", "high").
    revenue_by_level: Mapping[str, int] = field(default_factory=dict)
    #: Values that replace the revenue for particular trains (off-boards for D-trains).
    revenue_by_train: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Tile:
    """A tile of the manifest, or what is printed on a hex (`printed`; then `name` is the hex).

    `paths` are drawn with the tile unrotated; `paths_at(r)` gives them on the board, each with
    its smaller end first.
    """

    name: str
    colour: str
    stops: tuple[Stop, ...] = ()
    paths: tuple[TrackPath, ...] = ()
    label: str | None = None
    #: Terrain cost printed on the tile (or hex), paid to lay a tile over it; `terrain` its types.
    cost: int = 0
    terrain: frozenset[str] = frozenset()
    printed: bool = False
    #: Laid only through a private company's ability (1889: the port tile 437).
    ability_only: bool = False
    _turned: tuple[tuple[TrackPath, ...], ...] = field(init=False, repr=False, compare=False)
    _exits: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        turned = tuple(
            tuple(_ordered(_turn(a, r), _turn(b, r)) for a, b in self.paths) for r in range(6)
        )
        exits = tuple(
            sum({1 << end for path in paths for end in path if is_edge(end)}) for paths in turned
        )
        object.__setattr__(self, "_turned", turned)
        object.__setattr__(self, "_exits", exits)

    def paths_at(self, rotation: int) -> tuple[TrackPath, ...]:
        return self._turned[rotation]

    def exits_at(self, rotation: int) -> int:
        """The board edges its track reaches with that rotation, as a bit mask."""
        return self._exits[rotation]

    def city_indices(self) -> tuple[int, ...]:
        return tuple(i for i, stop in enumerate(self.stops) if stop.kind is StopKind.CITY)


def _turn(end: int, rotation: int) -> int:
    return rotate(end, rotation) if is_edge(end) else end


def _ordered(a: int, b: int) -> TrackPath:
    return (a, b) if a < b else (b, a)


@dataclass(frozen=True, slots=True)
class MapHex:
    coordinate: str
    printed: Tile
    name: str = ""
    port: bool = False
    #: The private company whose icon is printed here (8.3.1 restricted hex).
    private: str | None = None


@dataclass(frozen=True, slots=True)
class CorporationCharter:
    id: str
    name: str
    home: str
    home_city: int
    #: Cost of each station token in placing order, the home token first.
    token_costs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Phase:
    """Rulebook 9: what a phase allows, from the purchase of the first `on_train` on."""

    name: str
    on_train: str
    #: Tile colours that may be laid.
    tiles: tuple[str, ...]
    train_limit: int
    #: Which off-board values apply (a key of the off-boards' revenue, "low", "high").
    offboard: str
    operating_rounds: int
    private_purchases: bool
    close_privates: bool = False
    privates_survive_if_player_owned: tuple[str, ...] = ()


#: A train type's `count` for a type the depot never runs out of.
UNLIMITED = -1


@dataclass(frozen=True, slots=True)
class TrainType:
    name: str
    stops: int  # 0 counts every revenue centre
    price: int
    count: int  # UNLIMITED for no limit
    rusts_on: str = ""
    available_from: str = ""
    exchange_price: int = 0
    exchange_from: tuple[str, ...] = ()
    exchange_rusts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PrivateCompany:
    id: str
    letter: str
    name: str
    face_value: int
    revenue: int
    min_players: int
    beginner_min_players: int
    lay_when_sold: bool = False
    exchange_for: str = ""


@dataclass(frozen=True, slots=True)
class PlayerCountRules:
    starting_capital: int
    certificate_limit: int


@dataclass(frozen=True, slots=True)
class RevenueChange:
    phase: str
    revenue: int


class Owner(StrEnum):
    """Who holds a private company when its ability is used."""

    PLAYER = "player"
    CORPORATION = "corporation"


@dataclass(frozen=True, slots=True)
class LayAbility:
    """A private company's ability to lay a tile outside the ordinary rules."""

    private: str
    owner: Owner
    hexes: frozenset[str]
    #: None: any tile that is a legal lay there.
    tiles: frozenset[str] | None
    needs_connection: bool


@dataclass(frozen=True, slots=True)
class TerrainAbility:
    """The owning corporation pays no terrain cost where every terrain type is in `terrain`."""

    private: str
    owner: Owner
    terrain: frozenset[str]


class Zone(Enum):
    NORMAL = "normal"
    YELLOW = "yellow"  # certificates do not count toward the certificate limit (3.1)
    ORANGE = "orange"  # as yellow, and no 60% holding limit


#: A space of the stock market: (row, column), row 0 at the top.
MarketPosition = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Space:
    price: int
    zone: Zone
    par: bool


@dataclass(frozen=True, slots=True)
class Market:
    """The stock market (rulebook 3): its spaces and how stock tokens move over them. Tokens
    on one space form a stack; a token that enters a space goes beneath those already there
    (3.4)."""

    rows: tuple[tuple[Space, ...], ...]
    #: The par spaces in `par_positions` order, found once.
    _pars: tuple[tuple[int, MarketPosition], ...] = field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        pars = tuple(
            (space.price, (r, c))
            for r, row in enumerate(self.rows)
            for c, space in enumerate(row)
            if space.par
        )
        object.__setattr__(self, "_pars", pars)

    def space(self, position: MarketPosition) -> Space:
        row, column = position
        return self.rows[row][column]

    def price(self, position: MarketPosition) -> int:
        return self.space(position).price

    def exists(self, position: MarketPosition) -> bool:
        row, column = position
        return 0 <= row < len(self.rows) and 0 <= column < len(self.rows[row])

    def par_positions(self) -> dict[int, MarketPosition]:
        """Par price -> its space."""
        return dict(self._pars)

    def up(self, position: MarketPosition) -> MarketPosition:
        """Sold out at the end of a stock round: one row up; the top row does not move."""
        row, column = position
        return (row - 1, column) if self.exists((row - 1, column)) else position

    def down(self, position: MarketPosition, shares: int = 1) -> MarketPosition:
        """Shares sold: one row down per share; the bottom of a column stops the token."""
        row, column = position
        for _ in range(shares):
            if self.exists((row + 1, column)):
                row += 1
        return (row, column)

    def right(self, position: MarketPosition) -> MarketPosition:
        """Dividends paid: one space right, or up at the end of a row; at the very top right
        corner it does not move."""
        row, column = position
        if self.exists((row, column + 1)):
            return (row, column + 1)
        return self.up(position)

    def left(self, position: MarketPosition) -> MarketPosition:
        """No dividends: one space left, or down at the start of a row; at the very bottom left
        corner it does not move."""
        row, column = position
        if column > 0:
            return (row, column - 1)
        return self.down(position)


DEFAULT_PROFILE = "rulebook"
#: The profile that plays a title as the 18xx.games site does (its logs import under it).
SITE_PROFILE = "18xx.games"
#: The ways of cutting a turn into steps that a profile's `turn_steps` may name.
TURN_STEPS = (DEFAULT_PROFILE, SITE_PROFILE)


@dataclass(frozen=True, slots=True)
class RulesProfile:
    """A named set of switches, each turning one departure from the rulebook on (a table picks
    its profile when it is created). Every switch is off in the rulebook profile; a title's
    `profiles.toml` names its profiles and the switches each turns on. The switches, their
    rulebook sections and what the rulebook and 18xx.games do are in docs/rules-notes.md."""

    name: str
    description: str = ""
    #: 8.7.6 (failure to raise funds): a bankrupt president's remaining cash goes to the bank,
    #: not to the corporation's treasury.
    bankrupt_cash_to_bank: bool = False
    #: 14.1 (beginner game): the privates are dealt as the site's engine deals them from the
    #: game's seed (services/rules/domain/site_deal.py): its own set for five players, its
    #: beginner prices, and the priority deal to the first player in order, where the rulebook
    #: deals the listed privates at random for their face value and draws the priority deal.
    beginner_deal_as_site: bool = False
    #: 14.1 (beginner game), 15: the privates have no abilities, as on the site, which strips
    #: them in its beginner game: no DR exchange, no MF port tile (the others' abilities do not
    #: apply there anyway: corporations buy no privates, icons restrict nothing).
    beginner_privates_without_abilities: bool = False
    #: 14.1 (beginner game), 8.1: the privates pay the site's beginner revenues (TR ¥5, MF ¥15,
    #: ER ¥15, SMR ¥20, DR ¥20, SIR ¥25), where the rulebook keeps their face revenues.
    beginner_private_revenues_as_site: bool = False
    #: 14.1 (beginner game): the extra tiles are the site's (tiles.toml `beginner.site_extra`:
    #: the rulebook's but for the #57), which it names `Beg6`, `Beg7`, ... by copy.
    beginner_tiles_as_site: bool = False
    #: 5.2 (closed auction): the lowest bidder always acts next, instead of the bidder to the
    #: left of the highest bidder first and then clockwise (they differ with three or more).
    closed_auction_lowest_bidder_acts: bool = False
    #: 5.2 (the private auction): a bid on the topmost private, which the rulebook lets one
    #: only buy at face value, buys it at the bid (from its face value up, within the cash
    #: not promised in other bids), as the site's `Step::WaterfallAuction#placement_bid` does.
    topmost_private_bid_buys_at_bid: bool = False
    #: 8.7.6 (forced train purchase): the president sells each corporation's shares at most
    #: once (one block) while raising the money, where the rulebook lets them sell shares of
    #: the same corporation again, in any order they choose.
    forced_sale_once_per_corporation: bool = False
    #: 15 B (Mitsubishi Ferry): in an operating round the port tile goes down only at the track
    #: step of a corporation its owner presides, or before the operating corporation (anyone's)
    #: has done anything in its turn; the rulebook allows it at any time outside the operation
    #: of a corporation another player controls.
    port_tile_at_track_step_or_turn_start: bool = False
    #: 8.2 (the order of a corporation's turn): the token step ends by itself as soon as no
    #: token can be placed, though the corporation could still buy a private there (8.8) whose
    #: seller's lay (the ER's, 15 C) would then make room for a token.
    token_step_skipped_when_no_token_can_be_placed: bool = False
    #: 8.2, 8.5 (running trains): the route step of a corporation with trains ends by itself,
    #: withholding nothing, as soon as it begins without a route to run (once no private's lay
    #: is pending), as the site's steps skip themselves: a route that a tile laid later in the
    #: turn opens (the ER's seller's, bought at the route step) cannot be run then.
    route_step_skipped_when_no_route: bool = False
    #: 8.3 and 4.2 (upgrades, connectivity): an upgrade must also add track, or change the
    #: value of a city, that the site engine's own walk of the corporation's track reaches
    #: once the tile is down (services/rules/board/new_track.py); the rulebook asks only that
    #: the new track be connected, which a legal trail reaching it shows.
    upgrade_must_use_new_track_or_change_city: bool = False
    #: How a corporation's turn is cut into steps (services/rules/domain/turn_steps.py): one of
    #: TURN_STEPS. Not a departure from the rules (the same moves stay legal, in the same order)
    #: but where the game waits for a pass: `18xx.games` skips a train step where no train can be
    #: bought and ends the turn with a step of its own for buying privates, as the site does.
    turn_steps: str = DEFAULT_PROFILE


#: The switches: RulesProfile's bool fields.
SWITCHES = tuple(f.name for f in dataclasses.fields(RulesProfile) if f.type in ("bool", bool))


#: `base`, then `+switch` (turned on) or `-switch` (turned off), any number of times.
_SWITCHED = re.compile(r"([+-])([^+-]+)")


@cache
def _with_switches(base: RulesProfile, name: str) -> RulesProfile:
    changes = _SWITCHED.findall(name[len(base.name) :])
    unknown = [switch for _, switch in changes if switch not in SWITCHES]
    if unknown:
        raise KeyError(f"no switch {unknown[0]!r} in {name!r}")
    switched: dict[str, Any] = {switch: sign == "+" for sign, switch in changes}
    return dataclasses.replace(base, name=name, **switched)


@dataclass(frozen=True, eq=False)
class Title:
    """Compared and hashed by identity: a title is loaded once per process and shared. Its
    mappings are read-only, and keep the order of the data files."""

    name: str
    # The board (board.toml, map.toml, tiles.toml).
    hexes: Mapping[str, MapHex]
    tiles: Mapping[str, Tile]
    #: Tiles in the supply at the start of a game, and those the beginner game adds.
    counts: Mapping[str, int]
    beginner_extra: Mapping[str, int]
    #: The beginner game's extra tiles as the 18xx.games site adds them.
    beginner_site_extra: Mapping[str, int]
    upgrade_order: tuple[str, ...]
    fixed_colours: frozenset[str]
    lay_abilities: Mapping[str, LayAbility]
    terrain_abilities: Mapping[str, TerrainAbility]
    #: Whether private company icons restrict their hexes in the beginner game.
    beginner_icons_restrict: bool
    # The economy (economy.toml, corporations.toml).
    bank: int
    min_players: int
    max_players: int
    by_player_count: Mapping[int, PlayerCountRules]
    #: In auction order (the top of the column first).
    privates: tuple[PrivateCompany, ...]
    corporations: Mapping[str, CorporationCharter]
    trains: tuple[TrainType, ...]
    #: In the order they follow each other; the first is the phase a game starts in.
    phases: tuple[Phase, ...]
    private_revenue_from_phase: Mapping[str, RevenueChange]
    market: Market
    #: profiles.toml; always has DEFAULT_PROFILE, with every switch off.
    profiles: Mapping[str, RulesProfile]
    _phases: Mapping[str, Phase] = field(init=False, repr=False)
    _phase_indices: Mapping[str, int] = field(init=False, repr=False)
    _trains: Mapping[str, TrainType] = field(init=False, repr=False)
    _train_ranks: Mapping[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        phases = {phase.name: phase for phase in self.phases}
        object.__setattr__(self, "_phases", phases)
        indices = {name: self.phases.index(phase) for name, phase in phases.items()}
        object.__setattr__(self, "_phase_indices", indices)
        object.__setattr__(self, "_trains", {train.name: train for train in self.trains})
        ranks = {train.name: rank for rank, train in enumerate(self.trains)}
        object.__setattr__(self, "_train_ranks", ranks)

    def beginner_tiles(self, profile: str) -> Mapping[str, int]:
        """The tiles the beginner game adds to the supply under `profile`."""
        if self.profile(profile).beginner_tiles_as_site:
            return self.beginner_site_extra
        return self.beginner_extra

    def next_colour(self, colour: str) -> str | None:
        """The colour a tile over this one must have; None when it is never replaced."""
        if colour not in self.upgrade_order:
            return None
        at = self.upgrade_order.index(colour)
        return self.upgrade_order[at + 1] if at + 1 < len(self.upgrade_order) else None

    def profile(self, name: str) -> RulesProfile:
        """A profile by name. `base+switch…` is the base profile with that switch turned on as
        well, `base-switch…` with it off: not a table's choice, but how one asks what a single
        switch would change (the export names the departures a game relied on; the
        cross-check's coverage, which switches a game exercised)."""
        if name in self.profiles:
            return self.profiles[name]
        base = next((p for p in self.profiles if name.startswith(p) and name[len(p)] in "+-"), None)
        if base is None:
            raise KeyError(name)
        return _with_switches(self.profiles[base], name)

    def private(self, company_id: str) -> PrivateCompany:
        for company in self.privates:
            if company.id == company_id:
                return company
        raise KeyError(company_id)

    def charter(self, corporation_id: str) -> CorporationCharter:
        return self.corporations[corporation_id]

    def train(self, name: str) -> TrainType:
        return self._trains[name]

    def train_rank(self, name: str) -> int:
        """Where the train stands in `trains` (the order they leave the depot)."""
        return self._train_ranks[name]

    def phase(self, name: str) -> Phase:
        return self._phases[name]

    def has_phase(self, name: str) -> bool:
        return name in self._phases

    def phase_index(self, name: str) -> int:
        return self._phase_indices[name]

    def phase_started_by(self, train: str) -> Phase | None:
        return next((p for p in self.phases if p.on_train == train), None)

    def privates_in_game(self, player_count: int, beginner: bool) -> tuple[PrivateCompany, ...]:
        if beginner:
            return tuple(p for p in self.privates if player_count >= p.beginner_min_players)
        return tuple(p for p in self.privates if player_count >= p.min_players)
