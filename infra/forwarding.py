"""Passing a call on to an upstream service, with its credential, deadline and errors intact;
and a whole service served that way, built from its descriptor (`service_handlers`)."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from grpc_status import rpc_status

from infra.grpc_types import Context

Req = TypeVar("Req")
Resp = TypeVar("Resp")

DEFAULT_DEADLINE_SECONDS = 10.0
#: Calls whose work grows with what they are given, bound longer (the caller's own deadline,
#: when shorter, still holds): StartRound creates and starts every table of a round, and a
#: round of a thousand tables takes more than ten seconds.
LONG_CALL_SECONDS = {"/shikoku.v1.LobbyService/StartRound": 300.0}

#: A method's behaviour as grpc.aio calls it: (request, context) -> a response, or an async
#: iterator of responses. `Any` at this seam only: the servicers' own methods stay typed.
Behaviour = Callable[[Any, Context], Any]


def _forwarded_metadata(
    context: Context,
) -> tuple[tuple[str, str], ...]:
    return tuple(
        (key, value)
        for key, value in context.invocation_metadata() or ()
        if key == "authorization" and isinstance(value, str)
    )


def _timeout(context: Context, bound: float) -> float:
    remaining = context.time_remaining()
    return bound if remaining is None else min(remaining, bound)


async def forward(
    call: Callable[..., Awaitable[Resp]],
    request: Req,
    context: Context,
    bound: float = DEFAULT_DEADLINE_SECONDS,
) -> Resp:
    """Calls `call(request)` upstream within `bound` seconds (or the caller's deadline, if
    sooner); an upstream error ends this call with the same status, message and rich error
    details."""
    timeout = _timeout(context, bound)
    try:
        return await call(request, metadata=_forwarded_metadata(context), timeout=timeout)
    except grpc.aio.AioRpcError as error:
        await relay_error(error, context)
        raise


async def forward_stream(
    call: Callable[..., grpc.aio.UnaryStreamCall[Req, Resp]],
    request: Req,
    context: Context,
) -> AsyncIterator[Resp]:
    """Streams `call(request)` from upstream message by message, within the caller's own
    deadline only (a stream has none of its own); an upstream error ends this call as in
    `forward`, and this call ending first (the caller gone) cancels the upstream one."""
    responses = call(
        request, metadata=_forwarded_metadata(context), timeout=context.time_remaining()
    )
    try:
        async for response in responses:
            yield response
    except grpc.aio.AioRpcError as error:
        await relay_error(error, context)
        raise
    finally:
        responses.cancel()


async def relay_error(error: grpc.aio.AioRpcError, context: Context) -> None:
    try:
        status = rpc_status.from_call(error)
    except ValueError:
        # Details whose code is not the call's (trailers cut on the way, a foreign upstream):
        # the call's own code and message are still the truth; an UNKNOWN would not be.
        status = None
    if status is not None:
        await context.abort_with_status(rpc_status.to_status(status))
    await context.abort(error.code(), error.details() or "")


def passed_on(upstream: grpc.aio.Channel, method: MethodDescriptor) -> Any:
    """A unary `method` of `upstream` whose answer comes back as the bytes it was sent in, to be
    answered on as they are (`service_handlers` serves bytes unchanged): a gateway that only
    relays an answer need not decode it and encode it again."""
    path = f"/{method.containing_service.full_name}/{method.name}"
    request = message_factory.GetMessageClass(method.input_type)
    return upstream.unary_unary(path, request.SerializeToString, None)


def _serializer(message_class: Any) -> Callable[[Any], bytes]:
    """Encodes a response message; a response already in bytes (`passed_on`) goes as it is."""
    encode = message_class.SerializeToString

    def serialized(response: Any) -> bytes:
        return response if isinstance(response, bytes) else encode(response)

    return serialized


def _forwarder(method: MethodDescriptor, upstream: grpc.aio.Channel) -> Behaviour:
    """`method` passed on to the same method (the same path) at `upstream`: a unary answer
    relayed as its bytes (`passed_on`)."""
    path = f"/{method.containing_service.full_name}/{method.name}"
    request = message_factory.GetMessageClass(method.input_type)
    response = message_factory.GetMessageClass(method.output_type)
    serializers: dict[str, Any] = {
        "request_serializer": request.SerializeToString,
        "response_deserializer": response.FromString,
    }
    if method.server_streaming:
        stream: Any = upstream.unary_stream(path, **serializers)

        async def streamed(request: Any, context: Context) -> AsyncIterator[Any]:
            async for message in forward_stream(stream, request, context):
                yield message

        return streamed
    call = passed_on(upstream, method)
    bound = LONG_CALL_SECONDS.get(path, DEFAULT_DEADLINE_SECONDS)

    async def unary(request: Any, context: Context) -> Any:
        return await forward(call, request, context, bound)

    return unary


def service_handlers(
    service: ServiceDescriptor, servicer: object = None, upstream: grpc.aio.Channel | None = None
) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
    """A handler for every method of `service`, by method name: the servicer's method of the
    same name where its class defines one (an override: a method that adds policy), else the
    call forwarded to the same method at `upstream`. A method with neither, or an override
    that streams where the method does not (or the other way), fails here, when the server is
    built, rather than at its first call. The API has no client-streaming methods."""
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    unserved: list[str] = []
    for method in service.methods:
        name = f"{service.full_name}/{method.name}"
        if method.client_streaming:
            raise TypeError(f"{name}: client streaming is not forwarded")
        own: Behaviour | None = getattr(servicer, method.name, None)
        if own is not None:
            streams = inspect.isasyncgenfunction(own)
            if streams != method.server_streaming or not (
                streams or inspect.iscoroutinefunction(own)
            ):
                kind = "an async generator" if method.server_streaming else "a coroutine"
                raise TypeError(f"{name}: {type(servicer).__name__}.{method.name} must be {kind}")
            behaviour = own
        elif upstream is not None:
            behaviour = _forwarder(method, upstream)
        else:
            unserved.append(name)
            continue
        serializers: dict[str, Any] = {
            "request_deserializer": message_factory.GetMessageClass(method.input_type).FromString,
            "response_serializer": _serializer(message_factory.GetMessageClass(method.output_type)),
        }
        handlers[method.name] = (
            grpc.unary_stream_rpc_method_handler(behaviour, **serializers)
            if method.server_streaming
            else grpc.unary_unary_rpc_method_handler(behaviour, **serializers)
        )
    if unserved:
        raise LookupError(f"neither served here nor forwarded anywhere: {', '.join(unserved)}")
    return handlers


def add_service(
    server: grpc.aio.Server,
    service: ServiceDescriptor,
    servicer: object = None,
    upstream: grpc.aio.Channel | None = None,
) -> None:
    """Serves `service` on `server` (as its generated `add_..._to_server` would) with
    `service_handlers`; the server's interceptors apply to its every method alike."""
    handlers = service_handlers(service, servicer, upstream)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),)
    )
    server.add_registered_method_handlers(service.full_name, handlers)
