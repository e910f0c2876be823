"""One reader of the summary feed per lobby process, fanning out to that process's watchers.

Each shard's feed (`summaries:feed:{<shard>}`, services/projections/game_summaries.py) is read
by one task with a blocking XREAD of that one key, so on a Redis Cluster each read stays on its
shard's slot. A watcher subscribes to the games it cares about (a tournament's current tables, a
player's live tables) and gets their ids in a queue of its own; games nobody here watches cost a
dictionary lookup per feed entry, never a read of their own. The feed is at least once, so a
watcher may be woken for a version it has already shown; it reads the summary and compares.

The readers start with the first subscription and read from a little before the feed's end
(`REREAD_MS`, so that what was appended while the first watcher read its tables is not
missed): a watcher reads the current state of its tables when it starts, and the feed only
tells it what changed since.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import cast

from redis.asyncio import Redis
from redis.exceptions import RedisError

from services.projections.game_summaries import DEFAULT_CHANGE_SHARDS, feed_key

log = logging.getLogger(__name__)
BLOCK_MS = 5_000
REREAD_MS = 2_000
#: Changed games a watcher may have waiting; beyond, it is told to look at everything again.
QUEUE = 1_000
#: What a watcher's queue carries when it overflowed: every game it watches may have changed.
EVERYTHING = ""


class Subscription:
    """The games one watcher follows, and the queue the feed's readers put their ids in."""

    def __init__(self, feed: SummaryFeed) -> None:
        self._feed = feed
        self.games: set[str] = set()
        self.changed: asyncio.Queue[str] = asyncio.Queue(QUEUE)

    def follow(self, game_ids: Iterable[str]) -> None:
        """Follows exactly `game_ids` from now on."""
        wanted = set(game_ids)
        for game_id in self.games - wanted:
            self._feed.drop(game_id, self)
        for game_id in wanted - self.games:
            self._feed.add(game_id, self)
        self.games = wanted

    def tell(self, game_id: str) -> None:
        try:
            self.changed.put_nowait(game_id)
        except asyncio.QueueFull:  # a slow watcher: it looks at all of its games again
            while not self.changed.empty():
                self.changed.get_nowait()
            self.changed.put_nowait(EVERYTHING)


class SummaryFeed:
    def __init__(self, redis: Redis, shards: int = DEFAULT_CHANGE_SHARDS) -> None:
        self._redis = redis
        self._shards = shards
        self._watching: defaultdict[str, set[Subscription]] = defaultdict(set)
        self._readers: list[asyncio.Task[None]] = []

    @property
    def watched_games(self) -> int:
        return len(self._watching)

    @contextlib.contextmanager
    def subscribed(self) -> Iterator[Subscription]:
        """A subscription for the block's duration (its games dropped at the end)."""
        if not self._readers:
            self._readers = [
                asyncio.create_task(self._read(shard)) for shard in range(self._shards)
            ]
        subscription = Subscription(self)
        try:
            yield subscription
        finally:
            subscription.follow(())

    def add(self, game_id: str, subscription: Subscription) -> None:
        self._watching[game_id].add(subscription)

    def drop(self, game_id: str, subscription: Subscription) -> None:
        watchers = self._watching.get(game_id)
        if watchers is not None:
            watchers.discard(subscription)
            if not watchers:
                del self._watching[game_id]

    async def close(self) -> None:
        for reader in self._readers:
            reader.cancel()
        for reader in self._readers:
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        self._readers = []

    async def _read(self, shard: int) -> None:
        key = feed_key(shard)
        last = f"{int(time.time() * 1000) - REREAD_MS}-0"
        while True:
            try:
                reply = cast(
                    list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]],
                    await self._redis.xread({key: last}, block=BLOCK_MS, count=500),
                )
            except RedisError as error:
                log.warning("summary feed %s: read failed, will try again: %s", key, error)
                await asyncio.sleep(1)
                continue
            for _stream, entries in reply or ():
                for entry_id, fields in entries:
                    last = entry_id.decode()
                    game_id = fields.get(b"game_id", b"").decode()
                    for subscription in list(self._watching.get(game_id, ())):
                        subscription.tell(game_id)
