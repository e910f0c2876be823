"""Rejections: why a command or request was refused, in a form every layer understands.

Domain code raises `Rejected`; the gRPC edge turns it into a status with a
google.rpc.ErrorInfo (see `infra.grpc_errors`). The domain stays free of gRPC.

An error never repeats what a caller sent at any length: a value of the request goes into a
message or a detail through `quoted` (its first `QUOTE_CHARS` characters), and every message
and detail value is cut to a few hundred bytes besides (`bounded`), so that a refusal always
fits gRPC's 8 KiB of trailing metadata (its message goes out percent-encoded in `grpc-message`
and, twice, in `grpc-status-details-bin`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from enum import Enum
from typing import cast

from kernel.reasons import REASON_CODES, ReasonCode

#: The most characters of a caller's value an error repeats.
QUOTE_CHARS = 40
#: The most bytes (UTF-8) of an error's message; longer ones are cut, marked with "…".
MAX_MESSAGE_BYTES = 512
#: The most bytes (UTF-8) of one value of an error's details (ErrorInfo metadata).
MAX_DETAIL_BYTES = 256
CUT = "…"


def quoted(value: object, limit: int = QUOTE_CHARS) -> str:
    """`value` as text, for an error to name it: at most its first `limit` characters, and
    "…" when it was longer (a cut between characters, never inside one)."""
    text = str(value)
    return text if len(text) <= limit else text[:limit] + CUT


def bounded(text: str, max_bytes: int) -> str:
    """`text` cut to at most `max_bytes` bytes of UTF-8, "…" included, on a character
    boundary."""
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, which no protobuf string may hold
        text = text.encode("utf-8", "replace").decode("utf-8")
        encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    room = max_bytes - len(CUT.encode())
    return encoded[:room].decode("utf-8", "ignore") + CUT


def reason_code(text: str) -> ReasonCode:
    """`text` as a reason of the catalogue (protos/shikoku/v1/reasons.proto), for a reason made
    at run time (MISSING_ + a field's name, ROUTE_ + a route's violation); ValueError when the
    catalogue lacks it, so that no refusal leaves with a reason clients cannot look up."""
    if text not in REASON_CODES:
        raise ValueError(f"{text!r} is not a reason of protos/shikoku/v1/reasons.proto")
    return cast(ReasonCode, str(text))


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
        reason: ReasonCode,
        message: str,
        kind: Kind = Kind.FAILED_PRECONDITION,
        details: Mapping[str, object] | None = None,
        retry_after: timedelta | None = None,
    ) -> None:
        message = bounded(message, MAX_MESSAGE_BYTES)
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.kind = kind
        self.details = {
            key: bounded(str(value), MAX_DETAIL_BYTES) for key, value in (details or {}).items()
        }
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"Rejected({self.reason!r}, {self.message!r})"
