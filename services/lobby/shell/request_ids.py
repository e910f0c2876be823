"""Idempotent retries of the lobby calls that create things (tables, seats, players,
tournaments, rounds): a request sent again with its `request_id` gets the first answer back
instead of creating a second table or seat.

The answer is kept in Redis for a while, credentials in it included (a retry that lost the
first reply needs its token), so it is kept only as long as retries come: RETAIN_SECONDS. It
is bound to the caller and the request: the same id with another request or from another
caller is refused, and never reveals the first answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, cast

from google.protobuf.message import Message
from redis.asyncio import Redis

from infra.grpc_types import Context
from infra.metadata import optional_bearer_token
from infra.rejection import Kind, Rejected

RETAIN_SECONDS = 15 * 60
# A request being worked on holds its id this long at most (its handler's deadline is 10 s).
WORKING_SECONDS = 30
MAX_REQUEST_ID = 64

Reply = TypeVar("Reply", bound=Message)


class HasRequestId(Protocol):
    request_id: str

    def SerializeToString(self, *, deterministic: bool = ...) -> bytes: ...


def _fingerprint(method: str, request: HasRequestId, caller: str) -> bytes:
    digest = hashlib.sha256(method.encode())
    digest.update(caller.encode() + b"\0")
    digest.update(request.SerializeToString(deterministic=True))
    return digest.hexdigest().encode()


class RequestIds:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    async def once(
        self,
        method: str,
        request: HasRequestId,
        caller: str,
        reply_type: type[Reply],
        perform: Callable[[], Awaitable[Reply]],
    ) -> Reply:
        """`perform()`'s answer; for a request id `caller` (their credential, or "") had
        answered before, that answer again."""
        request_id = request.request_id
        if not request_id:
            return await perform()
        if len(request_id) > MAX_REQUEST_ID:
            raise Rejected(
                "INVALID_REQUEST_ID",
                f"request_id is at most {MAX_REQUEST_ID} characters",
                Kind.INVALID_ARGUMENT,
                {"field": "request_id"},
            )
        fingerprint = _fingerprint(method, request, caller)
        key = f"lobby:request:{{{method}:{request_id}}}"
        if (answered := await self._answer(key, fingerprint, reply_type)) is not None:
            return answered
        if not await self._redis.set(f"{key}:working", 1, nx=True, ex=WORKING_SECONDS):
            raise Rejected(
                "REQUEST_IN_PROGRESS",
                "this request_id is being worked on; retry shortly",
                Kind.ABORTED,
                {"field": "request_id"},
            )
        try:
            # Answered between our first look and taking the id?
            if (answered := await self._answer(key, fingerprint, reply_type)) is not None:
                return answered
            reply = await perform()
            await self._redis.set(
                key, fingerprint + b"\n" + reply.SerializeToString(), ex=RETAIN_SECONDS
            )
            return reply
        finally:
            await self._redis.delete(f"{key}:working")

    async def _answer(self, key: str, fingerprint: bytes, reply_type: type[Reply]) -> Reply | None:
        stored = cast(bytes | None, await self._redis.get(key))
        if stored is None:
            return None
        stored_fingerprint, _, answer = stored.partition(b"\n")
        if stored_fingerprint != fingerprint:
            raise Rejected(
                "REQUEST_ID_REUSED",
                "this request_id was already used for a different request",
                Kind.INVALID_ARGUMENT,
                {"field": "request_id"},
            )
        return reply_type.FromString(answer)


def with_request_id(
    reply_type: type[Reply],
) -> Callable[[Callable[[Any, Any, Context], Awaitable[Reply]]], Callable[..., Awaitable[Reply]]]:
    """Makes a servicer method (of a servicer with a `request_ids: RequestIds`) answer a
    repeated `request_id` with its first answer."""

    def decorate(
        handler: Callable[[Any, Any, Context], Awaitable[Reply]],
    ) -> Callable[..., Awaitable[Reply]]:
        async def handle(servicer: Any, request: Any, context: Context) -> Reply:
            ids: RequestIds = servicer.request_ids
            return await ids.once(
                handler.__name__,
                request,
                optional_bearer_token(context.invocation_metadata()),
                reply_type,
                lambda: handler(servicer, request, context),
            )

        handle.__name__ = handler.__name__
        handle.__doc__ = handler.__doc__
        return handle

    return decorate
