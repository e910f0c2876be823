"""Seating a whole table at once: create it, take every seat, start it (for bots and tests)."""

from __future__ import annotations

from dataclasses import dataclass

from shikoku.v1 import lobby_pb2
from shikoku_sdk.client import Client


@dataclass(frozen=True)
class SeatedTable:
    """A started table whose every seat one program holds: `seats` maps each seat number to a
    client acting for it, `host` acts for the table's host (all over one channel)."""

    table_id: str
    game_id: str
    host: Client
    seats: dict[int, Client]


def seat_table(
    client: Client,
    players: int,
    options: lobby_pb2.TableOptions | None = None,
    display_name: str = "",
    player_name: str = "bot",
) -> SeatedTable:
    """Creates a table of `players` seats, takes them all (named "<player_name> 1"...) and
    starts it, over `client`'s channel."""
    created = client.create_table(
        players, options, display_name or f"{player_name}s ({players} players)"
    )
    table_id = created.table.table_id
    seats: dict[int, Client] = {}
    for n in range(1, players + 1):
        joined = client.join_table(table_id, f"{player_name} {n}")
        seats[joined.seat] = client.with_credential(joined.seat_token)
    host = client.with_credential(created.host_token)
    game_id = host.start_table(table_id).game_id
    return SeatedTable(table_id, game_id, host, seats)
