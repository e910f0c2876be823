"""One place that turns failures into proper gRPC statuses, for every service (the call
chain, `infra.call_chain`, ends every call with them).

A `Rejected` that a handler lets escape ends the call with its status and ErrorInfo; a write
that lost a race (VersionConflict) ends it with FAILED_PRECONDITION CONTENDED; a Redis that
cannot be reached ends it at once with UNAVAILABLE (reason STORE_UNAVAILABLE), so clients
retry instead of hanging.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias

import grpc
from redis.exceptions import (
    AskError,
    ClusterError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisClusterException,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from infra.eventstore import NotReplicated, VersionConflict
from infra.grpc_errors import to_status
from infra.grpc_types import Context
from kernel.rejection import Kind, Rejected

# Redis down, or a Redis Cluster in the middle of a failover or resharding (a master lost, its
# slots not yet taken over; a stale slot map the client could not refresh in its retries).
STORE_DOWN = (
    RedisConnectionError,
    RedisTimeoutError,
    ConnectionError,
    OSError,
    ClusterError,
    RedisClusterException,
    TryAgainError,
    AskError,
    ReadOnlyError,
)


def as_rejected(error: BaseException) -> Rejected | None:
    if isinstance(error, Rejected):
        return error
    if isinstance(error, VersionConflict):
        return Rejected(
            "CONTENDED", "someone else changed it at the same moment; try again", Kind.ABORTED
        )
    if isinstance(error, NotReplicated):
        return Rejected(
            "NOT_REPLICATED",
            "the store could not confirm the write on a replica in time; retry with the same "
            "command id",
            Kind.UNAVAILABLE,
        )
    if isinstance(error, OutOfMemoryError):
        return Rejected(
            "STORE_FULL", "the game store is out of memory; retry later", Kind.RESOURCE_EXHAUSTED
        )
    if isinstance(error, STORE_DOWN):
        return Rejected(
            "STORE_UNAVAILABLE",
            "the game store cannot be reached; retry shortly",
            Kind.UNAVAILABLE,
        )
    return None


Behaviour: TypeAlias = Callable[[Any, Any], Any]
Continuation: TypeAlias = (
    "Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]]"
)


def rewrap(
    handler: grpc.RpcMethodHandler[Any, Any],
    unary: Callable[[Behaviour], Behaviour],
    streaming: Callable[[Behaviour], Behaviour],
    decodes: bool = False,
) -> grpc.RpcMethodHandler[Any, Any]:
    """`handler` with its behaviour wrapped: by `unary` for calls answered once, by
    `streaming` for calls that stream their answers; `decodes`: the wrapper is handed the
    request's bytes and decodes them itself."""
    serializers = {
        "request_deserializer": None if decodes else handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(unary(handler.unary_unary), **serializers)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(unary(handler.stream_unary), **serializers)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(streaming(handler.unary_stream), **serializers)
    if handler.stream_stream is not None:
        return grpc.stream_stream_rpc_method_handler(
            streaming(handler.stream_stream), **serializers
        )
    return handler


async def end_call(error: Exception, context: Context) -> None:
    """Ends the call with the status `error` stands for; an error that is no refusal goes on."""
    rejection = as_rejected(error)
    if rejection is None:
        raise error
    await context.abort_with_status(to_status(rejection))


async def streamed(behaviour: Behaviour, request: Any, context: Context) -> AsyncIterator[Any]:
    """A streaming handler's messages, whichever way it streams: an async generator yields
    them; a coroutine writes them itself with `context.write` (as the health service's Watch
    does) and yields nothing here."""
    answer = behaviour(request, context)
    if inspect.isawaitable(answer):
        await answer
        return
    async for item in answer:
        yield item
