"""Watching games: one reader of each watched game's log per gateway process, fanned out to
all of that game's watchers.

A watcher first catches up from the log, then takes the shared feed's batches from its own
bounded queue. The feed never waits for a watcher: one whose queue overflows is cut off the
feed, catches up from the log again at its own pace, and rejoins. A watcher that finds a gap
between what it has sent and what the feed hands it (the feed started later than its catch-up
read, or it rejoined) also fills the gap from the log, so nothing is missed or sent twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

from infra.eventlog import EventLog, StoredEvent

QUEUE_BATCHES = 256
CATCH_UP_CHUNK = 1000


@dataclass(eq=False)
class _Subscription:
    queue: asyncio.Queue[list[StoredEvent]] = field(
        default_factory=lambda: asyncio.Queue(QUEUE_BATCHES)
    )
    overflowed: bool = False

    def offer(self, batch: list[StoredEvent]) -> None:
        if self.overflowed:
            return
        try:
            self.queue.put_nowait(batch)
        except asyncio.QueueFull:
            self.overflowed = True

    def rejoin(self) -> None:
        self.queue = asyncio.Queue(QUEUE_BATCHES)
        self.overflowed = False


@dataclass(eq=False)
class _Feed:
    subscribers: set[_Subscription] = field(default_factory=set)
    task: asyncio.Task[None] | None = None


class GameWatchers:
    """The feeds of the games watched through this process."""

    def __init__(self, events: EventLog) -> None:
        self._events = events
        self._feeds: dict[str, _Feed] = {}

    @property
    def feeds(self) -> int:
        return len(self._feeds)

    @property
    def watchers(self) -> int:
        return sum(len(feed.subscribers) for feed in list(self._feeds.values()))

    async def _run_feed(self, game_id: str, feed: _Feed) -> None:
        start = await self._events.version(game_id) + 1
        async for batch in self._events.follow_batches(game_id, start):
            for subscription in feed.subscribers:
                subscription.offer(batch)

    @contextlib.contextmanager
    def _subscribed(self, game_id: str) -> Iterator[_Subscription]:
        feed = self._feeds.get(game_id)
        if feed is None:
            feed = self._feeds[game_id] = _Feed()
            feed.task = asyncio.create_task(self._run_feed(game_id, feed))
        subscription = _Subscription()
        feed.subscribers.add(subscription)
        try:
            yield subscription
        finally:
            feed.subscribers.discard(subscription)
            if not feed.subscribers and self._feeds.get(game_id) is feed:
                del self._feeds[game_id]
                assert feed.task is not None
                feed.task.cancel()

    async def watch(
        self, game_id: str, from_version: int, quiet_seconds: float
    ) -> AsyncIterator[list[StoredEvent]]:
        """The game's events from `from_version` on, in order, in batches, forever; an empty
        batch after `quiet_seconds` without news."""
        following = from_version
        with self._subscribed(game_id) as subscription:
            from_log = True
            while True:
                if subscription.overflowed:
                    subscription.rejoin()
                    from_log = True
                if from_log:
                    caught_up = await self._events.read(
                        game_id, following, following + CATCH_UP_CHUNK - 1
                    )
                    if caught_up:
                        following = caught_up[-1].version + 1
                        yield caught_up
                    from_log = len(caught_up) == CATCH_UP_CHUNK
                    continue
                try:
                    batch = await asyncio.wait_for(subscription.queue.get(), quiet_seconds)
                except TimeoutError:
                    yield []
                    continue
                fresh = [event for event in batch if event.version >= following]
                if fresh and fresh[0].version > following:
                    from_log = True  # a gap: the log has what the feed did not hand us
                elif fresh:
                    following = fresh[-1].version + 1
                    yield fresh
