"""When a call is worth trying again, how long to wait, and the ids that make a retry safe."""

from __future__ import annotations

import uuid

import grpc

from shikoku_sdk.errors import ShikokuError

# Worth trying again: the call may not have reached the server, its answer was lost, or it
# lost a race with a concurrent change (ABORTED, which wrote nothing).
TRANSIENT = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.ABORTED}
)
# A watch reconnects after these too (CANCELLED: the connection was dropped, e.g. by us).
WATCH_RECONNECT = TRANSIENT | {grpc.StatusCode.CANCELLED, grpc.StatusCode.RESOURCE_EXHAUSTED}


def worth_retrying(error: ShikokuError) -> bool:
    """Whether the same request may succeed if sent again: a transient failure, or a rate
    limit that said how long to wait."""
    return error.code in TRANSIENT or (
        error.code == grpc.StatusCode.RESOURCE_EXHAUSTED and error.retry_delay is not None
    )


def backoff(attempt: int, error: ShikokuError) -> float:
    """Seconds to wait before attempt `attempt + 1`: what the server asked for, else an
    exponential delay from 0.1 s, at most 5 s."""
    if error.retry_delay is not None:
        return error.retry_delay
    return float(min(0.1 * 2 ** (attempt - 1), 5.0))


def new_id() -> str:
    """A fresh request or command id: retries of one call reuse it, so it takes effect once."""
    return str(uuid.uuid4())
