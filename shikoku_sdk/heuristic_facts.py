"""What the heuristic player reads of the title (TitleService.GetTitle) and of the state document:
the trains, phases, privates and printed revenue centres, and a seat's view of the state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shikoku.v1 import title_pb2


@dataclass(frozen=True)
class TrainFacts:
    name: str
    price: int
    rusts_on: str


@dataclass(frozen=True)
class TitleFacts:
    """The title data the heuristic needs, from a `title_pb2.Title`."""

    trains: tuple[TrainFacts, ...]
    phases: tuple[str, ...]  # in order
    train_limits: dict[str, int]
    private_values: dict[str, int]  # face value
    private_revenues: dict[str, int]
    centre_hexes: frozenset[str]  # hexes with a city, town or off-board printed
    tile_revenue: dict[str, int]  # tile -> sum of its revenue centres' values

    @staticmethod
    def from_title(title: title_pb2.Title) -> TitleFacts:
        return TitleFacts(
            trains=tuple(TrainFacts(t.name, t.price, t.rusts_on) for t in title.trains),
            phases=tuple(p.name for p in title.phases),
            train_limits={p.name: p.train_limit for p in title.phases},
            private_values={p.id: p.face_value for p in title.privates},
            private_revenues={p.id: p.revenue for p in title.privates},
            centre_hexes=frozenset(h.coordinate for h in title.hexes if h.printed.stops),
            tile_revenue={t.name: sum(s.revenue for s in t.drawing.stops) for t in title.tiles},
        )

    def train(self, name: str) -> TrainFacts:
        """The train type named `name`."""
        return next(t for t in self.trains if t.name == name)

    def phase_index(self, phase: str) -> int:
        """Where `phase` comes in the game's phases (0 for the first, or one not known)."""
        return self.phases.index(phase) if phase in self.phases else 0


def number(value: Any) -> int:
    """A Struct's number (a float over the API) as an int; None as 0."""
    return int(value or 0)


@dataclass(frozen=True)
class View:
    """The state document as the heuristic reads it, for one seat."""

    document: dict[str, Any]
    seat: int
    facts: TitleFacts

    @property
    def phase(self) -> str:
        return str(self.document.get("phase") or "2")

    def player(self, seat: int | None = None) -> dict[str, Any]:
        """The state document's player at `seat` (the bot's own seat by default)."""
        wanted = self.seat if seat is None else seat
        return next(p for p in self.document["players"] if number(p["seat"]) == wanted)

    @property
    def cash(self) -> int:
        return number(self.player()["cash"])

    def shares(self, corporation: str, seat: int | None = None) -> int:
        """How many 10% shares of `corporation` the player at `seat` holds."""
        return number(self.player(seat).get("shares", {}).get(corporation))

    def corporation(self, corporation: str) -> dict[str, Any]:
        """The state document's corporation `corporation`."""
        return next(c for c in self.document["corporations"] if c["id"] == corporation)

    def president(self, corporation: str) -> int:
        """The seat presiding `corporation` (0 before it is started)."""
        return number(self.corporation(corporation).get("president"))

    def mine(self) -> list[dict[str, Any]]:
        """The corporations the bot's seat presides."""
        return [c for c in self.document["corporations"] if number(c.get("president")) == self.seat]

    def depot_trains(self) -> list[TrainFacts]:
        """The trains the depot still sells, cheapest first."""
        depot = self.document.get("depot") or {}
        return [t for t in self.facts.trains if number(depot.get(t.name))]

    def next_train(self) -> TrainFacts | None:
        """The cheapest train the depot still sells, if any."""
        trains = self.depot_trains()
        return trains[0] if trains else None

    def rusting_soon(self, train: str) -> bool:
        """Whether `train` rusts when the next phase (or the one after) starts."""
        rusts = self.facts.train(train).rusts_on
        if not rusts:
            return False
        return self.facts.phase_index(rusts) - self.facts.phase_index(self.phase) <= 1

    def train_limit(self) -> int:
        """How many trains a corporation may hold in the current phase."""
        return self.facts.train_limits.get(self.phase, 2)

    def round(self) -> dict[str, Any]:
        """The state document's round (empty before the game's first)."""
        return self.document.get("round") or {}
