"""Calling the public gRPC gateway for a browser: with its credentials, its API key and its
address, within its deadline, and with the gateway's answer or error passed back intact.

The web entrypoint decides nothing about access: the gateway checks the key, the credential,
the access rule and the rate limit of every call exactly as for a gRPC client. The channel
carries the deployment's token (`infra.config.service_channel`), which is what lets the gateway
trust the `x-forwarded-for` set here, so each browser has a rate-limit bucket of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeVar

import grpc
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext

from gateway.web.errors import connect_error, refusal, retry_after_seconds, status_of

Req = TypeVar("Req")
Resp = TypeVar("Resp")
Context = RequestContext[Any, Any]

#: Request headers passed on to the gateway as call metadata.
FORWARDED_HEADERS = ("authorization", "x-api-key")
#: Longest forwarded header value: far beyond any key or token, well within gRPC's metadata limit.
MAX_HEADER_CHARS = 1024
#: Unary calls get at most this long (the gateway caps its own calls at the same).
UNARY_DEADLINE_SECONDS = 10.0


def call_metadata(ctx: Context) -> tuple[tuple[str, str], ...]:
    """What the gateway sees of the browser: its credential and key, and the address it
    connected from (any `X-Forwarded-For` it sent is not passed on: it could be made up)."""
    forwarded: list[tuple[str, str]] = []
    for name in FORWARDED_HEADERS:
        value = ctx.request_headers.get(name)
        if value is None:
            continue
        if len(value) > MAX_HEADER_CHARS:
            raise refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                "HEADER_TOO_LONG",
                f"the {name} header is at most {MAX_HEADER_CHARS} characters",
                {"header": name, "limit": str(MAX_HEADER_CHARS)},
                field=name,
            )
        if not (value.isascii() and value.isprintable()):
            raise refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                "BAD_HEADER",
                f"the {name} header must be printable ASCII",
                {"header": name},
                field=name,
            )
        forwarded.append((name, value))
    peer = (ctx.client_address or "").rpartition(":")[0].strip("[]")
    return (*forwarded, ("x-forwarded-for", peer)) if peer else tuple(forwarded)


def _timeout(ctx: Context, cap: float | None) -> float | None:
    """The browser's own deadline (`connect-timeout-ms`, `grpc-timeout`), within `cap`."""
    remaining = ctx.timeout_ms
    if remaining is None:
        return cap
    seconds = max(remaining, 0.0) / 1000
    return seconds if cap is None else min(seconds, cap)


def relayed(error: grpc.aio.AioRpcError, ctx: Context) -> ConnectError:
    """The gateway's error as the browser's: code, message and details; a RetryInfo also as
    `Retry-After` (whole seconds), for clients that read only HTTP."""
    status = status_of(error)
    if (seconds := retry_after_seconds(status)) is not None:
        ctx.response_headers["retry-after"] = str(seconds)
    return connect_error(status)


async def unary(
    call: grpc.aio.UnaryUnaryMultiCallable[Req, Resp],
    request: Req,
    ctx: Context,
    cap: float = UNARY_DEADLINE_SECONDS,
) -> Resp:
    try:
        return await call(request, metadata=call_metadata(ctx), timeout=_timeout(ctx, cap))
    except grpc.aio.AioRpcError as error:
        raise relayed(error, ctx) from None


async def stream(
    call: grpc.aio.UnaryStreamMultiCallable[Req, Resp], request: Req, ctx: Context
) -> AsyncIterator[Resp]:
    """The gateway's stream, message by message as they come; it has no deadline unless the
    browser set one. When the browser goes away, the Connect server closes this generator and
    the upstream call is cancelled with it."""
    responses = call(request, metadata=call_metadata(ctx), timeout=_timeout(ctx, None))
    try:
        async for response in responses:
            yield response
    except grpc.aio.AioRpcError as error:
        raise relayed(error, ctx) from None
    finally:
        responses.cancel()
