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


def stream_ended() -> ShikokuError:
    """What a stream the server ended counts as (it never does unless shutting down): a
    failure to reconnect after."""
    return ShikokuError(grpc.StatusCode.UNAVAILABLE, "the stream ended")


def new_id() -> str:
    """A fresh request or command id: retries of one call reuse it, so it takes effect once."""
    return str(uuid.uuid4())


def retry_after(retry: bool, error: ShikokuError, attempt: int, attempts: int) -> float | None:
    """Seconds to wait before sending a call again after its attempt `attempt` (of at most
    `attempts`) failed with `error`, or None to give up and raise it: never for a call that is
    not retried (`retry` false), nor after the last attempt or a failure not worth retrying."""
    if not retry or not worth_retrying(error) or attempt >= attempts:
        return None
    return backoff(attempt, error)


def reconnect_after(error: ShikokuError, failures: int, limit: int) -> float | None:
    """Seconds to wait before opening a broken stream again after its `failures`-th failure in
    a row (`error`), or None to give up and raise it (a refusal, or more than `limit` failures).
    The first reconnection is at once: a dropped connection is usually just that."""
    if error.code not in WATCH_RECONNECT or failures > limit:
        return None
    return backoff(failures, error) if failures > 1 else 0.0
