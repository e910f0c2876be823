"""One consumer of a Redis Streams consumer group: entries not yet delivered to anyone, and
entries another consumer read and never acknowledged (it died), each named by one field. The
summary projector (its change notes) and the notifier (the summary feed) read their shards so,
in passes (`follow`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

from redis.asyncio import Redis
from redis.exceptions import ResponseError

#: (entry id, the entry's named field) pairs read from a stream
Named = list[tuple[bytes, str]]
#: One pass over a group's shards, abandoned entries claimed too when told so: how many it
#: handled.
Pass = Callable[[bool], Awaitable[int]]

log = logging.getLogger(__name__)


class ConsumerGroup:
    def __init__(self, redis: Redis, group: str, consumer: str, field: bytes, count: int) -> None:
        self._redis = redis
        self.group = group
        self.consumer = consumer
        self._field = field
        self._count = count
        self._grouped: set[str] = set()

    async def _ensure_group(self, key: str) -> None:
        if key in self._grouped:
            return
        try:
            await self._redis.xgroup_create(key, self.group, id="0", mkstream=True)
        except ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise
        self._grouped.add(key)

    async def read_new(self, key: str, count: int | None = None) -> Named:
        """Entries of `key` not yet delivered to any consumer (now pending for this one)."""
        await self._ensure_group(key)
        reply = cast(
            list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]],
            await self._redis.xreadgroup(
                self.group, self.consumer, {key: ">"}, count=count or self._count
            ),
        )
        return [
            (entry_id, fields[self._field].decode())
            for _stream, entries in reply or ()
            for entry_id, fields in entries
        ]

    async def claim_abandoned(self, key: str, idle_ms: int) -> Named:
        """Entries another consumer read and never acknowledged for `idle_ms`."""
        await self._ensure_group(key)
        reply = await self._redis.xautoclaim(
            key, self.group, self.consumer, idle_ms, "0-0", count=self._count
        )
        return [(entry_id, fields[self._field].decode()) for entry_id, fields in reply[1] if fields]

    async def pass_over(
        self,
        keys: Sequence[str],
        claim: bool,
        idle_ms: int,
        handle: Callable[[int, Named], Awaitable[object]],
    ) -> int:
        """One pass: each of `keys`' new entries, and when `claim` those abandoned for `idle_ms`
        before them, handed to `handle(the key's index, entries)` when there are any; returns
        how many entries were handled."""
        handled = 0
        for index, key in enumerate(keys):
            entries = await self.claim_abandoned(key, idle_ms) if claim else []
            entries += await self.read_new(key)
            if entries:
                await handle(index, entries)
            handled += len(entries)
        return handled


async def follow(
    pass_once: Pass,
    stop: asyncio.Event,
    *,
    what: str,
    claim_idle_ms: int,
    idle_seconds: float,
    gather_seconds: float,
    failures: tuple[type[Exception], ...],
) -> None:
    """Runs `pass_once` until `stop`: resting `idle_seconds` after a pass that found nothing,
    and starting the next no sooner than `gather_seconds` after a busy one began, so that under
    load a pass takes many games' changes in one round trip instead of a few in many. Abandoned
    entries are claimed every `claim_idle_ms`; a pass that fails with one of `failures` is
    logged (as `what`'s) and tried again."""
    claimed_at = 0.0
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        began = loop.time()
        claim = began - claimed_at > claim_idle_ms / 1000
        if claim:
            claimed_at = began
        try:
            handled = await pass_once(claim)
        except failures as error:
            log.warning("%s pass failed, will try again: %s", what, error)
            handled = 0
        rest = gather_seconds - (loop.time() - began) if handled else idle_seconds
        if rest > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), rest)
