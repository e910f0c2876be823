"""Players' notification targets and how their notifications fared: what the lobby's
SetNotificationTarget and GetNotificationHealth do (the lobby authenticates and authorises;
these check, store and read).

A target is the hash `notify:target:{<player_id>}` (url, format, secret); the notifier writes
each player's health to `notify:health:{<player_id>}` (services/notify/keys.py).
"""

from __future__ import annotations

import secrets
from typing import Final, cast

from redis.asyncio import Redis

from kernel.rejection import Kind, Rejected
from services.notify.address_guard import WebhookGuard
from services.notify.keys import health_key, target_key
from shikoku.v1 import lobby_pb2

__all__ = ["WebhookGuard", "notification_health", "set_notification_target"]

UNKNOWN_WEBHOOK_FORMAT: Final = "UNKNOWN_WEBHOOK_FORMAT"
SECRET_BYTES = 32

#: Each format as stored, and back.
FORMAT_NAMES: dict[int, str] = {
    lobby_pb2.NOTIFICATION_FORMAT_GENERIC: "generic",
    lobby_pb2.NOTIFICATION_FORMAT_SLACK: "slack",
    lobby_pb2.NOTIFICATION_FORMAT_DISCORD: "discord",
}
FORMATS: dict[str, lobby_pb2.NotificationFormat.ValueType] = {
    name: cast(lobby_pb2.NotificationFormat.ValueType, number)
    for number, name in FORMAT_NAMES.items()
}


def format_name(requested: int) -> str:
    """The stored name of a requested format (unspecified is generic), or Rejected
    UNKNOWN_WEBHOOK_FORMAT."""
    if requested == lobby_pb2.NOTIFICATION_FORMAT_UNSPECIFIED:
        return "generic"
    if requested not in FORMAT_NAMES:
        raise Rejected(
            UNKNOWN_WEBHOOK_FORMAT,
            f"there is no webhook format {requested}: use generic, slack or discord",
            Kind.INVALID_ARGUMENT,
            {"field": "format", "format": requested},
        )
    return FORMAT_NAMES[requested]


async def set_notification_target(
    redis: Redis,
    player_id: str,
    request: lobby_pb2.SetNotificationTargetRequest,
    guard: WebhookGuard,
) -> lobby_pb2.NotificationTarget:
    """Replaces the player's target (an empty url removes it), after checking the URL with
    `guard`; a generic target gets a new secret, returned here only. A refused request
    writes nothing."""
    if not request.url:
        await redis.delete(target_key(player_id))
        return lobby_pb2.NotificationTarget()
    name = format_name(request.format)
    await guard.check(request.url)
    secret = secrets.token_hex(SECRET_BYTES) if name == "generic" else ""
    key = target_key(player_id)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.delete(key)
        pipe.hset(key, mapping={"url": request.url, "format": name, "secret": secret})
        await pipe.execute()
    return lobby_pb2.NotificationTarget(url=request.url, format=FORMATS[name], secret=secret)


async def notification_health(
    redis: Redis, players: list[tuple[str, str]]
) -> list[lobby_pb2.NotificationHealth]:
    """One line per (player_id, display_name), in the order given, in one round trip."""
    async with redis.pipeline(transaction=False) as pipe:
        for player_id, _name in players:
            pipe.hmget(target_key(player_id), ["url", "format"])
            pipe.hgetall(health_key(player_id))
        replies = await pipe.execute()
    lines: list[lobby_pb2.NotificationHealth] = []
    for index, (player_id, display_name) in enumerate(players):
        url, stored_format = cast(list[bytes | None], replies[2 * index])
        health = cast(dict[bytes, bytes], replies[2 * index + 1])
        has_target = bool(url)
        lines.append(
            lobby_pb2.NotificationHealth(
                player_id=player_id,
                display_name=display_name,
                format=(
                    FORMATS.get((stored_format or b"").decode(), FORMATS["generic"])
                    if has_target
                    else lobby_pb2.NOTIFICATION_FORMAT_UNSPECIFIED
                ),
                has_target=has_target,
                delivered=int(health.get(b"delivered", 0)),
                failed_attempts=int(health.get(b"failed_attempts", 0)),
                given_up=int(health.get(b"given_up", 0)),
                last_error=health.get(b"last_error", b"").decode(),
                last_error_at_ms=int(health.get(b"last_error_at_ms", 0)),
            )
        )
    return lines
