"""The whole system in its scaled form, as `shikoku run --cluster` starts it: an embedded Redis
Cluster of three masters with a replica each (appends wait for one replica), and two processes
of every service, reached through both gateways at once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.api import System
from tests.e2e.launch import start_system, stop_system


@pytest.fixture(scope="session")
def cluster_system() -> Iterator[System]:
    system = start_system(
        None, "--cluster", SHIKOKU_RATE_PER_SECOND="10000", SHIKOKU_RATE_BURST="10000"
    )
    yield system
    stop_system(system)


@pytest.fixture(scope="session")
def system(cluster_system: System) -> System:
    return cluster_system
