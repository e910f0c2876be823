"""Tournaments: many tables of 1889 over several rounds, event-sourced like tables. The decide
functions (`create`, `start_round`, `assign_tables`, `record_result`) return events or raise
Rejected; `evolve` folds them into a frozen Tournament. Nothing here does I/O, reads a clock or
draws randomness: a round's seed comes with the request, and the seating it gives is recorded in
the event, so a replay never recomputes it.

Starting a round takes several writes to several streams (the round, then each table, then the
round's table ids), which a crash can cut anywhere. So a round that is not finished is
`in_progress` and a StartRound finishes it rather than starting another, and the ids of its
tables (`round_table_ids`) follow from the round as recorded (its number and seed): every
attempt names the same tables, finds those an earlier one created, and creates the rest.

Table sizes (`table_sizes`). A tournament "in tables of s" seats its n players at ceil(n / s)
tables, dealt as evenly as possible with the bigger tables first: tables of s, and of s - 1
where n is not a multiple of s (10 players in tables of 4: 4, 3, 3; 13 players: 4, 3, 3, 3).
No table has fewer than 3 players (2 when s is 2): where the even deal would make one, the
tournament uses fewer tables, which makes some larger than s instead (5 players in tables of 4:
one table of 5; 8 in tables of 3: 4, 4; an odd count in tables of 2: one table of 3). Small
fields can thus get tables of s - 2 (7 players in tables of 6: 4, 3); from s * (s - 1) players
on every table has s or s - 1. A tournament needs at least s players.

Scoring. `rank_points` gives, per table size, the points for ranks 1, 2, ...; the default for a
table of k players is k, k - 1, ..., 1, so winning against more opponents is worth more. Ties in
net worth and forfeits are scored as `services.lobby.domain.standings` describes. The creation event
records the points of every size, so changing the defaults never rescores a recorded tournament.

Seating (`seat_round`). Round 1 is `random` (the players shuffled with the round's seed, then
cut into tables) or `seeded` (the host's seed order, strongest first, dealt in a snake: tables
1, 2, ..., t, then t, ..., 1, and so on, skipping full tables). Later rounds are Swiss-like: the
standings order is cut into tables, so standings places 1 to s play together, and so on; players
tied on everything but their id are ordered by the seed. Within every table the seat order is
shuffled with the seed, so no standings place always gets seat 1.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce
from typing import Any, TypeVar

from kernel.rejection import Kind, Rejected, quoted
from services.lobby.domain.standings import (
    Placing,
    Standing,
    compute_standings,
    place_table,
    strength_key,
)

MIN_TABLE_SIZE, MAX_TABLE_SIZE = 2, 6
SMALLEST_TABLE = 3  # except in tournaments of tables of 2
RANDOM, SEEDED = "random", "seeded"
SEATING_METHODS = (RANDOM, SEEDED)
FORFEIT = "forfeit"
END_REASONS = ("bankrupt", "bank", "ended", FORFEIT)

# Events are (type, payload) pairs with plain-data payloads, as in the lobby's table log.
TournamentEvent = tuple[str, dict[str, Any]]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Player:
    player_id: str
    display_name: str


@dataclass(frozen=True, slots=True)
class TableResult:
    table_id: str
    net_worths: tuple[tuple[str, int], ...]  # (player id, final net worth) in seat order
    end: str
    forfeited: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Round:
    number: int
    seed: int
    seating: tuple[tuple[str, ...], ...]  # tables of player ids in seat order
    table_ids: tuple[str, ...] = ()  # the lobby's table for each seating slot, once created
    results: tuple[TableResult, ...] = ()  # in the order recorded
    finished: bool = False

    @property
    def tables_assigned(self) -> bool:
        return bool(self.table_ids)

    @property
    def all_results_in(self) -> bool:
        return len(self.results) == len(self.seating)

    def slot_of(self, table_id: str) -> int | None:
        return self.table_ids.index(table_id) if table_id in self.table_ids else None

    def result_of(self, table_id: str) -> TableResult | None:
        return next((r for r in self.results if r.table_id == table_id), None)


@dataclass(frozen=True, slots=True)
class Tournament:
    tournament_id: str = ""
    name: str = ""
    host_credential_hash: str = ""
    players: tuple[Player, ...] = ()
    table_size: int = 0
    rank_points: tuple[tuple[int, tuple[Fraction, ...]], ...] = ()  # (table size, points)
    first_round: str = RANDOM
    seed_order: tuple[str, ...] = ()
    rounds: tuple[Round, ...] = ()
    round_count: int = 0  # 0: recorded before tournaments had a length, so no last round

    @property
    def finished(self) -> bool:
        """Its last round has finished."""
        current = self.current_round
        return current is not None and current.finished and 0 < self.round_count <= current.number

    @property
    def exists(self) -> bool:
        return bool(self.tournament_id)

    @property
    def player_ids(self) -> tuple[str, ...]:
        return tuple(p.player_id for p in self.players)

    @property
    def current_round(self) -> Round | None:
        return self.rounds[-1] if self.rounds else None

    def points_for(self, table_size: int) -> tuple[Fraction, ...]:
        return dict(self.rank_points)[table_size]


# --- evolve ------------------------------------------------------------------------------------


def evolve(tournament: Tournament, event: TournamentEvent) -> Tournament:
    kind, data = event
    match kind:
        case "TournamentCreated":
            return _created(data)
        case "RoundStarted":
            seating = tuple(tuple(table) for table in data["seating"])
            started = Round(data["round"], data["seed"], seating)
            return dataclasses.replace(tournament, rounds=(*tournament.rounds, started))
        case "TablesAssigned":
            return _update_round(tournament, data["round"], table_ids=tuple(data["table_ids"]))
        case "TableResultRecorded":
            result = TableResult(
                data["table_id"],
                tuple(data["net_worths"].items()),
                data["end"],
                tuple(data["forfeited"]),
            )
            results = (*tournament.rounds[data["round"] - 1].results, result)
            return _update_round(tournament, data["round"], results=results)
        case "RoundFinished":
            return _update_round(tournament, data["round"], finished=True)
    raise ValueError(f"unknown tournament event {kind}")


def fold(events: Iterable[TournamentEvent]) -> Tournament:
    return reduce(evolve, events, Tournament())


def _created(data: Mapping[str, Any]) -> Tournament:
    return Tournament(
        tournament_id=data["tournament_id"],
        name=data["name"],
        host_credential_hash=data["host_credential_hash"],
        players=tuple(Player(p["player_id"], p["display_name"]) for p in data["players"]),
        table_size=data["table_size"],
        rank_points=tuple(
            (int(size), tuple(_exact(value) for value in points))
            for size, points in data["rank_points"].items()
        ),
        first_round=data["first_round"],
        seed_order=tuple(data["seed_order"]),
        round_count=data.get("round_count", 0),
    )


def _exact(value: int | float) -> Fraction:
    # repr gives the shortest decimal that round-trips, so 0.1 becomes exactly 1/10.
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))


def _update_round(tournament: Tournament, number: int, **changes: Any) -> Tournament:
    rounds = list(tournament.rounds)
    rounds[number - 1] = dataclasses.replace(rounds[number - 1], **changes)
    return dataclasses.replace(tournament, rounds=tuple(rounds))


# --- create ------------------------------------------------------------------------------------


def default_rank_points(table_size: int) -> tuple[int, ...]:
    return tuple(range(table_size, 0, -1))


def create(
    tournament_id: str,
    name: str,
    host_credential_hash: str,
    players: Sequence[Player],
    table_size: int,
    rank_points: Mapping[int, Sequence[int | float]] | None = None,
    first_round: str = RANDOM,
    seed_order: Sequence[str] = (),
    round_count: int = 1,
) -> list[TournamentEvent]:
    """`rank_points` overrides the default points of some table sizes; `seed_order` (all the
    player ids, strongest first) is required by, and only allowed with, `seeded` seating;
    `round_count` is how many rounds it plays (1 or more)."""
    if not tournament_id.strip():
        raise Rejected(
            "MISSING_TOURNAMENT_ID",
            "a tournament id is required",
            Kind.INVALID_ARGUMENT,
            {"field": "tournament_id"},
        )
    _check_players(players)
    table_sizes(len(players), table_size)
    points = _points_by_size(rank_points or {})
    _check_first_round(first_round, seed_order, [p.player_id for p in players])
    if round_count < 1:
        raise Rejected(
            "BAD_ROUND_COUNT",
            f"a tournament plays 1 round or more, not {round_count}",
            Kind.INVALID_ARGUMENT,
            {"field": "rounds", "rounds": round_count},
        )
    return [
        (
            "TournamentCreated",
            {
                "tournament_id": tournament_id,
                "name": name,
                "host_credential_hash": host_credential_hash,
                "players": [
                    {"player_id": p.player_id, "display_name": p.display_name} for p in players
                ],
                "table_size": table_size,
                "rank_points": points,
                "first_round": first_round,
                "seed_order": list(seed_order),
                "round_count": round_count,
            },
        )
    ]


def _check_players(players: Sequence[Player]) -> None:
    for player in players:
        if not player.player_id.strip():
            raise Rejected(
                "MISSING_PLAYER_ID",
                "every player needs an id",
                Kind.INVALID_ARGUMENT,
                {"field": "player_id"},
            )
        if not player.display_name.strip():
            raise Rejected(
                "MISSING_PLAYER_NAME",
                f"player {quoted(player.player_id)} needs a display name",
                Kind.INVALID_ARGUMENT,
                {"field": "display_name", "player_id": quoted(player.player_id)},
            )
    _reject_duplicates("player_id", [p.player_id for p in players])
    # Names differing only in case or surrounding spaces would be indistinguishable on a sheet.
    _reject_duplicates("display_name", [p.display_name.strip().casefold() for p in players])


def _reject_duplicates(field: str, values: Sequence[str]) -> None:
    repeated = [quoted(value) for value, count in Counter(values).items() if count > 1]
    if repeated:
        raise Rejected(
            "DUPLICATE_PLAYER",
            f"players must have distinct {field}s; repeated: {', '.join(repeated)}",
            Kind.INVALID_ARGUMENT,
            {"field": field, "repeated": ",".join(repeated)},
        )


def _points_by_size(overrides: Mapping[int, Sequence[int | float]]) -> dict[str, list[int | float]]:
    for size, points in overrides.items():
        _check_rank_points(size, points)
    return {
        str(size): list(overrides.get(size, default_rank_points(size)))
        for size in range(MIN_TABLE_SIZE, MAX_TABLE_SIZE + 1)
    }


def _check_rank_points(size: int, points: Sequence[int | float]) -> None:
    problem = _rank_points_problem(size, points)
    if problem:
        raise Rejected(
            "BAD_RANK_POINTS",
            f"rank points for tables of {size}: {problem}",
            Kind.INVALID_ARGUMENT,
            {"field": "rank_points", "table_size": size},
        )


def _rank_points_problem(size: int, points: Sequence[int | float]) -> str:
    if not MIN_TABLE_SIZE <= size <= MAX_TABLE_SIZE:
        return f"tables have {MIN_TABLE_SIZE} to {MAX_TABLE_SIZE} players"
    if len(points) != size:
        return f"need {size} values, one per rank, not {len(points)}"
    if not all(isinstance(p, int | float) and not isinstance(p, bool) for p in points):
        return "values must be numbers"
    if not all(math.isfinite(p) for p in points):
        return "values must be finite"
    if any(better < worse for better, worse in itertools.pairwise(points)):
        return "a better rank may not score fewer points"
    return ""


def _check_first_round(method: str, seed_order: Sequence[str], player_ids: Sequence[str]) -> None:
    if method not in SEATING_METHODS:
        raise Rejected(
            "BAD_SEATING_METHOD",
            f"round 1 is seated {' or '.join(SEATING_METHODS)}, not {quoted(method)!r}",
            Kind.INVALID_ARGUMENT,
            {"field": "first_round", "first_round": quoted(method)},
        )
    if method == RANDOM and seed_order:
        raise _bad_seed_order("a seed order is only for seeded seating")
    if method == SEEDED:
        unknown = [p for p in seed_order if p not in player_ids]
        if unknown:
            raise _unknown_players(unknown)
        if sorted(seed_order) != sorted(player_ids):
            raise _bad_seed_order("the seed order must list every player exactly once")


def _bad_seed_order(message: str) -> Rejected:
    return Rejected("BAD_SEED_ORDER", message, Kind.INVALID_ARGUMENT, {"field": "seed_order"})


def _unknown_players(player_ids: Sequence[str]) -> Rejected:
    player_ids = [quoted(player_id) for player_id in player_ids]
    return Rejected(
        "PLAYER_UNKNOWN",
        f"not players of this tournament: {', '.join(player_ids)}",
        Kind.INVALID_ARGUMENT,
        {"field": "player_ids", "player_ids": ",".join(player_ids)},
    )


# --- table sizes and seating -------------------------------------------------------------------


def table_sizes(player_count: int, table_size: int) -> tuple[int, ...]:
    """The size of each table of a round, biggest first (the rule is in the module docstring)."""
    if not MIN_TABLE_SIZE <= table_size <= MAX_TABLE_SIZE:
        raise Rejected(
            "BAD_TABLE_SIZE",
            f"tables have {MIN_TABLE_SIZE} to {MAX_TABLE_SIZE} players, not {table_size}",
            Kind.INVALID_ARGUMENT,
            {"field": "table_size", "table_size": table_size},
        )
    if player_count < table_size:
        raise Rejected(
            "NOT_ENOUGH_PLAYERS",
            f"tables of {table_size} need at least {table_size} players, not {player_count}",
            Kind.INVALID_ARGUMENT,
            {"field": "players", "player_count": player_count, "table_size": table_size},
        )
    smallest = min(table_size, SMALLEST_TABLE)
    tables = math.ceil(player_count / table_size)
    while player_count // tables < smallest:
        tables -= 1
    return _deal_evenly(player_count, tables)


def _deal_evenly(player_count: int, tables: int) -> tuple[int, ...]:
    base, bigger = divmod(player_count, tables)
    return (base + 1,) * bigger + (base,) * (tables - bigger)


def seat_round(tournament: Tournament, seed: int) -> tuple[tuple[str, ...], ...]:
    """The seating of the tournament's next round: tables of player ids in seat order."""
    rng = random.Random(seed)
    sizes = table_sizes(len(tournament.players), tournament.table_size)
    if tournament.rounds:
        tables = _cut(_swiss_order(tournament, rng), sizes)
    elif tournament.first_round == SEEDED:
        tables = _snake(tournament.seed_order, sizes)
    else:
        tables = _cut(_shuffled(tournament.player_ids, rng), sizes)
    return tuple(tuple(_shuffled(table, rng)) for table in tables)


