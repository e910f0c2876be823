"""What a proven caller may do: the lobby's permission rules, in one place.

The lobby's own handlers and the gateway (through CredentialService.Authorize) both ask these
functions, so a rule cannot hold at one door and not at the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernel.rejection import Kind, Rejected, quoted
from services.lobby.domain import players, tables, tournament


@dataclass(frozen=True, slots=True)
class Caller:
    """What a credential proves. `player` when it is a registered player's or host's; `seat`
    when it acts for a seat of `table`; `is_host` when it administers `table`."""

    player: players.Player | None = None
    player_version: int = 0
    table: tables.Table | None = None
    table_version: int = 0
    seat: tables.Seat | None = None
    is_host: bool = False


def require_host(caller: Caller) -> tables.Table:
    """The table `caller` administers."""
    if not caller.is_host or caller.table is None:
        raise Rejected("NOT_HOST", "only the table's host may do this", Kind.PERMISSION_DENIED)
    return caller.table


def require_seat(caller: Caller) -> tuple[tables.Table, tables.Seat]:
    """The table and seat `caller` holds."""
    if caller.seat is None or caller.table is None:
        raise Rejected(
            "NOT_A_SEAT", "only the holder of a seat may do this", Kind.PERMISSION_DENIED
        )
    return caller.table, caller.seat


def require_seat_in_game(caller: Caller, game_id: str) -> tables.Seat:
    """The seat `caller` plays in `game_id` (a table's game has the table's id)."""
    if caller.seat is None or caller.table is None:
        raise Rejected("NOT_A_SEAT", "only a seat token can act in a game", Kind.PERMISSION_DENIED)
    if caller.table.game_id != game_id:
        raise Rejected(
            "NOT_YOUR_GAME",
            f"the seat token is not for game {quoted(game_id)}",
            Kind.PERMISSION_DENIED,
            {"game_id": quoted(game_id)},
        )
    return caller.seat


def require_registered_host(caller: Caller) -> str:
    """The player id of a registered host."""
    if caller.player is None or caller.player.role != "host":
        raise Rejected(
            "NOT_HOST", "only a registered host creates tournaments", Kind.PERMISSION_DENIED
        )
    return caller.player.player_id


def require_tournament_host(caller: Caller, found: tournament.Tournament) -> str:
    """The player id of the tournament's host (a tournament keeps its host's player id)."""
    if caller.player is None or caller.player.player_id != found.host_credential_hash:
        raise Rejected("NOT_HOST", "only the tournament's host may do this", Kind.PERMISSION_DENIED)
    return caller.player.player_id


def watching_delay(caller: Caller | None, table: tables.Table) -> int:
    """How many actions behind `caller` (None: anonymous) watches the table's game; 0 for its
    players and host, who see it as it stands."""
    if caller is not None and _sits_at_or_hosts(caller, table):
        return 0
    if not table.spectating.open:
        raise Rejected(
            "CLOSED_TO_SPECTATORS",
            f"table {table.table_id} is closed to spectators",
            Kind.PERMISSION_DENIED,
            {"table_id": table.table_id},
        )
    return table.spectating.delay_actions


def _sits_at_or_hosts(caller: Caller, table: tables.Table) -> bool:
    if caller.player is not None:
        player_id = caller.player.player_id
        return table.host_player_id == player_id or table.seat_of_player(player_id) is not None
    own_table = caller.table is not None and caller.table.table_id == table.table_id
    return own_table and (caller.is_host or caller.seat is not None)
