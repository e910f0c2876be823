"""A service served from its descriptor (`infra.forwarding.add_service`), on real gRPC servers on
loopback: a method the servicer defines wins, every other is forwarded to the same method
upstream (unary and streaming, with the caller's credential, errors intact, a stream cancelled
upstream when its caller goes), and a method that nothing serves stops the server being built."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from grpc_status import rpc_status

from gateway.public_api import public_services
from infra.call_chain import FailuresAsStatus
from infra.forwarding import add_service, service_handlers
from infra.grpc_types import Context
from kernel.rejection import Kind, Rejected
from shikoku.v1 import game_pb2, game_pb2_grpc
from shikoku_dev.redis_server import free_port

pytestmark = pytest.mark.io

GAME_SERVICE = game_pb2.DESCRIPTOR.services_by_name["GameService"]
NOT_OVERRIDDEN = ["SubmitCommand", "ListLegalActions", "StreamEvents", "WatchGame"]


class Upstream(game_pb2_grpc.GameServiceServicer):
    """Answers every GameService method with what it was sent, so the tests see who answered."""

    def __init__(self) -> None:
        self.stream_ended = asyncio.Event()

    async def GetState(self, request: game_pb2.GetStateRequest, context: Any) -> game_pb2.GameState:
        return game_pb2.GameState(game_id=f"upstream {request.game_id}")

    async def ListLegalActions(
        self, request: game_pb2.ListLegalActionsRequest, context: Any
    ) -> game_pb2.ListLegalActionsResponse:
        credential = dict(context.invocation_metadata()).get("authorization", "")
        return game_pb2.ListLegalActionsResponse(next_page_token=credential)

    async def SubmitCommand(
        self, request: game_pb2.SubmitCommandRequest, context: Any
    ) -> game_pb2.SubmitCommandResponse:
        raise Rejected("GAME_NOT_FOUND", "no such game", Kind.NOT_FOUND, {"game_id": "g"})

    async def StreamEvents(
        self, request: game_pb2.StreamEventsRequest, context: Any
    ) -> AsyncIterator[game_pb2.GameEvent]:
        try:
            for version in (1, 2):
                yield game_pb2.GameEvent(game_id=request.game_id, version=version)
            if request.from_version == 0:
                raise Rejected("TOO_MANY_STREAMS", "enough", Kind.RESOURCE_EXHAUSTED)
            await asyncio.sleep(60)  # stays open until the caller goes
        finally:
            self.stream_ended.set()

    async def WatchGame(
        self, request: game_pb2.WatchGameRequest, context: Any
    ) -> AsyncIterator[game_pb2.WatchGameResponse]:
        yield game_pb2.WatchGameResponse(heartbeat=game_pb2.Heartbeat(version=7))


class Overrides:
    """GetState only: the rest of GameService is the upstream's."""

    async def GetState(
        self, request: game_pb2.GetStateRequest, context: Context
    ) -> game_pb2.GameState:
        return game_pb2.GameState(game_id=f"front {request.game_id}")


async def started(server: grpc.aio.Server) -> str:
    address = f"127.0.0.1:{free_port()}"
    server.add_insecure_port(address)
    await server.start()
    return address


@pytest.fixture
async def front() -> AsyncIterator[tuple[game_pb2_grpc.GameServiceAsyncStub, Upstream]]:
    upstream = Upstream()
    behind = grpc.aio.server(interceptors=[FailuresAsStatus()])
    game_pb2_grpc.add_GameServiceServicer_to_server(upstream, behind)
    upstream_channel = grpc.aio.insecure_channel(await started(behind))
    server = grpc.aio.server()
    add_service(server, GAME_SERVICE, Overrides(), upstream_channel)
    channel = grpc.aio.insecure_channel(await started(server))
    yield game_pb2_grpc.GameServiceStub(channel), upstream
    await channel.close(None)
    await server.stop(0)
    await upstream_channel.close(None)
    await behind.stop(0)


async def test_a_method_the_servicer_defines_wins_and_the_others_are_forwarded(
    front: tuple[game_pb2_grpc.GameServiceAsyncStub, Upstream],
) -> None:
    stub, _ = front
    state = await stub.GetState(game_pb2.GetStateRequest(game_id="g"), timeout=5)
    assert state.game_id == "front g"
    actions = await stub.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id="g"),
        metadata=(("authorization", "Bearer seat-1"), ("x-api-key", "not passed on")),
        timeout=5,
    )
    assert actions.next_page_token == "Bearer seat-1"  # the caller's credential went along


async def test_an_upstream_refusal_comes_back_with_its_code_and_reason(
    front: tuple[game_pb2_grpc.GameServiceAsyncStub, Upstream],
) -> None:
    stub, _ = front
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.SubmitCommand(game_pb2.SubmitCommandRequest(game_id="g"), timeout=5)
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    status = rpc_status.from_call(refused.value)
    assert status is not None and b"GAME_NOT_FOUND" in status.SerializeToString()

    events = stub.StreamEvents(game_pb2.StreamEventsRequest(game_id="g"), timeout=5)
    versions = []
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        async for event in events:
            versions.append(event.version)
    assert versions == [1, 2]  # what came before the refusal, then the refusal itself
    assert ended.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_a_forwarded_stream_is_cancelled_upstream_when_its_caller_goes(
    front: tuple[game_pb2_grpc.GameServiceAsyncStub, Upstream],
) -> None:
    stub, upstream = front
    events = stub.StreamEvents(game_pb2.StreamEventsRequest(game_id="g", from_version=1))
    first = await events.read()
    assert isinstance(first, game_pb2.GameEvent) and first.version == 1
    assert not upstream.stream_ended.is_set()
    events.cancel()
    # Upstream it would stay open a minute; it ends as soon as the cancellation arrives.
    await asyncio.wait_for(upstream.stream_ended.wait(), timeout=10)


def test_a_method_nothing_serves_stops_the_server_being_built() -> None:
    with pytest.raises(LookupError) as refused:
        service_handlers(GAME_SERVICE, Overrides(), upstream=None)
    named = str(refused.value).partition(": ")[2].split(", ")
    assert named == [f"shikoku.v1.GameService/{name}" for name in NOT_OVERRIDDEN]


class StreamsWhereItShouldNot:
    async def GetState(
        self, request: game_pb2.GetStateRequest, context: Context
    ) -> AsyncIterator[game_pb2.GameState]:
        yield game_pb2.GameState()


async def test_an_override_must_stream_exactly_where_its_method_does() -> None:
    # An aio channel needs the running loop: a synchronous test found one only when an
    # earlier test in its process had left one behind.
    channel = grpc.aio.insecure_channel("127.0.0.1:1")
    with pytest.raises(TypeError, match="GetState must be a coroutine"):
        service_handlers(GAME_SERVICE, StreamsWhereItShouldNot(), channel)


async def test_every_public_method_is_served_with_its_own_serializers_and_kind() -> None:
    channel = grpc.aio.insecure_channel("127.0.0.1:1")
    for service in public_services():
        handlers = service_handlers(service, None, channel)
        assert sorted(handlers) == sorted(method.name for method in service.methods)
        for method in service.methods:
            handler = handlers[method.name]
            streams = handler.unary_stream is not None
            assert streams == method.server_streaming, method.full_name
            assert handler.request_deserializer is not None
            assert handler.request_deserializer(b"").DESCRIPTOR is method.input_type