def _shuffled(items: Iterable[_T], rng: random.Random) -> list[_T]:
    copy = list(items)
    rng.shuffle(copy)
    return copy


def _cut(order: Sequence[str], sizes: Sequence[int]) -> list[list[str]]:
    ends = itertools.accumulate(sizes)
    return [list(order[end - size : end]) for end, size in zip(ends, sizes, strict=True)]


def _snake(order: Sequence[str], sizes: Sequence[int]) -> list[list[str]]:
    tables: list[list[str]] = [[] for _ in sizes]
    lanes = _serpentine(len(sizes))
    for player in order:
        lane = next(i for i in lanes if len(tables[i]) < sizes[i])
        tables[lane].append(player)
    return tables


def _serpentine(count: int) -> Iterator[int]:
    while True:
        yield from range(count)
        yield from reversed(range(count))


def _swiss_order(tournament: Tournament, rng: random.Random) -> list[str]:
    # Shuffle, then sort stably without the player id: exact ties end up in the seed's order.
    ranked = _shuffled(standings(tournament), rng)
    ranked.sort(key=strength_key)
    return [s.player_id for s in ranked]


# --- rounds ------------------------------------------------------------------------------------


def _require_exists(tournament: Tournament) -> None:
    if not tournament.exists:
        raise Rejected("TOURNAMENT_NOT_FOUND", "no such tournament", Kind.NOT_FOUND)


