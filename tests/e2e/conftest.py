"""The whole system as `make run` starts it: `shikoku run`, real processes on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.api import Client, System
from tests.e2e.launch import start_system, stop_system


@pytest.fixture(scope="session")
def system(redis_url: str) -> Iterator[System]:
    # The tests drive bots and replays at machine speed, far beyond the per-caller default
    # limits; tests/e2e/test_rate_limits.py starts a system of its own with small ones.
    system = start_system(redis_url, SHIKOKU_RATE_PER_SECOND="10000", SHIKOKU_RATE_BURST="10000")
    yield system
    stop_system(system)


@pytest.fixture
def client(system: System) -> Iterator[Client]:
    client = Client(system)
    yield client
    client.channel.close()
    client.redis.close()
