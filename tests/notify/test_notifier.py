"""The notifier on a real Redis: the test writes what the rules service and the lobby would
(feed entries, summaries, game-players records), a receiver on loopback takes the webhooks
(SHIKOKU_WEBHOOK_ALLOW_LOOPBACK on)."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
import redis
import redis.asyncio

from infra.settings import load
from services.notify.keys import (
    due_key,
    feed_key,
    game_players_key,
    health_key,
    outbox_key,
    turns_key,
)
from services.notify.shell import feed
from services.notify.shell.feed import GROUP
from services.notify.shell.server import Notifier, build_notify
from services.notify.shell.settings import NotifySettings
from services.notify.targets import WebhookGuard, set_notification_target
from services.notify.turns import Told, to_tell
from services.projections.game_summaries import shard_of, summary_key
from shikoku.v1 import lobby_pb2
from tests.notify.receiver import Receiver

pytestmark = pytest.mark.io

GAME = "g-notify-1"
SHARD = shard_of(GAME)
SEATS = {1: "p-a", 2: "p-b", 3: "p-c"}


class Clock:
    def __init__(self) -> None:
        self.ms = 1_700_000_000_000

    def __call__(self) -> int:
        return self.ms


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    started = await Receiver().start()
    yield started
    await started.stop()


def notifier(redis_client: redis.asyncio.Redis, clock: Clock, consumer: str = "n-1") -> Notifier:
    settings = load(
        NotifySettings,
        {
            "SHIKOKU_WEBHOOK_ALLOW_LOOPBACK": "1",
            "SHIKOKU_PUBLIC_URL": "https://play.example",
            "SHIKOKU_NOTIFY_FIRST_RETRY_SECONDS": "1",
            "SHIKOKU_NOTIFY_ATTEMPTS": "3",
        },
        "notify",
    )
    built = build_notify(settings, redis_client, consumer, clock_ms=clock)
    built.feed.claim_idle_ms = 0
    return built


async def seat_players(redis_client: redis.asyncio.Redis, receiver: Receiver) -> dict[str, str]:
    await redis_client.hset(
        game_players_key(GAME),
        mapping={
            "table_id": "t-1",
            "tournament_id": "",
            "round": "0",
            **{f"seat:{n}": p for n, p in SEATS.items()},
        },
    )
    guard = WebhookGuard(allow_loopback=True)
    secrets = {}
    for player in SEATS.values():
        request = lobby_pb2.SetNotificationTargetRequest(url=receiver.url)
        secrets[player] = (
            await set_notification_target(redis_client, player, request, guard)
        ).secret
    return secrets


async def play(
    redis_client: redis.asyncio.Redis, version: int, acting: list[int], finished: bool = False
) -> None:
    document = {"game_id": GAME, "version": version, "acting_seats": acting, "finished": finished}
    await redis_client.hset(
        summary_key(GAME), mapping={"version": version, "summary": json.dumps(document)}
    )
    await redis_client.xadd(feed_key(SHARD), {"game_id": GAME, "version": version})


async def pass_once(built: Notifier) -> None:
    await built.feed.run_once()
    await built.sender.run_once()
    await built.sender.settle()


async def test_your_turn_once_per_turn_change_and_the_end_to_everyone(
    redis_client: redis.asyncio.Redis, receiver: Receiver
) -> None:
    secrets = await seat_players(redis_client, receiver)
    built = notifier(redis_client, Clock())
    await play(redis_client, 3, [1])
    await pass_once(built)
    assert sorted(receiver.events()) == sorted(
        [("game_started", p) for p in SEATS.values()] + [("your_turn", "p-a")]
    )
    receiver.received.clear()
    for version in (4, 5, 6):  # p-a acts three times in a row
        await play(redis_client, version, [1])
    await play(redis_client, 7, [2])
    await play(redis_client, 7, [2])  # the same version noted twice
    await pass_once(built)
    assert receiver.events() == [("your_turn", "p-b")]
    turn = receiver.received[0]
    assert turn.path == "/hook"
    assert turn.document["link"] == f"https://play.example/?game={GAME}"
    assert turn.document["version"] == 7 and turn.document["table_id"] == "t-1"
    signed = hmac.new(secrets["p-b"].encode(), turn.body, hashlib.sha256).hexdigest()
    assert turn.headers["x-shikoku-signature"] == f"sha256={signed}"
    receiver.received.clear()
    await play(redis_client, 20, [3], finished=True)
    await play(redis_client, 21, [], finished=True)
    await pass_once(built)
    assert sorted(receiver.events()) == [("game_ended", p) for p in ("p-a", "p-b", "p-c")]
    health = await redis_client.hgetall(health_key("p-b"))
    assert health[b"delivered"] == b"3"  # started, its turn, the end
    assert await redis_client.xpending(feed_key(SHARD), GROUP) == {
        "pending": 0,
        "min": None,
        "max": None,
        "consumers": [],
    }


async def test_a_failing_receiver_is_retried_with_backoff_and_its_failures_counted(
    redis_client: redis.asyncio.Redis, receiver: Receiver
) -> None:
    await seat_players(redis_client, receiver)
    clock = Clock()
    built = notifier(redis_client, clock)
    await play(redis_client, 3, [2])
    receiver.status = 500
    await pass_once(built)
    assert len(receiver.received) == 4  # three started, one turn: each failed once
    health = await redis_client.hgetall(health_key("p-b"))
    assert health[b"failed_attempts"] == b"2"
    assert health[b"last_error"] == b"HTTP 500"
    assert int(health[b"last_error_at_ms"]) == clock.ms
    await pass_once(built)  # not due yet: the first retry waits a second
    assert len(receiver.received) == 4
    clock.ms += 1000
    receiver.status = 200
    await pass_once(built)
    assert len(receiver.received) == 8
    retried = sorted(r.document["notification_id"] for r in receiver.received[4:])
    assert retried == sorted(r.document["notification_id"] for r in receiver.received[:4])
    health = await redis_client.hgetall(health_key("p-b"))
    assert (health[b"delivered"], health[b"failed_attempts"]) == (b"2", b"2")
    assert not await redis_client.hlen(outbox_key(SHARD))


async def test_a_receiver_that_keeps_failing_is_given_up_after_the_attempts(
    redis_client: redis.asyncio.Redis, receiver: Receiver
) -> None:
    await seat_players(redis_client, receiver)
    await redis_client.hset(game_players_key(GAME), mapping={"seat:1": "", "seat:3": ""})
    clock = Clock()
    built = notifier(redis_client, clock)
    receiver.status = 503
    await play(redis_client, 3, [2])
    for wait_ms in (0, 1000, 2000, 4000):  # the third attempt is the last (attempts 3)
        clock.ms += wait_ms
        await pass_once(built)
    assert len(receiver.received) == 6  # started and your_turn, three times each
    health = await redis_client.hgetall(health_key("p-b"))
    assert (health[b"failed_attempts"], health[b"given_up"]) == (b"6", b"2")
    assert health[b"last_error"] == b"HTTP 503"
    assert not await redis_client.hlen(outbox_key(SHARD))


async def test_a_notifier_that_died_loses_nothing_and_repeats_only_what_it_had_in_hand(
    redis_client: redis.asyncio.Redis, receiver: Receiver
) -> None:
    await seat_players(redis_client, receiver)
    clock = Clock()
    first = notifier(redis_client, clock, "n-first")
    await play(redis_client, 3, [1])
    await first.feed.run_once()  # queued and acknowledged, then it dies before posting
    await play(redis_client, 4, [3])
    read_not_handled = await first.feed.read_new(SHARD)  # read, never acknowledged
    assert [game for _entry, game in read_not_handled] == [GAME]
    second = notifier(redis_client, clock, "n-second")
    await pass_once(second)  # claims the abandoned entry, sends everything queued
    assert sorted(receiver.events()) == sorted(
        [("game_started", p) for p in SEATS.values()] + [("your_turn", "p-a"), ("your_turn", "p-c")]
    )
    receiver.received.clear()
    # The dead one's entry handled again (it comes back, say): nothing is told twice.
    await first.feed.handle(SHARD, read_not_handled)
    await pass_once(second)
    assert receiver.received == []


async def test_a_delivery_in_hand_when_its_sender_died_is_sent_again_after_its_lease(
    redis_client: redis.asyncio.Redis, receiver: Receiver
) -> None:
    await seat_players(redis_client, receiver)
    await redis_client.hset(game_players_key(GAME), mapping={"seat:1": "", "seat:3": ""})
    clock = Clock()
    first = notifier(redis_client, clock, "n-first")
    await play(redis_client, 3, [2])
    await first.feed.run_once()
    queued = cast(list[bytes], await redis_client.zrange(due_key(SHARD), 0, -1))
    # Taken (leased a minute) by a sender that died without posting.
    await redis_client.zadd(due_key(SHARD), {member: clock.ms + 60_000 for member in queued})
    second = notifier(redis_client, clock, "n-second")
    await pass_once(second)
    assert receiver.received == []  # leased to the dead one
    clock.ms += 60_000
    await pass_once(second)
    assert sorted(receiver.events()) == [("game_started", "p-b"), ("your_turn", "p-b")]


async def test_a_game_told_by_another_notifier_meanwhile_is_read_again_and_not_told_twice(
    redis_client: redis.asyncio.Redis, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between this notifier's read of the game and its queueing, another notifier records
    that it told the same turn: the queueing is refused, the game read again, nothing told."""
    await seat_players(redis_client, receiver)
    built = notifier(redis_client, Clock())
    await play(redis_client, 3, [1])
    address = redis_client.connection_pool.connection_kwargs
    other = redis.Redis(host=address["host"], port=address["port"])
    decisions: list[int] = []

    def told_meanwhile(*args: Any) -> Any:
        if not decisions:
            other.hset(turns_key(SHARD), GAME, Told(3, (1,), False).to_json())
        decisions.append(args[2])
        return to_tell(*args)

    monkeypatch.setattr(feed, "to_tell", told_meanwhile)
    assert await built.feed.run_once() == 1
    other.close()
    assert decisions == [3, 3]  # decided twice: before and after the other's record
    await built.sender.run_once()
    await built.sender.settle()
    assert receiver.received == []
    assert (await redis_client.xpending(feed_key(SHARD), GROUP))["pending"] == 0
