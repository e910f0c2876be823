"""The lobby process's settings, read once at its start (infra.settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from infra.process_settings import (
    Listening,
    ProcessSettings,
    RedisSettings,
    ReplicationSettings,
)
from infra.settings import block
from services.notify.settings import WebhookSettings
from services.projections.game_summaries import SummaryShards


@dataclass(frozen=True, slots=True)
class LobbySettings:
    NAME: ClassVar[str] = "lobby"

    process: ProcessSettings = block(ProcessSettings)
    listening: Listening = block(Listening)
    redis: RedisSettings = block(RedisSettings)
    replication: ReplicationSettings = block(ReplicationSettings)
    #: The summary feed's shards, which the tournament and player watchers follow.
    summaries: SummaryShards = block(SummaryShards)
    #: How SetNotificationTarget checks a webhook (the notifier checks it again on delivery).
    webhooks: WebhookSettings = block(WebhookSettings)

    @property
    def listen_address(self) -> str:
        return self.listening.address(self.NAME, self.process.addresses)

    @property
    def secret(self) -> bytes:
        """What keys the ids, credentials and seeds the lobby derives: the deployment's token,
        so that every replica derives the same ones."""
        return self.process.token.encode()

    def problems(self) -> list[str]:
        return self.process.token_problems() + self.listening.ambiguity(
            self.NAME, self.process.addresses
        )
