"""A revoked API key on the cluster (conftest.py: two gateway processes on a Redis Cluster of
three masters): both gateways refuse it within a second of `shikoku api-key revoke`, the
announcement published through one node reaching subscribers on any other."""

from __future__ import annotations

import pytest

from tests.e2e.api import System
from tests.e2e.test_api_key_revocation import WITHIN_SECONDS, gateways_of, revoked_everywhere_within

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_a_revoked_key_is_refused_by_both_gateways_within_a_second(system: System) -> None:
    gateways = gateways_of(system)
    assert len(gateways) == 2
    _since_start, since_revoked = revoked_everywhere_within(system, gateways)
    assert since_revoked < WITHIN_SECONDS, f"refused everywhere {since_revoked:.3f} s after"
