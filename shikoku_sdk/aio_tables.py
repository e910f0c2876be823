"""`shikoku_sdk.aio.seat_table`: `seat_table` over `shikoku_sdk.aio.Client`."""

from __future__ import annotations

from dataclasses import dataclass

from shikoku.v1 import lobby_pb2
from shikoku_sdk.aio_client import Client
from shikoku_sdk.tables import Seating, seat_name, table_name


@dataclass(frozen=True)
class SeatedTable(Seating[Client]):
    """A started table seated by `shikoku_sdk.aio.seat_table`, its clients
    `shikoku_sdk.aio.Client`s (see `shikoku_sdk.tables.Seating`)."""


async def seat_table(
    client: Client,
    players: int,
    options: lobby_pb2.TableOptions | None = None,
    display_name: str = "",
    player_name: str = "bot",
) -> SeatedTable:
    """Creates a table of `players` seats, takes them all (named "<player_name> 1"...) and
    starts it, over `client`'s channel."""
    name = table_name(players, display_name, player_name)
    created = await client.create_table(players, options, name)
    table_id = created.table.table_id
    tokens: dict[int, str] = {}
    for n in range(1, players + 1):
        joined = await client.join_table(table_id, seat_name(player_name, n))
        tokens[joined.seat] = joined.seat_token
    host = client.with_credential(created.host_token)
    game_id = (await host.start_table(table_id)).game_id
    seats = {seat: client.with_credential(token) for seat, token in tokens.items()}
    return SeatedTable(table_id, game_id, host, seats, created.host_token, tokens)