def start_round(tournament: Tournament, seed: int) -> list[TournamentEvent]:
    """Seats the next round; `seed` drives every random choice of the seating."""
    _require_exists(tournament)
    current = tournament.current_round
    if tournament.finished:
        raise Rejected(
            "TOURNAMENT_OVER",
            f"all {tournament.round_count} rounds have been played",
            details={"rounds": tournament.round_count},
        )
    if current is not None and not current.finished:
        raise Rejected(
            "ROUND_NOT_FINISHED",
            f"round {current.number} still has tables without a result",
            details={"round": current.number},
        )
    seating = seat_round(tournament, seed)
    return [
        (
            "RoundStarted",
            {
                "round": len(tournament.rounds) + 1,
                "seed": seed,
                "seating": [list(table) for table in seating],
            },
        )
    ]


def in_progress(tournament: Tournament) -> Round | None:
    """The round a StartRound finishes instead of starting another: the current one, while it
    has tables without a result (created or not, started or not)."""
    current = tournament.current_round
    return current if current is not None and not current.finished else None


def round_table_ids(tournament: Tournament, round_: Round) -> tuple[str, ...]:
    """The lobby's table for each seating slot of `round_`: those assigned, or else the ids its
    tables are created with, derived from the round as recorded (the seed is drawn by the
    lobby, so nobody names a table ahead of its round)."""
    if round_.table_ids:
        return round_.table_ids
    return tuple(
        "t-" + hashlib.sha256(_round_key(tournament, round_, slot)).hexdigest()[:12]
        for slot in range(len(round_.seating))
    )


