"""The lobby's repositories on the event log in memory (infra/eventlog.py): tables and players
folded from their logs, an append at a stale version refused whole, a request done again (its
ids and credentials derived from it) recognised as the same table or player, and tables listed
a page at a time. The tables' index and the games' summaries stay in Redis (real, as ever)."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from infra.eventlog import MemoryEventLog, VersionConflict
from kernel.rejection import Kind, Rejected
from services.lobby.domain import tables
from services.lobby.shell.accounts import PlayerRepository
from services.lobby.shell.credentials import credential_hash, derived_from, new_credential, new_id
from services.lobby.shell.repository import TableRepository


def created(table_id: str, name: str = "Kochi") -> list[tables.LobbyEvent]:
    return tables.create(table_id, 3, name, False, True, credential_hash(f"{table_id}~host"))


async def create_once(repo: TableRepository, request: bytes) -> tables.Table:
    """What CreateTable does with a request id: the table's id and host credential follow
    from the request, so a second attempt conflicts at version 0 and finds its own table."""
    with derived_from(request):
        table_id = new_id("t-")
        host_hash = credential_hash(new_credential(table_id))
    events = tables.create(table_id, 3, "Kochi", False, True, host_hash)
    try:
        return await repo.append(table_id, 0, events)
    except VersionConflict:
        _version, table = await repo.load(table_id)
        if table.host_credential_hash != host_hash:
            raise
        return table


async def test_a_table_is_its_folded_log_and_a_stale_append_writes_nothing(
    redis_client: redis.asyncio.Redis,
) -> None:
    log = MemoryEventLog("table")
    repo = TableRepository(log, redis_client)
    table = await repo.append("t-1", 0, created("t-1"))
    assert (table.table_id, table.exists, len(table.seats)) == ("t-1", True, 3)
    version, loaded = await repo.load("t-1")
    assert (version, loaded) == (1, table)
    joined = tables.join(loaded, "Ann", 0, credential_hash("ann"))
    after = await repo.append("t-1", version, joined)
    assert after.seats[0].player_name == "Ann"
    with pytest.raises(VersionConflict) as conflict:  # decided on version 1, now at 2
        await repo.append("t-1", version, tables.join(loaded, "Bob", 1, credential_hash("bob")))
    assert (conflict.value.expected, conflict.value.actual) == (1, 2)
    assert await repo.load("t-1") == (2, after)
    for missing in ("t-none", ""):
        with pytest.raises(Rejected) as refused:
            await repo.load(missing)
        assert (refused.value.reason, refused.value.kind) == ("TABLE_NOT_FOUND", Kind.NOT_FOUND)


async def test_a_create_request_done_again_or_at_once_makes_one_table(
    redis_client: redis.asyncio.Redis,
) -> None:
    log = MemoryEventLog("table")
    repo = TableRepository(log, redis_client)
    first = await create_once(repo, b"request-1")
    assert await create_once(repo, b"request-1") == first
    copies = await asyncio.gather(*(create_once(repo, b"request-2") for _ in range(10)))
    assert len({table.table_id for table in copies}) == 1
    assert await log.version(copies[0].table_id) == 1
    assert await log.version(first.table_id) == 1


async def test_tables_are_listed_in_the_order_asked_each_from_its_whole_log(
    redis_client: redis.asyncio.Redis,
) -> None:
    repo = TableRepository(MemoryEventLog("table"), redis_client)
    for table_id, name in (("t-1", "Kochi"), ("t-2", "Uwajima"), ("t-3", "Kotohira")):
        table = await repo.append(table_id, 0, created(table_id, name))
        await repo.append(table_id, 1, tables.join(table, "Ann", 0, credential_hash("ann")))
    listed = await repo.listed(["t-3", "t-1"])
    assert [(table.display_name, summary) for table, summary in listed] == [
        ("Kotohira", None),
        ("Kochi", None),
    ]
    assert all(table.seats[0].player_name == "Ann" for table, _summary in listed)
    with pytest.raises(Rejected) as refused:
        await repo.listed(["t-1", "t-none"])
    assert refused.value.reason == "TABLE_NOT_FOUND"


async def test_a_player_registered_again_by_the_same_request_is_the_same_player() -> None:
    log = MemoryEventLog("player")
    players = PlayerRepository(log)
    with derived_from(b"register-1"):
        player, credential = await players.register("Ann", "host")
    with derived_from(b"register-1"):
        again, credential_again = await players.register("Ann", "host")
    assert (again, credential_again) == (player, credential)
    assert await log.version(player.player_id) == 1
    version, loaded = await players.load(player.player_id)
    assert loaded.accepts(credential_hash(credential), 0)
    await players.revoke(loaded, version)
    with pytest.raises(VersionConflict):  # revoked on what was read before the revocation
        await players.revoke(loaded, version)
    assert (await players.load(player.player_id))[1].revoked
    with pytest.raises(Rejected) as refused:
        await players.load("p-none")
    assert refused.value.reason == "PLAYER_NOT_FOUND"
