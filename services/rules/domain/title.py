"""A title's static economy (bank, starting capital, certificate limits, private companies),
loaded from its data file. Nothing here changes during a game."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TITLES_DIR = Path(__file__).resolve().parent.parent / "titles"


@dataclass(frozen=True, slots=True)
class PrivateCompany:
    id: str
    letter: str
    name: str
    face_value: int
    revenue: int
    min_players: int
    beginner_min_players: int


@dataclass(frozen=True, slots=True)
class CorporationCharter:
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class PlayerCountRules:
    starting_capital: int
    certificate_limit: int


@dataclass(frozen=True, slots=True)
class Title:
    name: str
    bank: int
    min_players: int
    max_players: int
    by_player_count: dict[int, PlayerCountRules]
    privates: tuple[PrivateCompany, ...]
    corporations: tuple[CorporationCharter, ...]

    def private(self, company_id: str) -> PrivateCompany:
        for company in self.privates:
            if company.id == company_id:
                return company
        raise KeyError(company_id)

    def privates_in_game(self, player_count: int, beginner: bool) -> tuple[PrivateCompany, ...]:
        if beginner:
            return tuple(p for p in self.privates if player_count >= p.beginner_min_players)
        return tuple(p for p in self.privates if player_count >= p.min_players)


class TitleDataError(ValueError):
    pass


def _parse(name: str, raw: dict[str, Any], charters: dict[str, Any]) -> Title:
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
                CorporationCharter(id=cid, name=entry["name"])
                for cid, entry in charters["corporation"].items()
            ),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise TitleDataError(f"title {name}: economy.toml: {error!r}") from error


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
    return _parse(name, load_raw_title(name), charters)