def _round_key(tournament: Tournament, round_: Round, slot: int) -> bytes:
    return f"{tournament.tournament_id}\0{round_.number}\0{round_.seed}\0{slot}".encode()


def assign_tables(tournament: Tournament, table_ids: Sequence[str]) -> list[TournamentEvent]:
    """Records the lobby's table for each seating slot of the current round, in slot order."""
    _require_exists(tournament)
    current = tournament.current_round
    if current is None:
        raise Rejected("ROUND_NOT_STARTED", "no round has started")
    if current.tables_assigned:
        raise Rejected(
            "TABLES_ALREADY_ASSIGNED",
            f"round {current.number} already has its tables",
            details={"round": current.number},
        )
    if len(table_ids) != len(current.seating) or not all(t.strip() for t in table_ids):
        raise Rejected(
            "BAD_TABLE_ASSIGNMENT",
            f"round {current.number} needs {len(current.seating)} table ids, one per table",
            Kind.INVALID_ARGUMENT,
            {"field": "table_ids", "expected": len(current.seating)},
        )
    used = {table_id for r in tournament.rounds for table_id in r.table_ids}
    reused = sorted(t for t, n in Counter(table_ids).items() if n > 1 or t in used)
    if reused:
        raise Rejected(
            "DUPLICATE_TABLE_ID",
            f"a table plays once in a tournament; repeated: {', '.join(reused)}",
            Kind.INVALID_ARGUMENT,
            {"field": "table_ids", "repeated": ",".join(reused)},
        )
    return [("TablesAssigned", {"round": current.number, "table_ids": list(table_ids)})]


