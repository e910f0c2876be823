"""The notifier process's settings, read once at its start (infra.settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from infra.process_settings import ProcessSettings, RedisSettings
from infra.settings import HOST_PORT, block, http_url, seconds, setting, whole
from services.notify.settings import WebhookSettings
from services.projections.game_summaries import DEFAULT_CHANGE_SHARDS


@dataclass(frozen=True, slots=True)
class NotifySettings:
    NAME: ClassVar[str] = "notify"

    process: ProcessSettings = block(ProcessSettings)
    redis: RedisSettings = block(RedisSettings)
    webhooks: WebhookSettings = block(WebhookSettings)
    listen_address: str = setting(
        "SHIKOKU_NOTIFY_ADDR",
        "127.0.0.1:50055",
        HOST_PORT,
        "where the notifier serves the gRPC health service (it has no API of its own)",
    )
    public_url: str = setting(
        "SHIKOKU_PUBLIC_URL",
        "http://127.0.0.1:8080",
        http_url(),
        "the web entrypoint as players reach it: notifications link to its board page",
    )
    shards: int = setting(
        "SHIKOKU_SUMMARY_SHARDS",
        DEFAULT_CHANGE_SHARDS,
        whole(least=1),
        "change streams the summary projector's notes are spread over: the same in every rules "
        "process",
    )
    first_retry: float = setting(
        "SHIKOKU_NOTIFY_FIRST_RETRY_SECONDS",
        2.0,
        seconds(),
        "how long a failed webhook delivery waits before its first retry; each next waits "
        "twice as long, up to 10 minutes",
    )
    attempts: int = setting(
        "SHIKOKU_NOTIFY_ATTEMPTS",
        10,
        whole(least=1),
        "delivery attempts of one notification before it is given up",
    )
