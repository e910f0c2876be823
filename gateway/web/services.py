"""The public API's services for Connect, built from their descriptors: every method of every
service of `shikoku.v1` passed on to the same method of the gRPC gateway (`gateway.web.upstream`),
which decides everything about it. Each service is served by its generated Connect application
(`shikoku/server/*_connect.py`), so the paths, codecs and stream types are the generated code's;
a method added to a proto is served here without a line changed."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

import grpc
from connectrpc.server import ConnectASGIApplication
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor

from gateway.web.upstream import UNARY_DEADLINE_SECONDS, Context, stream, unary
from infra.forwarding import LONG_CALL_SECONDS

#: A Connect endpoint's function: (request, context) -> an awaitable response, or an async
#: iterator of responses. `Any` at this seam only: what it passes on is the gateway's to check.
Function = Callable[[Any, Context], Any]


def connect_name(method: str) -> str:
    """The name the generated Connect code gives a method: `ListLegalActions` is
    `list_legal_actions`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", method).lower()


def _generated(service: ServiceDescriptor) -> Any:
    """The module protoc-gen-connectrpc made of `service`'s proto file."""
    stem = service.file.name.rpartition("/")[2].removesuffix(".proto")
    return importlib.import_module(f"shikoku.server.{stem}_connect")


def _forwarder(method: MethodDescriptor, channel: grpc.aio.Channel) -> Function:
    path = f"/{method.containing_service.full_name}/{method.name}"
    serializers: dict[str, Any] = {
        "request_serializer": message_factory.GetMessageClass(method.input_type).SerializeToString,
        "response_deserializer": message_factory.GetMessageClass(method.output_type).FromString,
    }
    if method.server_streaming:
        streamed: Any = channel.unary_stream(path, **serializers)
        return lambda request, ctx: stream(streamed, request, ctx)
    call: Any = channel.unary_unary(path, **serializers)
    cap = LONG_CALL_SECONDS.get(path, UNARY_DEADLINE_SECONDS)

    async def answered(request: Any, ctx: Context) -> Any:
        return await unary(call, request, ctx, cap)

    return answered


class Forwarder:
    """One public service as its generated Connect Protocol declares it: each method, under the
    Protocol's name for it, passed on to the same method of the gateway. A method a subclass
    defines wins over the generated one."""

    def __init__(self, service: ServiceDescriptor, channel: grpc.aio.Channel) -> None:
        protocol = getattr(_generated(service), service.name)
        for method in service.methods:
            name = connect_name(method.name)
            if not callable(getattr(protocol, name, None)):
                raise LookupError(f"{service.full_name}/{method.name}: no {name} in its Protocol")
            if not hasattr(type(self), name):
                setattr(self, name, _forwarder(method, channel))


def connect_application(
    service: ServiceDescriptor,
    channel: grpc.aio.Channel,
    forwarder: type[Forwarder] = Forwarder,
    **options: Any,
) -> ConnectASGIApplication[Any]:
    """`service`'s generated Connect application on a `forwarder` of it to the gateway."""
    application = getattr(_generated(service), f"{service.name}ASGIApplication")
    built: ConnectASGIApplication[Any] = application(forwarder(service, channel), **options)
    return built
