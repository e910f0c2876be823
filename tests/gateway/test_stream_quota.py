"""The per-caller cap on open game streams."""

from __future__ import annotations

import pytest

from gateway.stream_quota import StreamQuota
from kernel.rejection import Rejected


def test_a_caller_holds_at_most_the_quota_and_gets_it_back() -> None:
    quota = StreamQuota(per_caller=2)
    with quota.held("alice"), quota.held("alice"):
        with pytest.raises(Rejected) as refused, quota.held("alice"):
            pass
        assert refused.value.reason == "TOO_MANY_STREAMS"
        assert refused.value.details == {"limit": "2"}
        with quota.held("bob"):  # another caller's streams are their own
            pass
    with quota.held("alice"), quota.held("alice"):  # closed streams free their places
        pass


def test_a_stream_that_fails_frees_its_place() -> None:
    quota = StreamQuota(per_caller=1)
    with pytest.raises(RuntimeError), quota.held("alice"):
        raise RuntimeError("the client went away")
    with quota.held("alice"):
        pass


def test_zero_lifts_the_cap() -> None:
    quota = StreamQuota(per_caller=0)
    with quota.held("alice"), quota.held("alice"), quota.held("alice"):
        pass
