"""The notifier's reading of the summary feed: which notifications each game's change calls
for, queued durably before the feed entry is acknowledged.

It reads every `summaries:feed:{<shard>}` stream through the `notifier` consumer group (each
entry to one notifier process), and for each game named reads its summary and its
game-players record, compares them with what it last told of the game (`Told`, in
`notify:turns:{<shard>}`) and queues what `to_tell` says. One script on the shard's slot
records the new `Told`, queues the notifications (outbox and due set) and acknowledges the
entries, if nobody recorded another `Told` for the game meanwhile: so a turn change is queued
once, whichever notifier sees it and however often. Entries a notifier read but never
acknowledged (it died) are claimed by another after `claim_idle_ms`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from infra.stream_group import ConsumerGroup, follow
from services.notify.keys import due_key, feed_key, game_players_key, outbox_key, turns_key
from services.notify.turns import Seating, Told, to_tell
from services.projections.game_summaries import summary_from_hash, summary_key

log = logging.getLogger(__name__)
GROUP = "notifier"
#: (feed entry id, game id) pairs read from a shard
Entries = list[tuple[bytes, str]]
# How often a notifier retries a game whose record another notifier changed under it.
RACES = 5
#: Rest after a pass that found nothing; the least time from a busy pass to the next (a turn is
#: told at most this much later, and a pass takes many games' changes at once).
IDLE_SECONDS, GATHER_SECONDS = 0.2, 0.1

# KEYS: turns, outbox, due, feed. ARGV: game id, the Told read ("" for none), the new Told
# ("" to leave it), now in ms, the count of notifications, then their ids and JSON, then the
# feed entries to acknowledge.
QUEUE_SCRIPT = """
local stored = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if stored ~= ARGV[2] then
  return 0
end
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
local count = tonumber(ARGV[5])
for i = 0, count - 1 do
  local id, body = ARGV[6 + 2 * i], ARGV[7 + 2 * i]
  if redis.call('HSETNX', KEYS[2], id, body) == 1 then
    redis.call('ZADD', KEYS[3], ARGV[4], id)
  end
end
local first_entry = 6 + 2 * count
if #ARGV >= first_entry then
  redis.call('XACK', KEYS[4], 'notifier', unpack(ARGV, first_entry))
end
return 1
"""


class FeedFollower:
    """One consumer of the `notifier` group on every feed shard."""

    def __init__(
        self,
        redis: Redis,
        consumer: str,
        shards: int,
        clock_ms: Callable[[], int],
        claim_idle_ms: int = 30_000,
    ) -> None:
        self._redis = redis
        self.consumer = consumer
        self.shards = shards
        self._clock_ms = clock_ms
        self.claim_idle_ms = claim_idle_ms
        self._group = ConsumerGroup(redis, GROUP, consumer, b"game_id", count=200)

    async def read_new(self, shard: int) -> Entries:
        return await self._group.read_new(feed_key(shard))

    async def claim_abandoned(self, shard: int) -> Entries:
        return await self._group.claim_abandoned(feed_key(shard), self.claim_idle_ms)

    async def handle(self, shard: int, entries: Entries) -> int:
        """Queues what each named game's change calls for and acknowledges its entries;
        returns how many notifications were queued. The shard's games are read in one round
        trip and queued in one more; a game whose `Told` another notifier changed meanwhile
        is read and queued again."""
        by_game: dict[str, list[bytes]] = {}
        for entry_id, game_id in entries:
            by_game.setdefault(game_id, []).append(entry_id)
        queued = 0
        games = list(by_game)
        for _race in range(RACES):
            if not games:
                return queued
            readings = await self._read(shard, games)
            queues = [
                self._queue_args(game_id, *reading, by_game[game_id])
                for game_id, reading in zip(games, readings, strict=True)
            ]
            raced: list[str] = []
            async with self._redis.pipeline(transaction=False) as pipe:  # one round trip
                for args in queues:
                    pipe.eval(QUEUE_SCRIPT, 4, *self._queue_keys(shard), *args)
                for game_id, args, done in zip(games, queues, await pipe.execute(), strict=True):
                    if done:
                        queued += int(args[4])
                    else:
                        raced.append(game_id)
            games = raced
        for game_id in games:
            log.warning("game %s: its notifications raced %d times; left for later", game_id, RACES)
        return queued

    async def _read(self, shard: int, games: list[str]) -> list[tuple[Any, Any, Any]]:
        """Each game's stored `Told`, summary and game-players record, in one round trip."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for game_id in games:
                pipe.hget(turns_key(shard), game_id)
                pipe.hgetall(summary_key(game_id))
                pipe.hgetall(game_players_key(game_id))
            replies = await pipe.execute()
        return [(replies[n], replies[n + 1], replies[n + 2]) for n in range(0, len(replies), 3)]

    def _queue_args(
        self,
        game_id: str,
        stored: bytes | None,
        summarised: dict[bytes, bytes],
        players: dict[bytes, bytes],
        entry_ids: list[bytes],
    ) -> list[str | bytes | int]:
        """QUEUE_SCRIPT's arguments for the game: what `to_tell` says of its summary."""
        summary = summary_from_hash(summarised)
        told = Told.from_json(stored) if stored else None
        decided = (
            None
            if summary is None
            else to_tell(
                game_id, told, summary.version, summary.document, Seating.from_record(players)
            )
        )
        new_told, notifications = decided if decided else (None, [])
        args: list[str | bytes | int] = [
            game_id,
            stored or b"",
            new_told.to_json() if new_told else "",
            self._clock_ms(),
            len(notifications),
        ]
        for notification in notifications:
            args += [notification.notification_id, notification.to_json()]
        return args + entry_ids

    @staticmethod
    def _queue_keys(shard: int) -> list[str]:
        return [turns_key(shard), outbox_key(shard), due_key(shard), feed_key(shard)]

    async def run_once(self, claim: bool = True) -> int:
        """One pass over every shard; returns how many entries were handled."""
        keys = [feed_key(shard) for shard in range(self.shards)]
        return await self._group.pass_over(keys, claim, self.claim_idle_ms, self.handle)

    async def run(self, stop: asyncio.Event) -> None:
        """Passes until `stop` (`infra.stream_group.follow`)."""
        await follow(
            self.run_once,
            stop,
            what="feed",
            claim_idle_ms=self.claim_idle_ms,
            idle_seconds=IDLE_SECONDS,
            gather_seconds=GATHER_SECONDS,
            failures=(RedisError,),
        )
