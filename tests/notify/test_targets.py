"""Notification targets as the lobby stores and reads them (services/notify/targets.py), on a
real Redis."""

from __future__ import annotations

import pytest
import redis.asyncio

from kernel.rejection import Kind, Rejected
from services.notify.address_guard import WebhookGuard
from services.notify.keys import health_key, target_key
from services.notify.targets import notification_health, set_notification_target
from shikoku.v1 import lobby_pb2

pytestmark = pytest.mark.io


async def public(host: str, port: int) -> list[str]:
    return ["93.184.215.14"]


GUARD = WebhookGuard(resolve=public)


async def test_a_generic_target_is_stored_with_a_new_secret_each_time(
    redis_client: redis.asyncio.Redis,
) -> None:
    request = lobby_pb2.SetNotificationTargetRequest(url="https://hooks.example.com/me")
    first = await set_notification_target(redis_client, "p-1", request, GUARD)
    second = await set_notification_target(redis_client, "p-1", request, GUARD)
    assert first.format == lobby_pb2.NOTIFICATION_FORMAT_GENERIC
    assert len(first.secret) == 64 and first.secret != second.secret
    stored = await redis_client.hgetall(target_key("p-1"))
    assert stored == {
        b"url": b"https://hooks.example.com/me",
        b"format": b"generic",
        b"secret": second.secret.encode(),
    }


async def test_slack_and_discord_targets_have_no_secret_and_an_empty_url_removes(
    redis_client: redis.asyncio.Redis,
) -> None:
    slack = await set_notification_target(
        redis_client,
        "p-2",
        lobby_pb2.SetNotificationTargetRequest(
            url="https://hooks.slack.com/services/T/B/x",
            format=lobby_pb2.NOTIFICATION_FORMAT_SLACK,
        ),
        GUARD,
    )
    assert (slack.format, slack.secret) == (lobby_pb2.NOTIFICATION_FORMAT_SLACK, "")
    assert await redis_client.hget(target_key("p-2"), "format") == b"slack"
    removed = await set_notification_target(
        redis_client, "p-2", lobby_pb2.SetNotificationTargetRequest(), GUARD
    )
    assert removed == lobby_pb2.NotificationTarget()
    assert not await redis_client.exists(target_key("p-2"))


@pytest.mark.parametrize(
    ("url", "format_", "reason"),
    [
        ("https://hooks.example.com/", 99, "UNKNOWN_WEBHOOK_FORMAT"),
        ("http://hooks.example.com/", 1, "INVALID_WEBHOOK_URL"),
        ("https://169.254.169.254/latest/meta-data", 1, "FORBIDDEN_WEBHOOK_ADDRESS"),
    ],
)
async def test_a_refused_target_writes_nothing(
    redis_client: redis.asyncio.Redis, url: str, format_: int, reason: str
) -> None:
    await set_notification_target(
        redis_client,
        "p-3",
        lobby_pb2.SetNotificationTargetRequest(url="https://hooks.example.com/old"),
        GUARD,
    )
    before = await redis_client.hgetall(target_key("p-3"))
    request = lobby_pb2.SetNotificationTargetRequest(url=url)
    request.format = format_  # type: ignore[assignment]
    with pytest.raises(Rejected) as refused:
        await set_notification_target(redis_client, "p-3", request, GUARD)
    assert (refused.value.reason, refused.value.kind) == (reason, Kind.INVALID_ARGUMENT)
    assert await redis_client.hgetall(target_key("p-3")) == before


async def test_health_is_one_line_per_player_in_the_order_asked(
    redis_client: redis.asyncio.Redis,
) -> None:
    await set_notification_target(
        redis_client,
        "p-b",
        lobby_pb2.SetNotificationTargetRequest(
            url="https://discord.com/api/webhooks/1/x",
            format=lobby_pb2.NOTIFICATION_FORMAT_DISCORD,
        ),
        GUARD,
    )
    await redis_client.hset(
        health_key("p-b"),
        mapping={
            "delivered": 3,
            "failed_attempts": 2,
            "given_up": 1,
            "last_error": "HTTP 500",
            "last_error_at_ms": 1700000000000,
        },
    )
    lines = await notification_health(redis_client, [("p-b", "Bea"), ("p-a", "Al")])
    assert lines == [
        lobby_pb2.NotificationHealth(
            player_id="p-b",
            display_name="Bea",
            format=lobby_pb2.NOTIFICATION_FORMAT_DISCORD,
            has_target=True,
            delivered=3,
            failed_attempts=2,
            given_up=1,
            last_error="HTTP 500",
            last_error_at_ms=1700000000000,
        ),
        lobby_pb2.NotificationHealth(player_id="p-a", display_name="Al"),
    ]
