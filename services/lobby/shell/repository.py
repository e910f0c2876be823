"""Tables on the event store, with the index that lists them."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import cast

from redis.asyncio import Redis

from infra.announcements import GRANTS_CHANGED, announce
from infra.eventlog import EventLog, NewEvent, StoredEvent
from kernel.rejection import Kind, Rejected, quoted
from services.lobby.domain import tables
from services.projections.game_summaries import Summary, read_summaries, read_summary

SCHEMA = 1
TABLES_INDEX = "tables:index"


class TableRepository:
    def __init__(self, store: EventLog, redis: Redis) -> None:
        self._store = store
        self._redis = redis

    async def load(self, table_id: str) -> tuple[int, tables.Table]:
        events = await self._store.read(table_id) if table_id else []
        return len(events), _folded(table_id, events)

    async def listed(self, table_ids: Sequence[str]) -> list[tuple[tables.Table, Summary | None]]:
        """Tables with their games' summaries, as listings show them: two round trips for a
        whole page, however long."""
        logs = await self._store.read_many(table_ids)
        found = [
            _folded(table_id, events) for table_id, events in zip(table_ids, logs, strict=True)
        ]
        started = [table.game_id for table in found if table.started]
        by_game = dict(zip(started, await read_summaries(self._redis, started), strict=True))
        return [(table, by_game.get(table.game_id) if table.started else None) for table in found]

    async def append(
        self, table_id: str, version: int, events: list[tables.LobbyEvent]
    ) -> tables.Table:
        """Appends at `version` (VersionConflict otherwise) and returns the table after. The
        change is announced to the gateways, which forget what they granted on the table."""
        await self._store.append(
            table_id, version, [NewEvent(kind, SCHEMA, data) for kind, data in events]
        )
        await announce(self._redis, GRANTS_CHANGED, table_id)
        return (await self.load(table_id))[1]

    async def index(self, table_id: str) -> None:
        await self._redis.zadd(TABLES_INDEX, {table_id: time.time()})

    async def page(self, start: int, count: int) -> list[str]:
        """Table ids, newest first."""
        ids = cast(list[bytes], await self._redis.zrevrange(TABLES_INDEX, start, start + count - 1))
        return [table_id.decode() for table_id in ids]

    async def count(self) -> int:
        return int(await self._redis.zcard(TABLES_INDEX))

    async def summary(self, table: tables.Table) -> Summary | None:
        return await read_summary(self._redis, table.game_id) if table.started else None

    async def summaries(self, game_ids: Sequence[str]) -> list[Summary | None]:
        """The summaries of several games, in one round trip."""
        return await read_summaries(self._redis, game_ids)


def _folded(table_id: str, events: Sequence[StoredEvent]) -> tables.Table:
    table = tables.fold((e.type, e.payload) for e in events)
    if not table.exists:
        raise Rejected(
            "TABLE_NOT_FOUND",
            f"no table {quoted(table_id)!r}",
            Kind.NOT_FOUND,
            {"table_id": quoted(table_id)},
        )
    return table
