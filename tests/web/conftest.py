"""The whole system as `make run` starts it (`shikoku run`: real processes on free loopback
ports), for the tests of the web entrypoint over real HTTP; the gRPC gateway beside it, to
compare with and to play the seats."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.api import Client, System
from tests.e2e.launch import start_system, stop_system

#: Open game streams per caller on this system: small, so that a stream the web entrypoint
#: failed to cancel upstream would soon show as TOO_MANY_STREAMS.
STREAMS_PER_CALLER = 3


@pytest.fixture(scope="session")
def web_api(redis_url: str) -> Iterator[System]:
    # Calls at test speed, far beyond the default per-caller limits; the rate-limit test uses
    # an API key of its own with small ones.
    system = start_system(
        redis_url,
        SHIKOKU_RATE_PER_SECOND="10000",
        SHIKOKU_RATE_BURST="10000",
        SHIKOKU_STREAMS_PER_CALLER=str(STREAMS_PER_CALLER),
    )
    yield system
    stop_system(system)


@pytest.fixture
def grpc_client(web_api: System) -> Iterator[Client]:
    client = Client(web_api)
    yield client
    client.channel.close()
    client.redis.close()
