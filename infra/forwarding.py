"""Passing a call on to an upstream service, with its credential, deadline and errors intact."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc
from grpc_status import rpc_status

from infra.grpc_types import Context

Req = TypeVar("Req")
Resp = TypeVar("Resp")

DEFAULT_DEADLINE_SECONDS = 10.0


def _forwarded_metadata(
    context: Context,
) -> tuple[tuple[str, str], ...]:
    return tuple(
        (key, value)
        for key, value in context.invocation_metadata() or ()
        if key == "authorization" and isinstance(value, str)
    )


def _timeout(context: Context) -> float:
    remaining = context.time_remaining()
    return (
        DEFAULT_DEADLINE_SECONDS if remaining is None else min(remaining, DEFAULT_DEADLINE_SECONDS)
    )


async def forward(
    call: Callable[..., Awaitable[Resp]],
    request: Req,
    context: Context,
) -> Resp:
    """Calls `call(request)` upstream; an upstream error ends this call with the same status,
    message and rich error details."""
    try:
        return await call(request, metadata=_forwarded_metadata(context), timeout=_timeout(context))
    except grpc.aio.AioRpcError as error:
        await relay_error(error, context)
        raise


async def relay_error(error: grpc.aio.AioRpcError, context: Context) -> None:
    try:
        status = rpc_status.from_call(error)  # type: ignore[arg-type]
    except ValueError:
        # Details whose code is not the call's (trailers cut on the way, a foreign upstream):
        # the call's own code and message are still the truth; an UNKNOWN would not be.
        status = None
    if status is not None:
        await context.abort_with_status(  # type: ignore[attr-defined]  # grpc-stubs lags grpc.aio
            rpc_status.to_status(status)
        )
    await context.abort(error.code(), error.details() or "")
