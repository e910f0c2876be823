"""Rejections: why a command or request was refused, in a form every layer understands.

Domain code raises `Rejected`; the gRPC edge turns it into a status with a
google.rpc.ErrorInfo (see `infra.grpc_errors`). The domain stays free of gRPC.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from enum import Enum


class Kind(Enum):
    """What kind of refusal it is; maps one-to-one onto a gRPC status code."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"  # malformed, whatever the state of the game
    FAILED_PRECONDITION = "FAILED_PRECONDITION"  # well-formed but not allowed now
    PERMISSION_DENIED = "PERMISSION_DENIED"  # not the caller's to do
    NOT_FOUND = "NOT_FOUND"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    UNIMPLEMENTED = "UNIMPLEMENTED"
    UNAVAILABLE = "UNAVAILABLE"  # a dependency is down: retry later
    ABORTED = "ABORTED"  # lost a race with a concurrent change: retry the call
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"  # too many calls: retry after a delay


class Rejected(Exception):
    """A refusal with a stable machine-readable `reason` (e.g. NOT_YOUR_TURN) and details such
    as the hex or the limit, for clients to build their own messages. `retry_after`: how long
    the caller should wait before trying again, when that is known."""

    def __init__(
        self,
        reason: str,
        message: str,
        kind: Kind = Kind.FAILED_PRECONDITION,
        details: Mapping[str, object] | None = None,
        retry_after: timedelta | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.kind = kind
        self.details = {key: str(value) for key, value in (details or {}).items()}
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"Rejected({self.reason!r}, {self.message!r})"
