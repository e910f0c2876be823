"""Who is calling: table credentials (host and seat tokens of one table) and registered players'
and hosts' credentials, checked against the event streams that hold their hashes."""

from __future__ import annotations

import secrets
import time
from typing import Protocol

from infra.eventlog import EventLog, NewEvent, VersionConflict
from kernel.rejection import Kind, Rejected, quoted
from services.lobby.domain import players, tables
from services.lobby.domain.access import Caller
from services.lobby.shell.credentials import credential_hash, new_credential, new_id, table_of

SCHEMA = 1
PLAYER_PREFIX = "p-"


def now_ms() -> int:
    return int(time.time() * 1000)


class PlayerRepository:
    def __init__(self, store: EventLog) -> None:
        self._store = store

    async def register(self, display_name: str, role: str) -> tuple[players.Player, str]:
        player_id = new_id(PLAYER_PREFIX)
        credential = new_credential(player_id)
        events = players.register(
            player_id, display_name, role, credential_hash(credential), now_ms()
        )
        try:
            await self._store.append(player_id, 0, [NewEvent(k, SCHEMA, d) for k, d in events])
        except VersionConflict:
            # The same request again (its id and credential derived from it): the same player.
            _version, known = await self.load(player_id)
            if known.credential_hash != credential_hash(credential):
                raise
            return known, credential
        return players.fold(events), credential

    async def load(self, player_id: str) -> tuple[int, players.Player]:
        events = await self._store.read(player_id) if player_id else []
        player = players.fold((e.type, e.payload) for e in events)
        if not player.exists:
            raise Rejected(
                "PLAYER_NOT_FOUND",
                f"no player {quoted(player_id)!r}",
                Kind.NOT_FOUND,
                {"player_id": quoted(player_id)},
            )
        return len(events), player

    async def revoke(self, player: players.Player, version: int) -> None:
        events = players.revoke(player)
        await self._store.append(
            player.player_id, version, [NewEvent(k, SCHEMA, d) for k, d in events]
        )


class TableLoader(Protocol):
    """What `identify` needs of the table repository."""

    async def load(self, table_id: str) -> tuple[int, tables.Table]: ...


INVALID = Rejected("INVALID_CREDENTIAL", "the credential is not valid", Kind.UNAUTHENTICATED)
EXPIRED = Rejected(
    "CREDENTIAL_EXPIRED_OR_REVOKED",
    "the credential has expired or was revoked",
    Kind.UNAUTHENTICATED,
)


async def identify(
    credential: str,
    table_repo: TableLoader,
    player_repo: PlayerRepository,
    table_id: str = "",
) -> Caller:
    """Checks the credential; with `table_id`, also what it may do at that table."""
    owner = table_of(credential)
    if owner is None:
        raise INVALID
    digest = credential_hash(credential)
    if owner.startswith(PLAYER_PREFIX):
        try:
            player_version, player = await player_repo.load(owner)
        except Rejected:
            raise INVALID from None
        if digest != player.credential_hash:
            raise INVALID
        if not player.accepts(digest, now_ms()):
            raise EXPIRED
        caller = Caller(player=player, player_version=player_version)
        if not table_id:
            return caller
        version, table = await table_repo.load(table_id)
        return Caller(
            player=player,
            player_version=player_version,
            table=table,
            table_version=version,
            seat=table.seat_of_player(player.player_id),
            is_host=bool(table.host_player_id) and table.host_player_id == player.player_id,
        )
    try:
        version, table = await table_repo.load(owner)
    except Rejected:
        raise INVALID from None
    if table_id and table_id != owner:
        raise Rejected(
            "WRONG_TABLE",
            f"the credential is not for table {quoted(table_id)}",
            Kind.PERMISSION_DENIED,
        )
    if secrets.compare_digest(digest, table.host_credential_hash):
        return Caller(table=table, table_version=version, is_host=True)
    seat = table.seat_of(digest)
    if seat is None:
        raise INVALID
    return Caller(table=table, table_version=version, seat=seat)
