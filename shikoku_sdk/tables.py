"""Seating a whole table at once: create it, take every seat, start it (for bots and tests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from shikoku.v1 import lobby_pb2
from shikoku_sdk.client import Client

AnyClient = TypeVar("AnyClient")


@dataclass(frozen=True)
class Seating(Generic[AnyClient]):
    """A started table whose every seat one program holds, whatever its client: `seats` maps
    each seat number to a client acting for it and `host` acts for the table's host (all over
    one channel); `seat_tokens` are the seats' tokens by seat number and `host_token` the
    host's (what JoinTable and CreateTable answered: give a token to another program, or keep
    it, to act for that seat or host later, e.g. `Client(address, seat_tokens[1])`)."""

    table_id: str
    game_id: str
    host: AnyClient
    seats: dict[int, AnyClient]
    host_token: str
    seat_tokens: dict[int, str]


@dataclass(frozen=True)
class SeatedTable(Seating[Client]):
    """A started table seated by `seat_table`, its clients `Client`s (see `Seating`)."""


def table_name(players: int, display_name: str, player_name: str) -> str:
    """The name `seat_table` gives a table: `display_name`, else "<player_name>s (N players)"."""
    return display_name or f"{player_name}s ({players} players)"


def seat_name(player_name: str, number: int) -> str:
    """The name `seat_table` takes its `number`-th seat (from 1) under."""
    return f"{player_name} {number}"


def seat_table(
    client: Client,
    players: int,
    options: lobby_pb2.TableOptions | None = None,
    display_name: str = "",
    player_name: str = "bot",
) -> SeatedTable:
    """Creates a table of `players` seats, takes them all (named "<player_name> 1"...) and
    starts it, over `client`'s channel."""
    created = client.create_table(players, options, table_name(players, display_name, player_name))
    table_id = created.table.table_id
    tokens: dict[int, str] = {}
    for n in range(1, players + 1):
        joined = client.join_table(table_id, seat_name(player_name, n))
        tokens[joined.seat] = joined.seat_token
    host = client.with_credential(created.host_token)
    game_id = host.start_table(table_id).game_id
    seats = {seat: client.with_credential(token) for seat, token in tokens.items()}
    return SeatedTable(table_id, game_id, host, seats, created.host_token, tokens)
