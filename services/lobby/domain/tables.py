"""Tables and seats, event-sourced like games: decide_* functions return events or raise
Rejected; evolve folds them. Credentials are stored only as SHA-256 hashes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce
from typing import Any

from kernel.rejection import Kind, Rejected, quoted
from services.lobby.domain.clocks import ClockEvent, ClockSettings

MIN_SEATS, MAX_SEATS = 2, 6
#: The rules profiles a table may be played under (those of the title's profiles.toml,
#: services/rules/titles/1889/profiles.toml; a test holds the two lists equal), so that a table
#: with any other is refused when it is created, not when it starts.
RULES_PROFILES = ("rulebook", "18xx.games")
DEFAULT_RULES_PROFILE = RULES_PROFILES[0]


def checked_rules_profile(name: str, field: str = "options.rules_profile") -> str:
    """The profile a table option names ("" is the default), or UNKNOWN_RULES_PROFILE."""
    profile = name or DEFAULT_RULES_PROFILE
    if profile not in RULES_PROFILES:
        raise Rejected(
            "UNKNOWN_RULES_PROFILE",
            f"there is no rules profile {quoted(name)!r} (there are {', '.join(RULES_PROFILES)})",
            Kind.INVALID_ARGUMENT,
            {"field": field},
        )
    return profile


@dataclass(frozen=True, slots=True)
class Spectating:
    """Who may watch a table's game besides its seats and host, and how far behind."""

    open: bool = True
    delay_actions: int = 0

    def __post_init__(self) -> None:
        if self.delay_actions < 0:
            raise ValueError(f"the spectator delay is 0 or more actions, not {self.delay_actions}")


@dataclass(frozen=True, slots=True)
class Seat:
    number: int
    player_name: str = ""
    credential_hash: str = ""
    player_id: str = ""  # set when a registered player holds the seat
    ready: bool = False

    @property
    def taken(self) -> bool:
        return bool(self.credential_hash)


@dataclass(frozen=True, slots=True)
class Table:
    table_id: str = ""
    display_name: str = ""
    beginner_game: bool = False
    fixed_seat_order: bool = False
    trust_submitted_revenue: bool = False
    undo_allowed: bool = False
    rules_profile: str = DEFAULT_RULES_PROFILE
    host_credential_hash: str = ""
    host_player_id: str = ""  # a registered host who administers the table too
    tournament_id: str = ""
    clock: ClockSettings | None = None
    ran_out: tuple[tuple[int, str], ...] = ()  # (seat, "flagged" | "forfeited")
    abandoned: bool = False
    spectating: Spectating = Spectating()
    seats: tuple[Seat, ...] = ()
    game_id: str = ""

    @property
    def all_ready(self) -> bool:
        return all(s.taken and s.ready for s in self.seats)

    @property
    def exists(self) -> bool:
        return bool(self.table_id)

    @property
    def started(self) -> bool:
        return bool(self.game_id)

    def seat_of(self, credential_hash: str) -> Seat | None:
        return next((s for s in self.seats if s.credential_hash == credential_hash), None)

    def seat_of_player(self, player_id: str) -> Seat | None:
        return next((s for s in self.seats if player_id and s.player_id == player_id), None)


# Events are (type, payload) pairs: the lobby's log has few kinds and no behaviour to attach.
LobbyEvent = tuple[str, dict[str, Any]]


