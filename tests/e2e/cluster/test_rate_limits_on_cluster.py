"""Rate limits on the cluster: a system of its own with small limits, two processes of each
service on the cluster of conftest.py, so every gateway charges the same buckets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.api import System
from tests.e2e.launch import stop_system
from tests.e2e.test_rate_limits import (  # client: a Client of the `limited` system below
    client,
    start_limited,
    test_a_client_over_its_limit_is_told_when_to_retry_and_others_are_served,
    test_an_application_key_with_limits_of_its_own,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

__all__ = [
    "client",
    "test_a_client_over_its_limit_is_told_when_to_retry_and_others_are_served",
    "test_an_application_key_with_limits_of_its_own",
]


@pytest.fixture(scope="module")
def limited(cluster_system: System) -> Iterator[System]:
    system = start_limited(cluster_system.redis_url, "--replicas", "2")
    yield system
    stop_system(system)
