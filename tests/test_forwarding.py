"""A refusal passed on by a forwarding service (the gateway) keeps its code even when its rich
details do not agree with it: trailers cut on the way, or an upstream that is not ours."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.rpc import code_pb2, status_pb2

from infra.forwarding import forward
from shikoku.v1 import title_pb2, title_pb2_grpc
from shikoku_dev.redis_server import free_port


class Disagreeing(title_pb2_grpc.TitleServiceServicer):
    """Ends with NOT_FOUND, carrying details that say INVALID_ARGUMENT."""

    async def GetTitle(self, request: title_pb2.GetTitleRequest, context: Any) -> title_pb2.Title:
        details = status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message="other")
        await context.abort(
            grpc.StatusCode.NOT_FOUND,
            "no such title",
            trailing_metadata=(("grpc-status-details-bin", details.SerializeToString()),),
        )
        raise AssertionError("abort returns only by raising")


class Forwarding(title_pb2_grpc.TitleServiceServicer):
    def __init__(self, upstream: title_pb2_grpc.TitleServiceAsyncStub) -> None:
        self._upstream = upstream

    async def GetTitle(self, request: title_pb2.GetTitleRequest, context: Any) -> title_pb2.Title:
        return await forward(self._upstream.GetTitle, request, context)


async def started(servicer: title_pb2_grpc.TitleServiceServicer) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server()
    title_pb2_grpc.add_TitleServiceServicer_to_server(servicer, server)
    address = f"127.0.0.1:{free_port()}"
    server.add_insecure_port(address)
    await server.start()
    return server, address


@pytest.fixture
async def forwarder() -> AsyncIterator[str]:
    upstream, upstream_address = await started(Disagreeing())
    channel = grpc.aio.insecure_channel(upstream_address)
    upstream_stub = title_pb2_grpc.TitleServiceStub(channel)
    front, address = await started(Forwarding(upstream_stub))
    yield address
    await front.stop(0)
    await channel.close(None)
    await upstream.stop(0)


async def test_details_that_disagree_with_their_call_do_not_turn_it_into_unknown(
    forwarder: str,
) -> None:
    async with grpc.aio.insecure_channel(forwarder) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await title_pb2_grpc.TitleServiceStub(channel).GetTitle(
                title_pb2.GetTitleRequest(title="x"), timeout=5
            )
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    assert raised.value.details() == "no such title"