def evolve(table: Table, event: LobbyEvent) -> Table:
    kind, data = event
    match kind:
        case "TableCreated":
            return Table(
                table_id=data["table_id"],
                display_name=data["display_name"],
                beginner_game=data["beginner_game"],
                fixed_seat_order=data["fixed_seat_order"],
                trust_submitted_revenue=data.get("trust_submitted_revenue", False),
                undo_allowed=data.get("undo_allowed", False),
                rules_profile=data.get("rules_profile", DEFAULT_RULES_PROFILE),
                host_credential_hash=data["host_credential_hash"],
                host_player_id=data.get("host_player_id", ""),
                tournament_id=data.get("tournament_id", ""),
                clock=ClockSettings(**data["clock"]) if data.get("clock") else None,
                spectating=Spectating(**data.get("spectating", {})),
                seats=tuple(Seat(n) for n in range(1, data["seat_count"] + 1)),
            )
        case "SeatTaken" | "SeatReplaced":
            seat = Seat(
                data["seat"],
                data["player_name"],
                data["credential_hash"],
                data.get("player_id", ""),
            )
            return _with_seat(table, seat)
        case "SeatLeft":
            return _with_seat(table, Seat(data["seat"]))
        case "TableStarted":
            return dataclasses.replace(table, game_id=data["game_id"])
        case "SeatReady":
            seat = dataclasses.replace(table.seats[data["seat"] - 1], ready=data["ready"])
            return _with_seat(table, seat)
        case "TableAbandoned":
            return dataclasses.replace(table, abandoned=True)
        case "ClockRanOut":
            return dataclasses.replace(
                table, ran_out=(*table.ran_out, (data["seat"], data["kind"]))
            )
        case "SeatForfeited":
            others = tuple(entry for entry in table.ran_out if entry[0] != data["seat"])
            return dataclasses.replace(table, ran_out=(*others, (data["seat"], "forfeited")))
    raise ValueError(f"unknown lobby event {kind}")


def fold(events: Iterable[LobbyEvent]) -> Table:
    return reduce(evolve, events, Table())


def _with_seat(table: Table, seat: Seat) -> Table:
    seats = tuple(seat if s.number == seat.number else s for s in table.seats)
    return dataclasses.replace(table, seats=seats)


def create(
    table_id: str,
    seat_count: int,
    display_name: str,
    beginner_game: bool,
    fixed_seat_order: bool,
    host_credential_hash: str,
    trust_submitted_revenue: bool = False,
    undo_allowed: bool = False,
    host_player_id: str = "",
    tournament_id: str = "",
    clock: ClockSettings | None = None,
    spectating: Spectating = Spectating(),
    rules_profile: str = DEFAULT_RULES_PROFILE,
) -> list[LobbyEvent]:
    profile = checked_rules_profile(rules_profile)
    if not MIN_SEATS <= seat_count <= MAX_SEATS:
        raise Rejected(
            "INVALID_SEAT_COUNT",
            f"a table has {MIN_SEATS} to {MAX_SEATS} seats, not {seat_count}",
            Kind.INVALID_ARGUMENT,
            {"field": "seat_count", "seat_count": seat_count},
        )
    return [
        (
            "TableCreated",
            {
                "table_id": table_id,
                "seat_count": seat_count,
                "display_name": display_name,
                "beginner_game": beginner_game,
                "fixed_seat_order": fixed_seat_order,
                "trust_submitted_revenue": trust_submitted_revenue,
                "undo_allowed": undo_allowed,
                "rules_profile": profile,
                "host_player_id": host_player_id,
                "tournament_id": tournament_id,
                "clock": dataclasses.asdict(clock) if clock else None,
                "spectating": dataclasses.asdict(spectating),
                "host_credential_hash": host_credential_hash,
            },
        )
    ]


def _open(table: Table) -> None:
    if table.abandoned:
        raise Rejected(
            "TABLE_ABANDONED",
            f"table {table.table_id} was abandoned",
            details={"table": table.table_id},
        )
    if table.started:
        raise Rejected(
            "TABLE_STARTED",
            f"table {table.table_id} has started",
            details={"table": table.table_id},
        )


def join(
    table: Table, player_name: str, seat: int, credential_hash: str, player_id: str = ""
) -> list[LobbyEvent]:
    _open(table)
    if table.seat_of_player(player_id) is not None:
        raise Rejected(
            "SEAT_ALREADY_HELD",
            f"player {player_id} already holds a seat at table {table.table_id}",
            details={"player_id": player_id},
        )
    if not player_name.strip():
        raise Rejected(
            "MISSING_PLAYER_NAME",
            "a player name is required",
            Kind.INVALID_ARGUMENT,
            {"field": "player_name"},
        )
    free = [s.number for s in table.seats if not s.taken]
    if not free:
        raise Rejected("TABLE_FULL", f"table {table.table_id} is full")
    if seat == 0:
        seat = free[0]
    elif not 1 <= seat <= len(table.seats):
        raise Rejected(
            "INVALID_SEAT",
            f"table {table.table_id} has seats 1 to {len(table.seats)}, not {seat}",
            Kind.INVALID_ARGUMENT,
            {"field": "seat", "seat": seat},
        )
    elif seat not in free:
        raise Rejected("SEAT_TAKEN", f"seat {seat} is taken", details={"seat": seat})
    taken = {"seat": seat, "player_name": player_name, "credential_hash": credential_hash}
    return [("SeatTaken", {**taken, "player_id": player_id})]


