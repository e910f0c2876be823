"""The rules process's settings, read once at its start (infra.settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from infra.process_settings import (
    Listening,
    ProcessSettings,
    RedisSettings,
    ReplicationSettings,
)
from infra.settings import block, setting, whole
from services.projections.game_summaries import SummaryShards
from services.rules.shell.repository import DEFAULT_CACHED_GAMES


@dataclass(frozen=True, slots=True)
class RulesSettings:
    NAME: ClassVar[str] = "rules"

    process: ProcessSettings = block(ProcessSettings)
    listening: Listening = block(Listening)
    redis: RedisSettings = block(RedisSettings)
    replication: ReplicationSettings = block(ReplicationSettings)
    cached_games: int = setting(
        "SHIKOKU_RULES_CACHED_GAMES",
        DEFAULT_CACHED_GAMES,
        whole(least=1),
        "games whose latest state and timeline a rules process keeps (the least recently used "
        "go first)",
    )
    summaries: SummaryShards = block(SummaryShards)

    @property
    def summary_shards(self) -> int:
        return self.summaries.count

    @property
    def listen_address(self) -> str:
        return self.listening.address(self.NAME, self.process.addresses)

    def problems(self) -> list[str]:
        return self.process.token_problems() + self.listening.ambiguity(
            self.NAME, self.process.addresses
        )
