"""The game-summary projection's writer, in the rules service (which owns the games' streams).

It reads the change notes (`services/projections/game_summaries.py`) through the `summaries`
consumer group of each shard, so it does work only for games that changed: nothing for a
finished game, nothing at all when nothing is played but one read per shard per pass. A noted
game's state comes from the rules process's own game repository (cached, else snapshot + tail).

Delivery is at least once: a note is acknowledged only after its summary is written and
announced on the summary feed, and a summary is written only if it is newer than the one
stored, so handling a note twice changes nothing but a repeated feed entry (which the feed's
followers expect). Notes a consumer read but never acknowledged (it died) are claimed by
another after `claim_idle_ms` with XAUTOCLAIM.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError

from infra.stream_group import ConsumerGroup, follow
from kernel.rejection import Rejected
from services.projections.game_summaries import (
    DEFAULT_CHANGE_SHARDS,
    changes_key,
    feed_entry,
    summary_key,
)
from services.rules.domain.state import GameState, OperatingRound, PrivateAuction, StockRound
from services.rules.shell.repository import GameRepository

log = logging.getLogger(__name__)
#: (note entry id, game id) pairs read from a change shard
Notes = list[tuple[bytes, str]]

GROUP = "summaries"
#: Returns {1 if it wrote, the version stored after it: ARGV[1] or a later one found there}.
SUMMARY_SCRIPT = """
local stored = redis.call('HGET', KEYS[1], 'version')
if stored and tonumber(stored) >= tonumber(ARGV[1]) then
  return {0, tonumber(stored)}
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'summary', ARGV[2], 'moved_at_ms', ARGV[3])
return {1, tonumber(ARGV[1])}
"""
#: Events read back at a time to find the cause (and its time) of a summarised version.
CAUSE_WINDOW = 16
#: Rest after a pass that found nothing; the least time from a busy pass to the next. Under load
#: a listing lags up to this much more, and in exchange a game's changes in that time make one
#: summary and one feed entry (each entry costs the notifier and the lobby a read of the game):
#: 1.04 feed entries a command at 0.05 s, 0.66 at 0.25 s, in a closed loop of 50 games.
IDLE_SECONDS, GATHER_SECONDS = 0.5, 0.25


def summarise(game_id: str, version: int, state: GameState) -> dict[str, Any]:
    round_: dict[str, Any] = {}
    match state.round:
        case PrivateAuction():
            round_ = {"type": "private_auction"}
        case StockRound(number=number):
            round_ = {"type": "stock_round", "number": number}
        case OperatingRound(number=number, of=of, current=current):
            round_ = {"type": "operating_round", "number": number, "of": of, "operating": current}
    return {
        "game_id": game_id,
        "version": version,
        "players": [{"seat": p.seat, "name": p.name} for p in state.players],
        "round": round_,
        "phase": state.phase,
        "acting_seats": list(state.acting_seats),
        "finished": state.result is not None,
        "result": (
            {"reason": state.result.reason, "net_worths": dict(state.result.net_worths)}
            if state.result
            else None
        ),
    }


class SummaryProjector:
    """One consumer of the `summaries` group on every change shard; run one in each rules
    process: each note goes to one of them."""

    def __init__(
        self,
        redis: Redis,
        games: GameRepository,
        consumer: str,
        claim_idle_ms: int = 30_000,
        shards: int = DEFAULT_CHANGE_SHARDS,
    ) -> None:
        self._redis = redis
        self._games = games
        self.consumer = consumer
        self.claim_idle_ms = claim_idle_ms
        self.shards = shards
        self._write = redis.register_script(SUMMARY_SCRIPT)
        self._group = ConsumerGroup(redis, GROUP, consumer, b"g", count=500)

    async def read_new(self, shard: int, count: int | None = None) -> Notes:
        """Notes of the shard not yet delivered to any consumer (now pending for this one)."""
        return await self._group.read_new(changes_key(shard), count)

    async def claim_abandoned(self, shard: int) -> Notes:
        """Notes another consumer read and never acknowledged for `claim_idle_ms`."""
        return await self._group.claim_abandoned(changes_key(shard), self.claim_idle_ms)

    async def handle(self, shard: int, notes: Notes) -> None:
        """Brings the summary of each noted game up to its current version, then acknowledges
        the notes: idempotent, so notes handled twice change nothing. The shard's games are read in
        one round trip, their summaries written and announced in another, and the notes
        acknowledged in a third once written."""
        if not notes:
            return
        game_ids = list(dict.fromkeys(game_id for _entry, game_id in notes))
        summaries = []
        for game_id, loaded in zip(game_ids, await self._games.load_latest(game_ids), strict=True):
            document = summarise(game_id, loaded.version, loaded.state)
            moved_at_ms = loaded.at_ms or await self.moved_at_ms(game_id, loaded.version)
            summaries.append((game_id, loaded.version, document, moved_at_ms))
        async with self._redis.pipeline(transaction=False) as pipe:
            for summary in summaries:
                self._store_and_announce(pipe, *summary)
            await pipe.execute()
        await self._redis.xack(changes_key(shard), GROUP, *(entry for entry, _game in notes))

    async def write(self, game_id: str, version: int, document: dict[str, Any]) -> bool:
        """Stores the summary unless one of the same or a later version is there."""
        written, _stored = await self._write(
            keys=[summary_key(game_id)], args=[version, json.dumps(document), 0]
        )
        return bool(written)

    def _store_and_announce(
        self, pipe: Pipeline, game_id: str, version: int, document: dict[str, Any], moved_at: int
    ) -> None:
        """Into `pipe`: the summary stored unless a newer one is there, and the feed's note
        that the stored summary is at `version` or later."""
        pipe.eval(SUMMARY_SCRIPT, 1, summary_key(game_id), version, json.dumps(document), moved_at)
        feed = feed_entry(game_id, version, self.shards)
        fields: dict[Any, Any] = dict(feed.fields)
        pipe.xadd(feed.stream, fields, maxlen=feed.kept, approximate=True)

    async def moved_at_ms(self, game_id: str, version: int) -> int:
        """When the event of `version` was written: the time its batch's command was accepted,
        kept with the batch's first event (read back a few events at a time)."""
        last = version
        while last >= 1:
            first = max(1, last - CAUSE_WINDOW + 1)
            for logged in reversed(await self._games.log(game_id, last, first)):
                if logged.cause is not None:
                    return int(logged.cause.get("at_ms", 0))
            last = first - 1
        return 0

    async def run_once(self, claim: bool = True) -> int:
        """One pass over every shard; returns how many notes were handled."""
        keys = [changes_key(shard) for shard in range(self.shards)]
        return await self._group.pass_over(keys, claim, self.claim_idle_ms, self.handle)

    async def run(self, stop: asyncio.Event) -> None:
        """Passes until `stop` (`infra.stream_group.follow`)."""
        await follow(
            self.run_once,
            stop,
            what="summary",
            claim_idle_ms=self.claim_idle_ms,
            idle_seconds=IDLE_SECONDS,
            gather_seconds=GATHER_SECONDS,
            failures=(RedisError, Rejected),
        )
