"""A title's static rules data (bank, starting capital, certificate limits, private companies,
corporations, trains, phases, rules profiles), loaded from its data files. Nothing here changes
during a game."""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TITLES_DIR = Path(__file__).resolve().parent.parent / "titles"
UNLIMITED = -1


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
class CorporationCharter:
    id: str
    name: str
    home: str
    token_costs: tuple[int, ...]  # the home token first
    home_city: int = 0  # which city of the home hex


@dataclass(frozen=True, slots=True)
class PlayerCountRules:
    starting_capital: int
    certificate_limit: int


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
class Phase:
    name: str
    on_train: str
    tiles: tuple[str, ...]
    train_limit: int
    offboard: str
    operating_rounds: int
    private_purchases: bool
    close_privates: bool = False
    privates_survive_if_player_owned: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RevenueChange:
    phase: str
    revenue: int


DEFAULT_PROFILE = "rulebook"
#: The profile that plays a title as the 18xx.games site does (its logs import under it).
SITE_PROFILE = "18xx.games"


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
    #: 5.2 (closed auction): the lowest bidder always acts next, instead of the bidder to the
    #: left of the highest bidder first and then clockwise (they differ with three or more).
    closed_auction_lowest_bidder_acts: bool = False
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


@dataclass(frozen=True, slots=True)
class Title:
    name: str
    bank: int
    min_players: int
    max_players: int
    by_player_count: dict[int, PlayerCountRules]
    privates: tuple[PrivateCompany, ...]
    corporations: tuple[CorporationCharter, ...]
    trains: tuple[TrainType, ...]
    phases: tuple[Phase, ...]
    private_revenue_from_phase: dict[str, RevenueChange]
    profiles: dict[str, RulesProfile] = dataclasses.field(
        default_factory=lambda: {DEFAULT_PROFILE: RulesProfile(DEFAULT_PROFILE)}
    )

    def profile(self, name: str) -> RulesProfile:
        """A profile by name. `base+switch+…` is the base profile with those switches turned
        on as well: not a table's choice, but how one asks what a single switch would change
        (the export names the departures a game relied on)."""
        if "+" not in name:
            return self.profiles[name]
        return _with_switches(self.profiles[name.split("+", 1)[0]], name)

    def private(self, company_id: str) -> PrivateCompany:
        for company in self.privates:
            if company.id == company_id:
                return company
        raise KeyError(company_id)

    def charter(self, corporation_id: str) -> CorporationCharter:
        for charter in self.corporations:
            if charter.id == corporation_id:
                return charter
        raise KeyError(corporation_id)

    def train(self, name: str) -> TrainType:
        for train in self.trains:
            if train.name == name:
                return train
        raise KeyError(name)

    def phase(self, name: str) -> Phase:
        for phase in self.phases:
            if phase.name == name:
                return phase
        raise KeyError(name)

    def phase_index(self, name: str) -> int:
        return [phase.name for phase in self.phases].index(name)

    def phase_started_by(self, train: str) -> Phase | None:
        return next((p for p in self.phases if p.on_train == train), None)

    def privates_in_game(self, player_count: int, beginner: bool) -> tuple[PrivateCompany, ...]:
        if beginner:
            return tuple(p for p in self.privates if player_count >= p.beginner_min_players)
        return tuple(p for p in self.privates if player_count >= p.min_players)


class TitleDataError(ValueError):
    pass


def _tuples(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: tuple(value) if isinstance(value, list) else value for key, value in entry.items()}


#: The switches: RulesProfile's bool fields.
SWITCHES = tuple(f.name for f in dataclasses.fields(RulesProfile) if f.type in ("bool", bool))


@cache
def _with_switches(base: RulesProfile, name: str) -> RulesProfile:
    added = name.split("+")[1:]
    unknown = [switch for switch in added if switch not in SWITCHES]
    if unknown:
        raise KeyError(f"no switch {unknown[0]!r} in {name!r}")
    switched: dict[str, Any] = dict.fromkeys(added, True)
    return dataclasses.replace(base, name=name, **switched)


def _profiles(name: str, raw: dict[str, Any]) -> dict[str, RulesProfile]:
    """The profiles of a title's profiles.toml (`[profile."<name>"]` tables of switches)."""
    profiles = {}
    for profile, entry in raw.get("profile", {}).items():
        switches = {key: value for key, value in entry.items() if key != "description"}
        for key, value in switches.items():
            if key not in SWITCHES:
                raise TitleDataError(f"title {name}, profile {profile}: no switch {key!r}")
            if not isinstance(value, bool):
                raise TitleDataError(f"title {name}, profile {profile}: {key} is not a bool")
        profiles[profile] = RulesProfile(
            name=profile, description=str(entry.get("description", "")), **switches
        )
    if DEFAULT_PROFILE not in profiles:
        profiles[DEFAULT_PROFILE] = RulesProfile(DEFAULT_PROFILE)
    if any(getattr(profiles[DEFAULT_PROFILE], switch) for switch in SWITCHES):
        raise TitleDataError(f"title {name}: the {DEFAULT_PROFILE} profile turns a switch on")
    return profiles


def _parse(
    name: str, raw: dict[str, Any], charters: dict[str, Any], profiles: dict[str, Any]
) -> Title:
    try:
        return Title(
            name=raw["title"],
            bank=int(raw["bank"]),
            min_players=int(raw["min_players"]),
            max_players=int(raw["max_players"]),
            by_player_count={
                int(count): PlayerCountRules(**rules) for count, rules in raw["players"].items()
            },
            privates=tuple(PrivateCompany(**entry) for entry in raw["privates"]),
            corporations=tuple(
                CorporationCharter(
                    id=cid,
                    name=entry["name"],
                    home=entry["home"],
                    token_costs=tuple(entry["tokens"]),
                    home_city=int(entry.get("home_city", 0)),
                )
                for cid, entry in charters["corporation"].items()
            ),
            trains=tuple(TrainType(**_tuples(entry)) for entry in raw["trains"]),
            phases=tuple(Phase(**_tuples(entry)) for entry in raw["phases"]),
            private_revenue_from_phase={
                company: RevenueChange(**change)
                for company, change in raw.get("private_revenue_from_phase", {}).items()
            },
            profiles=_profiles(name, profiles),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise TitleDataError(f"title {name}: {error!r}") from error


@cache
def load_raw_title(name: str = "1889") -> dict[str, Any]:
    """The title's economy.toml as parsed TOML (for modules that read their own section)."""
    path = TITLES_DIR / name / "economy.toml"
    with path.open("rb") as file:
        return tomllib.load(file)


@cache
def load_title(name: str = "1889") -> Title:
    with (TITLES_DIR / name / "corporations.toml").open("rb") as file:
        charters = tomllib.load(file)
    profiles: dict[str, Any] = {}
    if (TITLES_DIR / name / "profiles.toml").exists():
        with (TITLES_DIR / name / "profiles.toml").open("rb") as file:
            profiles = tomllib.load(file)
    return _parse(name, load_raw_title(name), charters, profiles)


def rules_profile(title: str, profile: str) -> RulesProfile:
    """The switches of a game's profile (`GameState.title`, `GameState.rules_profile`)."""
    return load_title(title).profile(profile)
