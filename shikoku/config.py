"""Addresses and settings of every process, from environment variables with loopback defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Addresses:
    gateway: str
    lobby: str
    rules: str
    routes: str

    @classmethod
    def from_env(cls) -> Addresses:
        return cls(
            gateway=os.environ.get("SHIKOKU_GATEWAY_ADDR", "127.0.0.1:50051"),
            lobby=os.environ.get("SHIKOKU_LOBBY_ADDR", "127.0.0.1:50052"),
            rules=os.environ.get("SHIKOKU_RULES_ADDR", "127.0.0.1:50053"),
            routes=os.environ.get("SHIKOKU_ROUTES_ADDR", "127.0.0.1:50054"),
        )


def redis_url() -> str:
    return os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
