"""A grpc.aio channel that sends the client application's API key with every call (what
`shikoku_sdk.channel` is to grpc), for `shikoku_sdk.aio.Client` and for programs that use the
generated stubs directly over grpc.aio."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import grpc
import grpc.aio

from shikoku_sdk.channel import API_KEY_HEADER, BALANCED, api_key_from_env
from shikoku_sdk.errors import ShikokuError


def _keyed(details: Any, header: tuple[str, str]) -> grpc.aio.ClientCallDetails:
    metadata = grpc.aio.Metadata(*(details.metadata or ()), header)
    return grpc.aio.ClientCallDetails(
        details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
    )


# One class a kind of call: grpc.aio files an interceptor under the first kind it is of.
class _UnaryWithApiKey(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[type-arg, unused-ignore]
    def __init__(self, header: tuple[str, str]) -> None:
        self._header = header

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_keyed(details, self._header), request)


class _StreamWithApiKey(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[type-arg, unused-ignore]
    def __init__(self, header: tuple[str, str]) -> None:
        self._header = header

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_keyed(details, self._header), request)


def api_key_interceptors(api_key: str | None) -> list[Any]:
    """The interceptors that send `api_key` (default: $SHIKOKU_API_KEY; none when empty)."""
    key = api_key_from_env() if api_key is None else api_key
    header = (API_KEY_HEADER, key)
    return [_UnaryWithApiKey(header), _StreamWithApiKey(header)] if key else []


def keyed_aio_channel(
    address: str,
    api_key: str | None = None,
    *,
    channel_credentials: grpc.ChannelCredentials | None = None,
    interceptors: Sequence[Any] = (),
) -> grpc.aio.Channel:
    """A grpc.aio channel to `address` (one gateway, or a target naming several: calls are
    spread over the healthy ones) that sends `api_key` (default: $SHIKOKU_API_KEY), secure
    with `channel_credentials`; `interceptors` (grpc.aio client interceptors) see each call
    before the key is added. Create it in the event loop that uses it."""
    chain = [*interceptors, *api_key_interceptors(api_key)]
    if channel_credentials is not None:
        return grpc.aio.secure_channel(
            address, channel_credentials, options=BALANCED, interceptors=chain
        )
    return grpc.aio.insecure_channel(address, options=BALANCED, interceptors=chain)


def dropped() -> ShikokuError:
    """What a locally cancelled call (grpc.aio raises asyncio.CancelledError for it) counts as:
    a dropped connection, reconnected after. Re-raises the cancellation when it is the task's
    own (someone cancelled the coroutine, not just the call)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
    return ShikokuError(grpc.StatusCode.CANCELLED, "the connection was dropped")
