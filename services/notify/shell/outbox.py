"""Delivering the queued notifications: at least once, retried with backoff, never in the way
of a command (this is the notifier's own process).

Each shard's due set (`notify:due:{<shard>}`) scores a notification's id by when its next
attempt is due. A sender takes a due one by moving its score a lease ahead (a script, so two
senders never take the same), then posts it: delivered, it leaves the outbox; failed, it is due
again after a wait that doubles each time, until it has had `attempts` attempts and is given
up. A sender that dies while posting leaves the lease to run out, and the notification is sent
again: the receiver tells repeats by `notification_id`. Each player's tally goes to
`notify:health:{<player_id>}`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import cast

from redis.asyncio import Redis
from redis.exceptions import RedisError

from kernel.rejection import Rejected
from services.notify.address_guard import PinnedWebhook, WebhookGuard
from services.notify.keys import due_key, health_key, outbox_key, target_key
from services.notify.messages import Notification, message
from services.notify.posting import Answer, post

log = logging.getLogger(__name__)
Post = Callable[[PinnedWebhook, bytes, dict[str, str]], Awaitable[Answer]]
LEASE_MS = 60_000
LONGEST_WAIT_SECONDS = 600.0
TAKEN_AT_ONCE = 50

# KEYS: due. ARGV: now (ms), the lease's end (ms), how many. The ids due now, each leased.
TAKE_SCRIPT = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], id)
end
return due
"""


@dataclass(frozen=True, slots=True)
class Retrying:
    """How failed deliveries are retried: `first` seconds after the first failure, twice as
    long after each next one (at most `LONGEST_WAIT_SECONDS`), `attempts` in all."""

    first: float = 2.0
    attempts: int = 10

    def wait_after(self, failures: int) -> float:
        return min(self.first * 2.0 ** (failures - 1), LONGEST_WAIT_SECONDS)


@dataclass(frozen=True, slots=True)
class Queued:
    notification: Notification
    failures: int = 0

    def to_json(self) -> str:
        return json.dumps({**asdict(self.notification), "failures": self.failures})

    @classmethod
    def from_json(cls, text: bytes) -> Queued:
        stored = json.loads(text)
        failures = stored.pop("failures", 0)
        return cls(Notification(**stored), failures)


class Sender:
    """Posts the due notifications of every shard, `concurrency` at a time."""

    def __init__(
        self,
        redis: Redis,
        guard: WebhookGuard,
        public_url: str,
        shards: int,
        clock_ms: Callable[[], int],
        retrying: Retrying = Retrying(),
        poster: Post = post,
        concurrency: int = 32,
    ) -> None:
        self._redis = redis
        self._guard = guard
        self._public_url = public_url
        self.shards = shards
        self._clock_ms = clock_ms
        self.retrying = retrying
        self._post = poster
        self.concurrency = concurrency
        self._posting: set[asyncio.Task[None]] = set()
        self._take = redis.register_script(TAKE_SCRIPT)

    async def run_once(self) -> int:
        """Takes the notifications due now, as many as there is room for beside those still
        being posted, and starts posting them; returns how many it took."""
        now = self._clock_ms()
        taken = 0
        for shard in range(self.shards):
            room = self.concurrency - len(self._posting)
            if room <= 0:
                break
            ids = cast(
                list[bytes],
                await self._take(
                    keys=[due_key(shard)], args=[now, now + LEASE_MS, min(room, TAKEN_AT_ONCE)]
                ),
            )
            for each in ids:
                task = asyncio.create_task(self._send(shard, each))
                self._posting.add(task)
                task.add_done_callback(self._posted)
            taken += len(ids)
        return taken

    def _posted(self, task: asyncio.Task[None]) -> None:
        self._posting.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            log.warning("a delivery failed on Redis; its lease will run out: %s", error)

    async def settle(self) -> None:
        """Waits for the posts under way (at a stop; a post outlives no timeout)."""
        if self._posting:
            await asyncio.gather(*self._posting, return_exceptions=True)

    async def _send(self, shard: int, notification_id: bytes) -> None:
        stored = cast(bytes | None, await self._redis.hget(outbox_key(shard), notification_id))
        if stored is None:  # delivered by another sender whose lease ran out first
            await self._redis.zrem(due_key(shard), notification_id)
            return
        queued = Queued.from_json(stored)
        answer = await self._deliver(queued.notification)
        if answer is None or answer.delivered:
            await self._done(shard, queued, delivered=answer is not None)
        else:
            await self._failed(shard, queued, answer.error)

    async def _deliver(self, notification: Notification) -> Answer | None:
        """The answer, or None when the player has no target (any more)."""
        target = cast(
            dict[bytes, bytes], await self._redis.hgetall(target_key(notification.player_id))
        )
        if not target.get(b"url"):
            return None
        url = target[b"url"].decode()
        try:
            pinned = await self._guard.check(url)
        except Rejected as refused:
            return Answer(0, "address not public" if "ADDRESS" in refused.reason else "bad URL")
        body, headers = message(
            notification,
            target.get(b"format", b"generic").decode(),
            target.get(b"secret", b"").decode(),
            self._public_url,
        )
        return await self._post(pinned, body, headers)

    async def _done(self, shard: int, queued: Queued, delivered: bool) -> None:
        notification_id = queued.notification.notification_id
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hdel(outbox_key(shard), notification_id)
            pipe.zrem(due_key(shard), notification_id)
            await pipe.execute()
        if delivered:
            await self._redis.hincrby(health_key(queued.notification.player_id), "delivered", 1)

    async def _failed(self, shard: int, queued: Queued, error: str) -> None:
        notification = queued.notification
        failures = queued.failures + 1
        now = self._clock_ms()
        async with self._redis.pipeline(transaction=True) as pipe:
            if failures >= self.retrying.attempts:
                pipe.hdel(outbox_key(shard), notification.notification_id)
                pipe.zrem(due_key(shard), notification.notification_id)
            else:
                wait_ms = int(self.retrying.wait_after(failures) * 1000)
                pipe.hset(
                    outbox_key(shard),
                    notification.notification_id,
                    Queued(notification, failures).to_json(),
                )
                pipe.zadd(due_key(shard), {notification.notification_id: now + wait_ms})
            await pipe.execute()
        health = health_key(notification.player_id)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hincrby(health, "failed_attempts", 1)
            if failures >= self.retrying.attempts:
                pipe.hincrby(health, "given_up", 1)
            pipe.hset(health, mapping={"last_error": error, "last_error_at_ms": now})
            await pipe.execute()
        log.info(
            "notification %s to %s failed (%s), attempt %d of %d",
            notification.notification_id,
            notification.player_id,
            error,
            failures,
            self.retrying.attempts,
        )

    async def run(self, stop: asyncio.Event, interval: float = 0.2) -> None:
        """Passes until `stop`, resting `interval` when nothing was due; then lets the posts
        under way finish."""
        while not stop.is_set():
            try:
                sent = await self.run_once()
            except RedisError as error:
                log.warning("delivery pass failed, will try again: %s", error)
                sent = 0
            if not sent:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), interval)
        await self.settle()
