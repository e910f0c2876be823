"""Scoring a finished table and ranking the players of a tournament: pure functions over
plain values, so that the tournament aggregate, its projections and its exports share them.

A table's placings: players rank by final net worth, highest first; forfeiting players rank
after everyone else, tied among themselves (their net worth stopped measuring their play when
they left). Tied players share the points of the ranks they span, averaged, and all take the
best of those ranks: net worths 90, 70, 70, 50 with points 4, 3, 2, 1 rank 1, 2, 2, 4 and score
4, 2.5, 2.5, 1.

Standings order, best first: total points, then total net worth, then the best rank at a
single table (players without a game come after every rank), then player id. The player id
only makes the order total; seating for a new round breaks such ties with its seed instead.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

CSV_COLUMNS = ("position", "player_id", "display_name", "points", "net_worth", "best_rank", "games")


@dataclass(frozen=True, slots=True)
class Placing:
    """One player's outcome at one table."""

    player_id: str
    rank: int
    points: Fraction
    net_worth: int


@dataclass(frozen=True, slots=True)
class Standing:
    position: int
    player_id: str
    display_name: str
    points: Fraction
    net_worth: int
    best_rank: int | None
    games: int


def place_table(
    net_worths: Sequence[tuple[str, int]],
    forfeited: Collection[str],
    rank_points: Sequence[Fraction],
) -> list[Placing]:
    """The placings at a table, given each player's final net worth in seat order and the
    points for ranks 1, 2, ... at a table of that size."""
    placings: list[Placing] = []
    rank = 1
    for group in _tied_groups(net_worths, forfeited):
        share = sum(rank_points[rank - 1 : rank - 1 + len(group)], Fraction(0)) / len(group)
        placings.extend(Placing(player, rank, share, worth) for player, worth in group)
        rank += len(group)
    return placings


def _tied_groups(
    net_worths: Sequence[tuple[str, int]], forfeited: Collection[str]
) -> list[list[tuple[str, int]]]:
    stayed = sorted(
        (entry for entry in net_worths if entry[0] not in forfeited),
        key=lambda entry: -entry[1],
    )
    groups = [list(group) for _, group in itertools.groupby(stayed, key=lambda entry: entry[1])]
    left = [entry for entry in net_worths if entry[0] in forfeited]
    return [*groups, left] if left else groups


def compute_standings(
    players: Sequence[tuple[str, str]], placings: Iterable[Placing]
) -> list[Standing]:
    """Every player's standing, best first, from `(player_id, display_name)` pairs and the
    placings of every table recorded so far."""
    by_player: dict[str, list[Placing]] = {player_id: [] for player_id, _ in players}
    for placing in placings:
        by_player[placing.player_id].append(placing)
    unordered = [_standing(pid, name, by_player[pid]) for pid, name in players]
    ordered = sorted(unordered, key=lambda s: (*strength_key(s), s.player_id))
    return [
        Standing(position, s.player_id, s.display_name, s.points, s.net_worth, s.best_rank, s.games)
        for position, s in enumerate(ordered, start=1)
    ]


def _standing(player_id: str, display_name: str, placings: Sequence[Placing]) -> Standing:
    return Standing(
        position=0,
        player_id=player_id,
        display_name=display_name,
        points=sum((p.points for p in placings), Fraction(0)),
        net_worth=sum(p.net_worth for p in placings),
        best_rank=min((p.rank for p in placings), default=None),
        games=len(placings),
    )


def strength_key(standing: Standing) -> tuple[Fraction, int, float]:
    """Sorts stronger standings first, ignoring the player id."""
    best_rank = math.inf if standing.best_rank is None else standing.best_rank
    return (-standing.points, -standing.net_worth, best_rank)


def format_points(points: Fraction) -> str:
    """Whole points as integers, others to three decimals at most: 7, 2.5, 3.333."""
    if points.denominator == 1:
        return str(points.numerator)
    return f"{float(points):.3f}".rstrip("0").rstrip(".")


def standings_csv(standings: Iterable[Standing]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for s in standings:
        best_rank = "" if s.best_rank is None else s.best_rank
        writer.writerow(
            [
                s.position,
                s.player_id,
                s.display_name,
                format_points(s.points),
                s.net_worth,
                best_rank,
                s.games,
            ]
        )
    return out.getvalue()


def standings_json(standings: Iterable[Standing]) -> list[dict[str, Any]]:
    """Standings as JSON-ready dicts; points are numbers (integers when whole)."""
    return [
        {
            "position": s.position,
            "player_id": s.player_id,
            "display_name": s.display_name,
            "points": s.points.numerator if s.points.denominator == 1 else float(s.points),
            "net_worth": s.net_worth,
            "best_rank": s.best_rank,
            "games": s.games,
        }
        for s in standings
    ]
