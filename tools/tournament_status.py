"""`shikoku tournament status`: the current round's tables, as one JSON document, a table in the
terminal, or (`--watch`) a live table fed by WatchTournament, the tournament's one stream.

Per table: its ids, its game's round and phase, whose turn it is, each seat's clock, whether it
has finished, and whether it has stalled (not moved for `STALLED_AFTER_MS`, from its summary's
moved_at_ms).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table as RichTable

from shikoku.v1 import lobby_pb2
from shikoku_sdk import Client

STALLED_AFTER_MS = 5 * 60 * 1000
PLAIN_WIDTH = 200  # not on a terminal (a pipe, a log): rows are not wrapped to 80 columns
DRAW_SECONDS = 0.5
WATCH_HEARTBEAT_SECONDS = 5  # the live table's stalled marks and clocks are redrawn this often
TableDocument = dict[str, Any]


def now_ms() -> int:
    return int(time.time() * 1000)


def console() -> Console:
    """Stdout's console: a terminal's width, or PLAIN_WIDTH columns elsewhere."""
    found = Console()
    return found if found.is_terminal else Console(width=PLAIN_WIDTH)


def current_round(tournament: lobby_pb2.Tournament) -> lobby_pb2.TournamentRound | None:
    return tournament.rounds[-1] if tournament.rounds else None


def table_document(
    entry: lobby_pb2.TournamentTable, table: lobby_pb2.Table | None, at_ms: int
) -> TableDocument:
    """One table of the round as `status --json` shows it (`table`: as the lobby last told of
    it; None before its first word), its clocks as they stand at `at_ms`."""
    table = table or lobby_pb2.Table(table_id=entry.table_id)
    game = table.game
    names = {seat.number: seat.player_name for seat in table.seats}
    # A recorded result says so even before the table's own last change has been heard of.
    finished = (
        bool(entry.end_reason)
        or game.finished
        or table.status in (lobby_pb2.TABLE_STATUS_FINISHED, lobby_pb2.TABLE_STATUS_ABANDONED)
    )
    return {
        "table_id": entry.table_id,
        "game_id": table.game_id,
        "status": _status_name(table.status),
        "game_round": game.round,
        "round_number": game.round_number,
        "operating": game.operating,
        "phase": game.phase,
        "acting_seats": list(game.acting_seats),
        "whose_turn": [names.get(seat, "") for seat in game.acting_seats],
        "seats": [
            {
                "seat": seat.number,
                "player_id": _player_at(entry, seat.number),
                "name": seat.player_name,
                "clock": _clock(seat, at_ms),
                "ran_out": seat.ran_out,
            }
            for seat in table.seats
        ],
        "finished": finished,
        "end_reason": entry.end_reason or game.end_reason,
        "version": game.version,
        "moved_at_ms": game.moved_at_ms,
        "stalled": stalled(game, finished, at_ms),
    }


def stalled(game: lobby_pb2.GameSummary, finished: bool, at_ms: int) -> bool:
    """Whether a game still playing has not moved for STALLED_AFTER_MS by `at_ms`."""
    return not finished and game.moved_at_ms > 0 and at_ms - game.moved_at_ms >= STALLED_AFTER_MS


def _status_name(status: lobby_pb2.TableStatus.ValueType) -> str:
    return lobby_pb2.TableStatus.Name(status).removeprefix("TABLE_STATUS_").lower()


def _player_at(entry: lobby_pb2.TournamentTable, seat: int) -> str:
    return entry.player_ids[seat - 1] if 0 < seat <= len(entry.player_ids) else ""


def _clock(seat: lobby_pb2.Seat, at_ms: int) -> dict[str, Any] | None:
    if not seat.HasField("clock"):
        return None
    clock = seat.clock
    spent = max(at_ms - clock.as_of_ms, 0) if clock.running else 0
    return {
        "remaining_ms": max(clock.remaining_ms - spent, 0),
        "used_ms": clock.used_ms + spent,
        "running": clock.running,
    }


def status_document(
    tournament: lobby_pb2.Tournament, tables: Mapping[str, lobby_pb2.Table], at_ms: int
) -> dict[str, Any]:
    """The whole of `status --json`: the tournament, its current round and that round's
    tables (`tables`: the lobby's latest word on each, by table id)."""
    current = current_round(tournament)
    entries = list(current.tables) if current else []
    return {
        "tournament_id": tournament.tournament_id,
        "name": tournament.name,
        "round": current.number if current else 0,
        "round_count": tournament.round_count,
        "round_finished": bool(current and current.finished),
        "finished": tournament.finished,
        "tables": [table_document(e, tables.get(e.table_id), at_ms) for e in entries],
    }


def render(document: Mapping[str, Any]) -> RichTable:
    """The status document as a terminal table, one row a table of the round."""
    over = " — finished" if document["finished"] else ""
    title = (
        f"{document['name']} ({document['tournament_id']}): "
        f"round {document['round']} of {document['round_count'] or '?'}{over}"
    )
    table = RichTable("table", "game", "round", "phase", "turn", "clocks", "state", title=title)
    for row in document["tables"]:
        table.add_row(
            row["table_id"],
            row["game_id"] or "-",
            _round_text(row),
            row["phase"] or "-",
            ", ".join(row["whose_turn"]) or "-",
            _clocks_text(row["seats"]),
            _state_text(row),
        )
    return table


def _round_text(row: Mapping[str, Any]) -> str:
    if not row["game_round"]:
        return "-"
    text = f"{row['game_round'].replace('_', ' ')} {row['round_number'] or ''}".strip()
    return f"{text} ({row['operating']})" if row["operating"] else text


def _clocks_text(seats: Iterable[Mapping[str, Any]]) -> str:
    shown = []
    for seat in seats:
        clock = seat["clock"]
        if clock is None:
            continue
        seconds = clock["remaining_ms"] // 1000
        mark = "▶" if clock["running"] else ""
        flag = f" {seat['ran_out']}" if seat["ran_out"] else ""
        shown.append(f"{mark}{seat['seat']}: {seconds // 60}:{seconds % 60:02d}{flag}")
    return "  ".join(shown) or "-"


def _state_text(row: Mapping[str, Any]) -> str:
    if row["finished"]:
        return f"finished ({row['end_reason']})" if row["end_reason"] else "finished"
    if row["stalled"]:
        return "[bold red]stalled[/]"
    return str(row["status"])


def show_status(client: Client, tournament_id: str, as_json: bool) -> int:
    """Prints the status once: each table of the current round read with GetTable (which
    carries the seats' clocks)."""
    tournament = client.get_tournament(tournament_id)
    current = current_round(tournament)
    entries = [entry for entry in (current.tables if current else ()) if entry.table_id]
    tables = {entry.table_id: client.get_table(entry.table_id) for entry in entries}
    document = status_document(tournament, tables, now_ms())
    if as_json:
        print(json.dumps(document, indent=1))
    else:
        console().print(render(document))
    return 0


def watch_status(client: Client, tournament_id: str) -> int:
    """A live table until the tournament has finished (or Ctrl-C): the tournament and each
    change of its current round's tables come over WatchTournament; only when a round starts
    are its tables listed once (ListTables of the tournament), to fill the rows before their
    first change."""
    tournament: lobby_pb2.Tournament | None = None
    tables: dict[str, lobby_pb2.Table] = {}
    shown_round = -1
    drawn_at = 0.0
    with Live(console=console(), auto_refresh=False) as live:
        for item in client.watch_tournament(tournament_id, WATCH_HEARTBEAT_SECONDS):
            kind = item.WhichOneof("item")
            if kind == "tournament":
                tournament = item.tournament
                current = current_round(tournament)
                if current is not None and current.number != shown_round:
                    shown_round = current.number
                    tables = round_tables(client, tournament_id, current)
            elif kind == "table" and item.table.table_id in tables:
                tables[item.table.table_id] = item.table
            if tournament is None:
                continue
            if tournament.finished:
                tables = _as_ended(client, tables)
            # A round of a thousand tables changes many times a second: drawn at most every
            # DRAW_SECONDS (a change since is drawn with the next item, a heartbeat at most).
            if kind != "table" or time.monotonic() - drawn_at >= DRAW_SECONDS:
                live.update(render(status_document(tournament, tables, now_ms())), refresh=True)
                drawn_at = time.monotonic()
            if tournament.finished:
                return 0
    return 0


def _as_ended(client: Client, tables: Mapping[str, lobby_pb2.Table]) -> dict[str, lobby_pb2.Table]:
    """The last round's tables for the last frame: the stream may bring a table's final change
    after the result that ends the tournament, so a table not yet heard of as finished is read
    once more (GetTable, with its clocks stopped)."""
    return {
        table_id: table if table.game.finished else client.get_table(table_id)
        for table_id, table in tables.items()
    }


def round_tables(
    client: Client, tournament_id: str, current: lobby_pb2.TournamentRound
) -> dict[str, lobby_pb2.Table]:
    """The round's tables as ListTables has them (newest first, so the current round's come
    first: the listing stops once it has them all)."""
    wanted = {entry.table_id for entry in current.tables if entry.table_id}
    found: dict[str, lobby_pb2.Table] = {}
    for table in client.list_tables(tournament_id=tournament_id, page_size=200):
        if table.table_id in wanted:
            found[table.table_id] = table
        if len(found) == len(wanted):
            break
    return {
        table_id: found.get(table_id, lobby_pb2.Table(table_id=table_id)) for table_id in wanted
    }
