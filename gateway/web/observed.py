"""Every call the web entrypoint serves, seen once, as the gRPC servers see theirs
(`infra.call_chain`): a Connect interceptor makes its `Call` and hands it to the same
observers (metrics, the access log, the span), with the Connect code in gRPC's spelling and
our reason from the error's ErrorInfo.

The API key id is the one the browser sent (`k-<id>`, never the secret after the dot): the
web entrypoint checks no key, the gateway does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from google.rpc import error_details_pb2

from gateway.api_keys import API_KEY_HEADER, KEY_PREFIX, SEPARATOR
from infra import calls, tracing
from infra.calls import Call, Observer

Context = RequestContext[Any, Any]
ERROR_INFO = error_details_pb2.ErrorInfo.DESCRIPTOR.full_name
#: Longest key id written (ids are `k-` and 12 hex digits).
MAX_KEY_ID = 32


def sent_key_id(ctx: Context) -> str:
    key = ctx.request_headers.get(API_KEY_HEADER) or ""
    key_id, separator, _secret = key.partition(SEPARATOR)
    if separator and key_id.startswith(KEY_PREFIX) and len(key_id) <= MAX_KEY_ID:
        return key_id
    return ""


def outcome(error: BaseException | None) -> tuple[str, str]:
    """The gRPC name of the code the call ended with, and our reason."""
    if error is None:
        return calls.OK, ""
    if isinstance(error, asyncio.CancelledError | GeneratorExit):
        return "CANCELLED", ""
    if not isinstance(error, ConnectError):
        return "UNKNOWN", ""
    code = "CANCELLED" if error.code == Code.CANCELED else error.code.name
    for detail in error.details:
        if detail.type_name == ERROR_INFO:
            return code, str(error_details_pb2.ErrorInfo.FromString(detail.message_bytes).reason)
    return code, ""


def method_of(ctx: Context) -> str:
    """The method as gRPC names it, `/shikoku.v1.GameService/SubmitCommand`."""
    return f"/{ctx.method.service_name}/{ctx.method.name}"


def _trace_headers(ctx: Context) -> dict[str, str]:
    return {
        name: value
        for name in ("traceparent", "tracestate")
        if (value := ctx.request_headers.get(name)) is not None
    }


class ObservesWebCalls:
    """A Connect interceptor of unary and server-streaming methods."""

    def __init__(self, observers: Sequence[Observer]) -> None:
        self._observers = tuple(observers)

    def _begin(self, request: Any, ctx: Context, streaming: bool) -> Call:
        call = calls.begin(Call(method_of(ctx), streaming))
        call.request, call.api_key_id = request, sent_key_id(ctx)
        for observer in self._observers:
            observer.started(call)
        return call

    def _end(self, call: Call, error: BaseException | None) -> None:
        call.end(*outcome(error))
        for observer in self._observers:
            observer.ended(call)

    async def intercept_unary(
        self, call_next: Callable[[Any, Context], Awaitable[Any]], request: Any, ctx: Context
    ) -> Any:
        with tracing.server_span(method_of(ctx).lstrip("/"), _trace_headers(ctx)):
            call = self._begin(request, ctx, streaming=False)
            error: BaseException | None = None
            try:
                return await call_next(request, ctx)
            except BaseException as raised:
                error = raised
                raise
            finally:
                self._end(call, error)

    async def intercept_server_stream(
        self, call_next: Callable[[Any, Context], AsyncIterator[Any]], request: Any, ctx: Context
    ) -> AsyncIterator[Any]:
        with tracing.server_span(method_of(ctx).lstrip("/"), _trace_headers(ctx)):
            call = self._begin(request, ctx, streaming=True)
            error: BaseException | None = None
            try:
                async for response in call_next(request, ctx):
                    yield response
            except BaseException as raised:
                error = raised
                raise
            finally:
                self._end(call, error)
