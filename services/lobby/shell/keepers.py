"""Background work of the lobby process: clocks that run out, results of finished games.

Both are idempotent passes over state kept in Redis. Every lobby replica runs the loop, but only
the one holding the `lobby-keepers` lease does the passes (`infra/leases.py`); when it dies,
another takes over within the lease's time, and a restarted one simply carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import cast

import grpc
from redis.asyncio import Redis
from redis.exceptions import RedisError

from infra.eventstore import VersionConflict
from infra.leases import Lease
from kernel.rejection import Rejected
from services.lobby.domain import tables
from services.lobby.domain.clocks import Tick, clocks, verdict
from services.lobby.shell.repository import TableRepository
from services.lobby.shell.tournaments_service import TournamentRepository, Tournaments
from services.projections.game_summaries import read_summary, summary_moved
from shikoku.internal.v1 import rules_pb2, rules_pb2_grpc

CLOCKED = "tables:clocked"
log = logging.getLogger(__name__)


async def watch_clock(redis: Redis, table_id: str) -> None:
    await redis.sadd(CLOCKED, table_id)


async def game_ticks(rules: rules_pb2_grpc.RulesServiceAsyncStub, game_id: str) -> list[Tick]:
    """The game's timeline as the clocks read it."""
    timeline = await rules.Timeline(rules_pb2.TimelineRequest(game_id=game_id), timeout=10)
    return [
        Tick(m.version, m.at_ms, m.actor or None, tuple(m.acting_after)) for m in timeline.moments
    ]


class ClockKeeper:
    """Applies the clocks' verdicts to the clocked tables whose games are running."""

    def __init__(
        self,
        redis: Redis,
        repo: TableRepository,
        rules: rules_pb2_grpc.RulesServiceAsyncStub,
        shards: int,
    ) -> None:
        self._redis = redis
        self._repo = repo
        self._rules = rules
        self._shards = shards

    async def run_once(self) -> None:
        members = cast(set[bytes], await self._redis.smembers(CLOCKED))
        for table_id in sorted(member.decode() for member in members):
            with contextlib.suppress(VersionConflict, Rejected, grpc.aio.AioRpcError):
                if await self.check(table_id):
                    await self._redis.srem(CLOCKED, table_id)

    async def check(self, table_id: str) -> bool:
        """Records what the clock decided; True once the table needs no more watching."""
        version, table = await self._repo.load(table_id)
        if table.clock is None:
            return True
        if not table.started:
            return False
        ticks = await game_ticks(self._rules, table.game_id)
        if ticks and not ticks[-1].acting_after:
            return True  # the game is over: no clock runs
        seats = [s.number for s in table.seats if s.taken]
        now = int(time.time() * 1000)
        recorded = {seat for seat, _kind in table.ran_out}
        decided = verdict(table.clock, clocks(table.clock, seats, ticks, now), recorded)
        events = tables.ran_out(table, decided)
        if not events:
            return False
        await self._repo.append(table_id, version, events)
        # A seat running out changes its table, not its game: the feed tells its watchers.
        summary = await read_summary(self._redis, table.game_id)
        await summary_moved(
            self._redis, table.game_id, summary.version if summary else 0, self._shards
        )
        if any(v.kind == "forfeited" for v in decided):
            await self._rules.EndGame(rules_pb2.EndGameRequest(game_id=table.game_id), timeout=10)
            return True
        return False


class ResultKeeper:
    """Records the results of finished tournament games."""

    def __init__(self, repo: TournamentRepository, tournaments: Tournaments) -> None:
        self._repo = repo
        self._tournaments = tournaments

    async def run_once(self) -> None:
        for tournament_id in await self._repo.active():
            with contextlib.suppress(VersionConflict, Rejected):
                await self._tournaments.record_finished(tournament_id)


KEEPERS_LEASE = "lobby-keepers"


async def keep_running(
    stop: asyncio.Event,
    passes: list[Callable[[], Awaitable[None]]],
    lease: Lease,
    interval: float = 0.5,
) -> None:
    """Runs the passes every `interval` while this replica holds `lease`, until `stop`. A pass
    that Redis or a service fails (a failover, a restart) is tried again on the next round."""
    try:
        while not stop.is_set():
            try:
                if await lease.hold():
                    for run in passes:
                        await run()
            except (RedisError, grpc.aio.AioRpcError) as error:
                log.warning("background pass failed, will try again: %s", error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval)
    finally:
        with contextlib.suppress(RedisError):
            await lease.release()
