"""The webhooks' settings, shared by the processes that check webhook URLs (the lobby when a
target is set, the notifier before each delivery): read once at their start (infra.settings)."""

from __future__ import annotations

from dataclasses import dataclass

from infra.settings import SWITCH, setting


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    allow_loopback: bool = setting(
        "SHIKOKU_WEBHOOK_ALLOW_LOOPBACK",
        False,
        SWITCH,
        "`1` lets webhooks be `http://127.0.0.1:PORT/...` as well as public https URLs: for "
        "development and tests only",
    )
