"""The notifier process: follows the summary feed and tells players of their turns, games and
rounds by webhook (services/notify/shell/feed.py queues, outbox.py delivers).

It has no API: it serves the standard gRPC health service (and /metrics when asked), so that
`shikoku run`, Compose and Kubernetes see it as they see the others. Run as many as wanted:
the feed's consumer group gives each entry to one of them, and the due sets' leases each
delivery to one.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

import grpc
from redis.asyncio import Redis

from infra.config import connect_redis
from infra.grpc_server import serve
from infra.observability import observe_process
from infra.settings import from_environment
from services.notify.address_guard import WebhookGuard
from services.notify.shell.feed import FeedFollower
from services.notify.shell.outbox import Retrying, Sender
from services.notify.shell.settings import NotifySettings


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class Notifier:
    """The notifier composed from its settings: `run` both halves until `stop`."""

    feed: FeedFollower
    sender: Sender

    async def run(self, stop: asyncio.Event) -> None:
        await asyncio.gather(self.feed.run(stop), self.sender.run(stop))


def build_notify(
    settings: NotifySettings,
    redis: Redis,
    consumer: str,
    guard: WebhookGuard | None = None,
    clock_ms: Callable[[], int] = wall_clock_ms,
) -> Notifier:
    """The notifier on `redis`; `consumer` names this process in the feed's group; `guard`
    (default: from the settings, on the system's resolver) checks each webhook before it is
    posted to."""
    guard = guard or WebhookGuard(allow_loopback=settings.webhooks.allow_loopback)
    retrying = Retrying(settings.first_retry, settings.attempts)
    return Notifier(
        FeedFollower(redis, consumer, settings.shards, clock_ms),
        Sender(redis, guard, settings.public_url, settings.shards, clock_ms, retrying),
    )


async def main() -> None:
    settings = from_environment(NotifySettings, NotifySettings.NAME)
    observe_process(settings.NAME, settings.process.observability)
    redis = await connect_redis(settings.NAME, settings.redis.url)
    notifier = build_notify(settings, redis, f"notify-{socket.gethostname()}-{os.getpid()}")
    stopping = asyncio.Event()
    running = asyncio.create_task(notifier.run(stopping))

    async def stop() -> None:
        stopping.set()
        await running
        await redis.aclose()

    def nothing_but_health(_server: grpc.aio.Server) -> list[str]:
        return []

    await serve(
        settings.NAME,
        settings.listen_address,
        nothing_but_health,
        on_stop=stop,
        observability=settings.process.observability,
    )


if __name__ == "__main__":
    asyncio.run(main())