def leave(table: Table, seat: Seat) -> list[LobbyEvent]:
    _open(table)
    return [("SeatLeft", {"seat": seat.number})]


def start(table: Table, game_id: str) -> list[LobbyEvent]:
    _open(table)
    taken = sum(s.taken for s in table.seats)
    if taken < MIN_SEATS:
        raise Rejected(
            "TOO_FEW_PLAYERS",
            f"a game needs at least {MIN_SEATS} players; {taken} seats are taken",
            details={"taken": taken},
        )
    return [("TableStarted", {"game_id": game_id})]


def replace(
    table: Table, number: int, player_name: str, credential_hash: str, player_id: str
) -> list[LobbyEvent]:
    """The host gives a seat to another player (replacing one who dropped out): the old
    holder's credential no longer acts for it."""
    if not 1 <= number <= len(table.seats):
        raise Rejected(
            "INVALID_SEAT",
            f"table {table.table_id} has seats 1 to {len(table.seats)}, not {number}",
            Kind.INVALID_ARGUMENT,
            {"field": "seat", "seat": number},
        )
    if not table.seats[number - 1].taken:
        raise Rejected("SEAT_FREE", f"seat {number} is free: join it instead")
    holder = table.seat_of_player(player_id)
    if holder is not None and holder.number != number:
        raise Rejected(
            "SEAT_ALREADY_HELD",
            f"player {player_id} already holds seat {holder.number}",
            details={"player_id": player_id},
        )
    replaced = {
        "seat": number,
        "player_name": player_name,
        "credential_hash": credential_hash,
        "player_id": player_id,
    }
    return [("SeatReplaced", replaced)]


def ran_out(table: Table, verdicts: Iterable[ClockEvent]) -> list[LobbyEvent]:
    """Records the clock's verdicts not recorded yet."""
    recorded = {seat for seat, _kind in table.ran_out}
    return [
        ("ClockRanOut", {"seat": v.seat, "kind": v.kind, "at_ms": v.at_ms})
        for v in verdicts
        if v.seat not in recorded
    ]


def forfeit(table: Table, number: int, out_of_time: bool, game_over: bool) -> list[LobbyEvent]:
    """The host declares a seat forfeited whose clock has run out (`out_of_time`, as the clock
    stands now, whether or not its flag is recorded yet): it ranks last at the table, as a
    forfeit under the "forfeit" policy does. Nothing to record for a seat already forfeited."""
    if not 1 <= number <= len(table.seats):
        raise Rejected(
            "INVALID_SEAT",
            f"table {table.table_id} has seats 1 to {len(table.seats)}, not {number}",
            Kind.INVALID_ARGUMENT,
            {"field": "seat", "seat": number},
        )
    if (number, "forfeited") in table.ran_out:
        return []
    if not table.started:
        raise Rejected("TABLE_NOT_STARTED", f"table {table.table_id} has no game yet")
    if table.clock is None or not out_of_time:
        raise Rejected(
            "NOT_OUT_OF_TIME",
            f"seat {number} has time left"
            if table.clock
            else f"table {table.table_id} has no clock",
            details={"seat": number},
        )
    if game_over:
        raise Rejected("GAME_OVER", f"the game of table {table.table_id} is over")
    return [("SeatForfeited", {"seat": number})]


def set_ready(table: Table, seat: Seat, ready: bool) -> list[LobbyEvent]:
    _open(table)
    return [("SeatReady", {"seat": seat.number, "ready": ready})]


def abandon(table: Table) -> list[LobbyEvent]:
    if table.abandoned:
        raise Rejected("TABLE_ABANDONED", f"table {table.table_id} was abandoned already")
    return [("TableAbandoned", {})]