def record_result(
    tournament: Tournament,
    table_id: str,
    net_worths: Mapping[str, int],
    end: str,
    forfeited: Sequence[str] = (),
) -> list[TournamentEvent]:
    """Records how a table of the current round ended: every seated player's final net worth,
    and with `end` "forfeit" the players who forfeited. The last result also ends the round."""
    _require_exists(tournament)
    current, seated = _table_of_current_round(tournament, table_id)
    _check_net_worths(tournament, seated, net_worths)
    _check_end(end, forfeited, seated)
    recorded: TournamentEvent = (
        "TableResultRecorded",
        {
            "round": current.number,
            "table_id": table_id,
            "net_worths": {player: net_worths[player] for player in seated},
            "end": end,
            "forfeited": [player for player in seated if player in forfeited],
        },
    )
    if evolve(tournament, recorded).rounds[-1].all_results_in:
        return [recorded, ("RoundFinished", {"round": current.number})]
    return [recorded]


def seated_at(tournament: Tournament, table_id: str) -> list[str]:
    """The players the current round seated at `table_id`, in seat order: a seat's result is
    theirs even when the host has given the seat to another player since (ReplaceSeat)."""
    return _table_of_current_round(tournament, table_id)[1]


def _table_of_current_round(tournament: Tournament, table_id: str) -> tuple[Round, list[str]]:
    current = tournament.current_round
    slot = current.slot_of(table_id) if current else None
    if current is None or slot is None:
        raise Rejected(
            "RESULT_UNKNOWN_TABLE",
            f"{quoted(table_id)!r} is not a table of the current round",
            details={"table_id": quoted(table_id)},
        )
    if current.result_of(table_id) is not None:
        raise Rejected(
            "RESULT_ALREADY_RECORDED",
            f"table {table_id} already has its result",
            details={"table_id": table_id},
        )
    return current, list(current.seating[slot])


