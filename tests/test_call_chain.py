"""The one interceptor every server runs (infra.call_chain), on a real grpc.aio server over
loopback: each call observed once with how it ended, the request decoded before any admission
sees it, admissions in order (health checks free), a method's handler wrapped once, and a
chain inside another refused rather than handed undecodable bytes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

import grpc
import pytest
from google.protobuf import wrappers_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer

from infra.call_chain import Admission, CallChain
from infra.calls import Call
from kernel.rejection import Kind, Rejected
from shikoku_dev.redis_server import free_port
from shikoku_sdk.errors import ShikokuError

ECHO = "/test.Echo/Say"


class Recorded:
    """An observer that keeps what it was told."""

    def __init__(self) -> None:
        self.began: list[str] = []
        self.finished: list[tuple[str, str, str]] = []

    def started(self, call: Call) -> None:
        self.began.append(call.method)

    def ended(self, call: Call) -> None:
        self.finished.append((call.method, call.code, call.reason))


class Refuses(Admission):
    """Refuses the word it is given; records what it saw, in order with the others."""

    def __init__(self, word: str, seen: list[tuple[str, str]]) -> None:
        self.word = word
        self.seen = seen

    async def admit(self, method: str, request: Any, context: Any) -> None:
        self.seen.append((self.word, request.value))
        if request.value == self.word:
            raise Rejected("NOT_A_SEAT", f"not {self.word}", Kind.PERMISSION_DENIED)


async def say(request: wrappers_pb2.StringValue, context: Any) -> wrappers_pb2.StringValue:
    return request


def echo_handler() -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(
        "test.Echo",
        {
            "Say": grpc.unary_unary_rpc_method_handler(
                say,
                request_deserializer=wrappers_pb2.StringValue.FromString,
                response_serializer=wrappers_pb2.StringValue.SerializeToString,
            )
        },
    )


async def serving(*interceptors: Any) -> tuple[grpc.aio.Server, grpc.aio.Channel]:
    server = grpc.aio.server(interceptors=list(interceptors))
    server.add_generic_rpc_handlers((echo_handler(),))
    health_pb2_grpc.add_HealthServicer_to_server(HealthServicer(), server)
    address = f"127.0.0.1:{free_port()}"
    server.add_insecure_port(address)
    await server.start()
    return server, grpc.aio.insecure_channel(address)


@pytest.fixture
async def chain() -> AsyncIterator[tuple[grpc.aio.Channel, Recorded, list[tuple[str, str]]]]:
    recorded, seen = Recorded(), list[tuple[str, str]]()
    server, channel = await serving(
        CallChain([recorded], [Refuses("first", seen), Refuses("second", seen)])
    )
    yield channel, recorded, seen
    await channel.close(None)
    await server.stop(None)


async def call(channel: grpc.aio.Channel, payload: bytes) -> str:
    say_raw: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(ECHO, None, None)
    try:
        await say_raw(payload)
    except grpc.aio.AioRpcError as error:
        refused = ShikokuError.from_rpc_error(error)
        return f"{refused.code.name} {refused.reason}"
    return "OK"


async def test_a_call_is_decoded_admitted_in_order_and_observed_once(
    chain: tuple[grpc.aio.Channel, Recorded, list[tuple[str, str]]],
) -> None:
    channel, recorded, seen = chain
    word = wrappers_pb2.StringValue

    assert await call(channel, word(value="hello").SerializeToString()) == "OK"
    assert await call(channel, word(value="second").SerializeToString()) == (
        "PERMISSION_DENIED NOT_A_SEAT"
    )
    assert await call(channel, word(value="first").SerializeToString()) == (
        "PERMISSION_DENIED NOT_A_SEAT"
    )
    assert await call(channel, b"\xff\xff") == "INVALID_ARGUMENT UNDECODABLE_REQUEST"
    # Decoded before the admissions saw it; the second never sees what the first refused.
    assert seen == [
        ("first", "hello"),
        ("second", "hello"),
        ("first", "second"),
        ("second", "second"),
        ("first", "first"),
    ]
    assert recorded.began == [ECHO] * 4
    assert recorded.finished == [
        (ECHO, "OK", ""),
        (ECHO, "PERMISSION_DENIED", "NOT_A_SEAT"),
        (ECHO, "PERMISSION_DENIED", "NOT_A_SEAT"),
        (ECHO, "INVALID_ARGUMENT", "UNDECODABLE_REQUEST"),
    ]
    # Health checks are free of the admissions, and observed as any call.
    health = health_pb2_grpc.HealthStub(channel)
    answer = await health.Check(health_pb2.HealthCheckRequest())
    assert answer.status == health_pb2.HealthCheckResponse.SERVING
    assert len(seen) == 5 and recorded.finished[-1][1] == "OK"


class Details:
    """What grpc.aio hands an interceptor of a call to ECHO."""

    method = ECHO
    invocation_metadata = ()


async def test_a_method_is_wrapped_once() -> None:
    chain = CallChain()
    handler: grpc.RpcMethodHandler[Any, Any] = grpc.unary_unary_rpc_method_handler(say)
    details = Details()

    async def continuation(_: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[Any, Any]:
        return handler

    first = await chain.intercept_service(continuation, cast(grpc.HandlerCallDetails, details))
    assert (
        await chain.intercept_service(continuation, cast(grpc.HandlerCallDetails, details)) is first
    )


async def test_a_chain_inside_another_is_refused() -> None:
    outer, inner = CallChain(), CallChain()
    handler: grpc.RpcMethodHandler[Any, Any] = grpc.unary_unary_rpc_method_handler(say)
    details = Details()

    async def raw(_: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[Any, Any]:
        return handler

    async def through_inner(d: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[Any, Any] | None:
        return await inner.intercept_service(raw, d)

    with pytest.raises(TypeError, match="one CallChain"):
        await outer.intercept_service(through_inner, cast(grpc.HandlerCallDetails, details))
