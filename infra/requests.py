"""Requests checked before any handler sees them: bytes that are no message of the method's
request type, and strings over their documented length, are refused as INVALID_ARGUMENT with a
BadRequest naming the field, in every service.

gRPC decodes a request before any interceptor runs, and a message it cannot decode ends the call
as UNKNOWN with nothing said; so this interceptor, the outermost of every server, takes the
bytes as they came, decodes them itself and hands the message on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from infra import calls
from infra.grpc_types import Context
from infra.interceptors import Behaviour, Continuation, end_call, streamed
from infra.rejection import Kind, Rejected

#: Longest id (any string field named `*_id`, a token or a credential) a request may carry.
MAX_ID_CHARS = 128
#: Longest of any other string field (names, free text).
MAX_TEXT_CHARS = 1_000
ID_SUFFIXES = ("_id", "token", "credential")

Decode = Callable[[bytes], Any]


def oversized(message: Message, prefix: str = "") -> Rejected | None:
    """The first string field of `message` (nested messages and lists included) longer than
    its limit, as a refusal naming it."""
    for field, value in message.ListFields():
        name = f"{prefix}{field.name}"
        repeated = field.is_repeated
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                continue
            children = value if repeated else [value]
            for index, child in enumerate(children):
                where = f"{name}[{index}]." if repeated else f"{name}."
                if (found := oversized(child, where)) is not None:
                    return found
        elif field.type == FieldDescriptor.TYPE_STRING:
            limit = MAX_ID_CHARS if field.name.endswith(ID_SUFFIXES) else MAX_TEXT_CHARS
            values = value if repeated else [value]
            if any(len(text) > limit for text in values):
                return Rejected(
                    "FIELD_TOO_LONG",
                    f"{name} is at most {limit} characters",
                    Kind.INVALID_ARGUMENT,
                    {"field": name, "limit": limit},
                )
    return None


def decoded(raw: bytes, decode: Decode) -> Any:
    try:
        message = decode(raw)
    except (DecodeError, ValueError, TypeError):
        raise Rejected(
            "UNDECODABLE_REQUEST",
            "the request is not a valid message of this method's type",
            Kind.INVALID_ARGUMENT,
            {"field": ""},
        ) from None
    if isinstance(message, Message) and (refusal := oversized(message)) is not None:
        raise refusal
    return message


class DecodesRequests(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    async def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any]:
        handler = await continuation(details)
        decode = handler.request_deserializer if handler is not None else None
        if handler is None or decode is None:
            return handler
        codec = {"request_deserializer": None, "response_serializer": handler.response_serializer}
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(_unary(handler.unary_unary, decode), **codec)
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                _streaming(handler.unary_stream, decode), **codec
            )
        return handler  # a client-streaming method decodes each message as gRPC does


def _unary(behaviour: Behaviour, decode: Decode) -> Behaviour:
    async def call(raw: bytes, context: Context) -> Any:
        try:
            request = decoded(raw, decode)
        except Rejected as refusal:
            await end_call(refusal, context)
        calls.note_request(request)
        return await behaviour(request, context)

    return call


def _streaming(behaviour: Behaviour, decode: Decode) -> Behaviour:
    async def call(raw: bytes, context: Context) -> Any:
        try:
            request = decoded(raw, decode)
        except Rejected as refusal:
            await end_call(refusal, context)
        calls.note_request(request)
        async for item in streamed(behaviour, request, context):
            yield item

    return call
