"""`shikoku tournament create | start-round | status | standings`: a host runs a tournament from
the command line, through the gateway, as any client of the public API (docs/tournaments.md)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table as RichTable

from shikoku.v1 import lobby_pb2
from shikoku_sdk import Client, ShikokuError
from tools.gateway_command import require_gateway, run_against_gateway
from tools.tournament_input import Entrant, InputError, parse_clock, read_players
from tools.tournament_status import console, round_tables, show_status, watch_status

HOST_NAME = "host"  # the display name of the host each `create` registers
TABLE_SIZES = range(2, 7)


def create(
    name: str,
    players_file: Path,
    table_size: int,
    rounds: int,
    clock: str | None,
    profile: str | None,
    as_json: bool,
    gateway: str,
    api_key: str | None,
) -> int:
    """Registers the host and every player of `players_file`, sets the webhooks it names and
    creates the tournament; prints its id, the host token and each player's credential."""
    label = "shikoku tournament create"

    def work() -> int:
        entrants = read_players(players_file)
        options = _table_options(clock, profile)
        if table_size not in TABLE_SIZES:
            raise InputError(f"--table-size {table_size}: a table seats 2 to 6 players")
        if rounds < 1:
            raise InputError(f"--rounds {rounds}: a tournament plays at least one round")
        require_gateway(gateway, api_key)
        with Client(gateway, api_key=api_key) as client:
            host = client.register_host(HOST_NAME)
            registered = [(e, client.register_player(e.name)) for e in entrants]
            for entrant, player in registered:
                _set_webhook(client.with_credential(player.credential), entrant)
            tournament = client.with_credential(host.credential).create_tournament(
                name,
                [player.player_id for _, player in registered],
                table_size,
                table_options=options,
                rounds=rounds,
            )
        created = {
            "tournament_id": tournament.tournament_id,
            "host_token": host.credential,
            "players": [
                {"name": e.name, "player_id": p.player_id, "credential": p.credential}
                for e, p in registered
            ],
        }
        print(json.dumps(created, indent=1) if as_json else _created_text(created))
        return 0

    return run_against_gateway(label, gateway, work)


def _table_options(clock: str | None, profile: str | None) -> lobby_pb2.TableOptions:
    options = lobby_pb2.TableOptions(rules_profile=profile or "")
    if clock is not None:
        options.clock.CopyFrom(parse_clock(clock))
    return options


def _set_webhook(player: Client, entrant: Entrant) -> None:
    if not entrant.webhook:
        return
    try:
        player.set_notification_target(entrant.webhook, entrant.webhook_format)
    except ShikokuError as error:
        whose = f"the webhook of {entrant.name!r}: {error.message}"
        raise ShikokuError(error.code, whose, error.reason, error.metadata) from None


def _created_text(created: dict[str, Any]) -> str:
    lines = [
        f"tournament {created['tournament_id']}",
        f"host token: {created['host_token']}",
        "players (name, player id, credential):",
    ]
    lines += [f"  {p['name']}\t{p['player_id']}\t{p['credential']}" for p in created["players"]]
    lines.append("(--json prints all of this as one document, the file `shikoku bot` reads)")
    return "\n".join(lines)


def start_round(
    tournament_id: str, host_token: str, as_json: bool, gateway: str, api_key: str | None
) -> int:
    """Seats and starts the tournament's next round (or, while one is in progress, answers
    that one); prints its number and its tables' ids, games and seats."""

    def work() -> int:
        require_gateway(gateway, api_key)
        with Client(gateway, host_token, api_key=api_key) as host:
            tournament = host.start_round(tournament_id)
            current = tournament.rounds[-1]
            # Listed page by page rather than read a table at a time (a round may have 1,000).
            listed = round_tables(host, tournament_id, current)
            tables = [
                listed[t.table_id] if listed[t.table_id].game_id else host.get_table(t.table_id)
                for t in current.tables
            ]
        started = {
            "round": current.number,
            "tables": [
                {
                    "table_id": table.table_id,
                    "game_id": table.game_id,
                    "seats": _seats(table, entry.player_ids),
                }
                for entry, table in zip(current.tables, tables, strict=True)
            ],
        }
        print(json.dumps(started, indent=1) if as_json else _started_text(started))
        return 0

    return run_against_gateway("shikoku tournament start-round", gateway, work)


def _seats(table: lobby_pb2.Table, player_ids: Sequence[str]) -> list[dict[str, Any]]:
    return [
        {
            "seat": seat.number,
            "player_id": player_ids[seat.number - 1] if seat.number <= len(player_ids) else "",
            "name": seat.player_name,
        }
        for seat in table.seats
    ]


def _started_text(started: dict[str, Any]) -> str:
    lines = [f"round {started['round']}: {len(started['tables'])} tables"]
    for table in started["tables"]:
        names = ", ".join(seat["name"] for seat in table["seats"])
        lines.append(f"  {table['table_id']}  game {table['game_id']}  {names}")
    return "\n".join(lines)


def status(
    tournament_id: str, as_json: bool, watch: bool, gateway: str, api_key: str | None
) -> int:
    """The current round's tables, once (text or JSON), or live until the tournament ends."""

    def work() -> int:
        require_gateway(gateway, api_key)
        with Client(gateway, api_key=api_key) as client:
            if watch:
                return watch_status(client, tournament_id)
            return show_status(client, tournament_id, as_json)

    return run_against_gateway("shikoku tournament status", gateway, work)


def standings(tournament_id: str, as_csv: bool, gateway: str, api_key: str | None) -> int:
    """The standings, one row a player: the server's CSV export with --csv, else a table."""

    def work() -> int:
        require_gateway(gateway, api_key)
        with Client(gateway, api_key=api_key) as client:
            if as_csv:
                text = client.export_standings(tournament_id, lobby_pb2.STANDINGS_FORMAT_CSV)
                sys.stdout.write(text if text.endswith("\n") else text + "\n")
                return 0
            rows = client.standings(tournament_id)
        table = RichTable("#", "player", "player id", "points", "net worth", "games")
        for row in rows:
            table.add_row(
                str(row.position),
                row.display_name,
                row.player_id,
                f"{row.points:g}",
                f"¥{row.net_worth}",
                str(row.games),
            )
        console().print(table)
        return 0

    return run_against_gateway("shikoku tournament standings", gateway, work)
