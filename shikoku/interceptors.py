"""One place that turns failures into proper gRPC statuses, for every service.

A `Rejected` that a handler lets escape ends the call with its status and ErrorInfo; a write
that lost a race (VersionConflict) ends it with FAILED_PRECONDITION CONTENDED; a Redis that
cannot be reached ends it at once with UNAVAILABLE (reason STORE_UNAVAILABLE), so clients
retry instead of hanging.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from shikoku.eventstore import VersionConflict
from shikoku.grpc_errors import to_status
from shikoku.rejection import Kind, Rejected

STORE_DOWN = (RedisConnectionError, RedisTimeoutError, ConnectionError, OSError)


def as_rejected(error: BaseException) -> Rejected | None:
    if isinstance(error, Rejected):
        return error
    if isinstance(error, VersionConflict):
        return Rejected(
            "CONTENDED", "someone else changed it at the same moment; try again", Kind.ABORTED
        )
    if isinstance(error, STORE_DOWN):
        return Rejected(
            "STORE_UNAVAILABLE",
            "the game store cannot be reached; retry shortly",
            Kind.UNAVAILABLE,
        )
    return None


class FailuresAsStatus(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any]]
        ],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        handler = await continuation(details)
        if handler is None:
            return handler
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                _unary(handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                _streaming(handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


def _unary(behaviour: Any) -> Any:
    async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            return await behaviour(request, context)
        except Exception as error:
            rejection = as_rejected(error)
            if rejection is None:
                raise
            await context.abort_with_status(to_status(rejection))  # type: ignore[attr-defined]

    return call


def _streaming(behaviour: Any) -> Any:
    async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        try:
            async for item in behaviour(request, context):
                yield item
        except Exception as error:
            rejection = as_rejected(error)
            if rejection is None:
                raise
            await context.abort_with_status(to_status(rejection))  # type: ignore[attr-defined]

    return call