def _check_net_worths(
    tournament: Tournament, seated: Sequence[str], net_worths: Mapping[str, int]
) -> None:
    unknown = [p for p in net_worths if p not in tournament.player_ids]
    if unknown:
        raise _unknown_players(unknown)
    elsewhere = [p for p in net_worths if p not in seated]
    if elsewhere:
        raise Rejected(
            "PLAYER_NOT_AT_TABLE",
            f"not seated at this table: {', '.join(elsewhere)}",
            Kind.INVALID_ARGUMENT,
            {"field": "net_worths", "player_ids": ",".join(elsewhere)},
        )
    missing = [p for p in seated if p not in net_worths]
    if missing:
        raise Rejected(
            "MISSING_NET_WORTH",
            f"no net worth for: {', '.join(missing)}",
            Kind.INVALID_ARGUMENT,
            {"field": "net_worths", "player_ids": ",".join(missing)},
        )


def _check_end(end: str, forfeited: Sequence[str], seated: Sequence[str]) -> None:
    if end not in END_REASONS:
        raise Rejected(
            "BAD_END_REASON",
            f"a game ends by {', '.join(END_REASONS)}, not {end!r}",
            Kind.INVALID_ARGUMENT,
            {"field": "end", "end": end},
        )
    if end != FORFEIT and forfeited:
        raise _bad_forfeit("only a forfeit names forfeiting players")
    if end == FORFEIT and not forfeited:
        raise _bad_forfeit("a forfeit names the players who forfeited")
    if len(set(forfeited)) != len(forfeited) or not set(forfeited) <= set(seated):
        raise _bad_forfeit("forfeiting players are distinct players of the table")


def _bad_forfeit(message: str) -> Rejected:
    return Rejected("BAD_FORFEIT", message, Kind.INVALID_ARGUMENT, {"field": "forfeited"})


# --- standings ---------------------------------------------------------------------------------


def table_placings(tournament: Tournament, result: TableResult) -> list[Placing]:
    points = tournament.points_for(len(result.net_worths))
    return place_table(result.net_worths, result.forfeited, points)


def standings(tournament: Tournament) -> list[Standing]:
    """Every player's standing after all results recorded so far, best first."""
    placings = (
        placing
        for r in tournament.rounds
        for result in r.results
        for placing in table_placings(tournament, result)
    )
    players = [(p.player_id, p.display_name) for p in tournament.players]
    return compute_standings(players, placings)
