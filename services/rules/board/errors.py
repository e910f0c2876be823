"""Why a tile lay or a station token is refused, and why title data fails to load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kernel.reasons import ReasonCode


@dataclass(frozen=True, slots=True)
class Rejection:
    """A refused lay or token: `reason` (a code of the catalogue, protos/shikoku/v1/reasons.proto)
    for programs, `message` (naming the hex and the rule) for people, `details` for both (hex,
    tile, corporation, …)."""

    reason: ReasonCode
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
