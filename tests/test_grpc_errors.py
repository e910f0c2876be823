"""A rejection survives the trip through a gRPC status and back: reason, kind, metadata and the
retry delay, which a service passing an upstream refusal on must not lose."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import grpc

from shikoku.grpc_errors import from_rpc_error, to_status
from shikoku.rejection import Kind, Rejected


class ReceivedError(grpc.RpcError):
    """What a client holds after a call ended with `status`."""

    def __init__(self, code: grpc.StatusCode, trailing_metadata: Any) -> None:
        self._code = code
        self._trailing_metadata = trailing_metadata

    def code(self) -> grpc.StatusCode:
        return self._code

    def trailing_metadata(self) -> Any:
        return self._trailing_metadata


def round_trip(rejection: Rejected) -> Rejected | None:
    status = to_status(rejection)
    return from_rpc_error(ReceivedError(status.code, status.trailing_metadata))


def test_reason_kind_metadata_and_retry_delay_come_back() -> None:
    sent = Rejected(
        "RATE_LIMITED",
        "too many calls",
        Kind.RESOURCE_EXHAUSTED,
        {"burst": 5},
        retry_after=timedelta(milliseconds=250),
    )
    received = round_trip(sent)
    assert received is not None
    assert (received.reason, received.kind, received.details, received.message) == (
        "RATE_LIMITED",
        Kind.RESOURCE_EXHAUSTED,
        {"burst": "5"},
        "too many calls",
    )
    assert received.retry_after == timedelta(milliseconds=250)


def test_no_retry_delay_when_none_was_sent() -> None:
    received = round_trip(Rejected("NOT_YOUR_TURN", "wait", details={"seat": 2}))
    assert received is not None and received.retry_after is None
    assert received.kind == Kind.FAILED_PRECONDITION


def test_an_error_without_details_is_not_a_rejection() -> None:
    assert from_rpc_error(ReceivedError(grpc.StatusCode.INTERNAL, ())) is None
