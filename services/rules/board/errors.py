"""Why a tile lay or a station token is refused, and why title data fails to load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class Reason(StrEnum):
    """Stable, machine-readable codes for an illegal tile lay or token placement."""

    # Either
    HEX_NOT_ON_MAP = "HEX_NOT_ON_MAP"
    UNKNOWN_CORPORATION = "UNKNOWN_CORPORATION"
    NOT_CONNECTED = "NOT_CONNECTED"
    # Tile lays and upgrades (8.3)
    UNKNOWN_TILE = "UNKNOWN_TILE"
    BAD_ROTATION = "BAD_ROTATION"
    ABILITY_NOT_AVAILABLE = "ABILITY_NOT_AVAILABLE"
    TILE_NEEDS_ABILITY = "TILE_NEEDS_ABILITY"
    HEX_BLOCKED_BY_PRIVATE = "HEX_BLOCKED_BY_PRIVATE"
    NOT_UPGRADEABLE = "NOT_UPGRADEABLE"
    NOT_NEXT_COLOUR = "NOT_NEXT_COLOUR"
    COLOUR_NOT_AVAILABLE = "COLOUR_NOT_AVAILABLE"
    TILE_NOT_IN_SUPPLY = "TILE_NOT_IN_SUPPLY"
    LABEL_MISMATCH = "LABEL_MISMATCH"
    CITY_TOWN_MISMATCH = "CITY_TOWN_MISMATCH"
    BREAKS_EXISTING_TRACK = "BREAKS_EXISTING_TRACK"
    TOKENS_NOT_PRESERVED = "TOKENS_NOT_PRESERVED"
    TRACK_OFF_MAP = "TRACK_OFF_MAP"
    TERRAIN_COST_UNAFFORDABLE = "TERRAIN_COST_UNAFFORDABLE"
    NO_NEW_TRACK_WALKED = "NO_NEW_TRACK_WALKED"
    # Station tokens (8.4)
    NO_SUCH_CITY = "NO_SUCH_CITY"
    HOME_TOKEN_FIRST = "HOME_TOKEN_FIRST"
    TOKEN_LIMIT = "TOKEN_LIMIT"
    TOKEN_ALREADY_IN_HEX = "TOKEN_ALREADY_IN_HEX"
    CITY_FULL = "CITY_FULL"
    SPOT_RESERVED = "SPOT_RESERVED"
    TOKEN_COST_UNAFFORDABLE = "TOKEN_COST_UNAFFORDABLE"


@dataclass(frozen=True, slots=True)
class Rejection:
    """A refused lay or token: `reason` for programs, `message` (naming the hex and the rule)
    for people, `details` for both (hex, tile, corporation, …)."""

    reason: Reason
    message: str
    details: Mapping[str, str] = field(default_factory=dict)


class Rejected(Exception):
    """Raised when a change that cannot happen is applied to a position."""

    def __init__(self, rejection: Rejection) -> None:
        super().__init__(f"{rejection.reason}: {rejection.message}")
        self.rejection = rejection


class BoardDataError(ValueError):
    """A title's board data is malformed; the message names the file and the entry (and the
    line when it can be found)."""
