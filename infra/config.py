"""Addresses and settings of every process, from environment variables with loopback defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass

from redis.asyncio import Redis


@dataclass(frozen=True, slots=True)
class Addresses:
    gateway: str
    lobby: str
    rules: str
    routes: str
    web: str = "127.0.0.1:8080"

    @classmethod
    def from_env(cls) -> Addresses:
        return cls(
            gateway=os.environ.get("SHIKOKU_GATEWAY_ADDR", "127.0.0.1:50051"),
            lobby=os.environ.get("SHIKOKU_LOBBY_ADDR", "127.0.0.1:50052"),
            rules=os.environ.get("SHIKOKU_RULES_ADDR", "127.0.0.1:50053"),
            routes=os.environ.get("SHIKOKU_ROUTES_ADDR", "127.0.0.1:50054"),
            web=os.environ.get("SHIKOKU_WEB_ADDR", "127.0.0.1:8080"),
        )


def redis_url() -> str:
    return os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


# Fail fast when Redis is down (callers answer UNAVAILABLE); long enough for blocking reads,
# which wait at most 5 s (EventStore.follow).
REDIS_CONNECT_SECONDS = 1.0
REDIS_READ_SECONDS = 10.0


def redis_client() -> Redis:
    return Redis.from_url(
        redis_url(),
        socket_connect_timeout=REDIS_CONNECT_SECONDS,
        socket_timeout=REDIS_READ_SECONDS,
    )
