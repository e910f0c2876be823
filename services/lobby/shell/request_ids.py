"""Idempotent retries of the lobby calls that create things (tables, seats, players,
tournaments, rounds): a request sent again with its `request_id` gets the first answer back
instead of creating a second table or seat.

Every id and credential the call makes is drawn from a key derived from the request
(`credentials.derived_from`), so doing the call again makes the same table, seat or player,
which the handlers recognise: a call interrupted anywhere (the process killed, Redis gone
between its writes) is simply done again by its retry, and concurrent copies of one request end
with one table or seat. Nothing is locked, so nothing is left locked after a crash.

The request's fingerprint is kept under its id before the call, so the same id with another
request (or from another caller) is refused and never sees the first answer; the answer is kept
with it afterwards for RETAIN_SECONDS (credentials in it included: a retry that lost the first
reply needs its token), a shortcut for retries that come while it is kept.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, cast

from google.protobuf.message import Message
from redis.asyncio import Redis

from infra.grpc_types import Context
from infra.metadata import optional_bearer_token
from kernel.rejection import Kind, Rejected
from services.lobby.shell.credentials import derived_from

RETAIN_SECONDS = 15 * 60
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
    def __init__(self, redis: Redis, secret: bytes | None = None) -> None:
        """`secret` keys the derivation of ids and credentials: the deployment's token, so that
        every lobby replica derives the same ones (a random key for a process on its own)."""
        self._redis = redis
        self._secret = secret or secrets.token_bytes(32)

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
        # Claim the id for this request (or find it claimed for this same request).
        claimed = await self._redis.set(key, fingerprint + b"\n", nx=True, ex=RETAIN_SECONDS)
        if not claimed:
            answered = await self._answer(key, fingerprint, reply_type)
            if answered is not None:
                return answered
        with derived_from(hmac.new(self._secret, fingerprint, hashlib.sha256).digest()):
            reply = await perform()
        await self._redis.set(
            key, fingerprint + b"\n" + reply.SerializeToString(), ex=RETAIN_SECONDS
        )
        return reply

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
        return reply_type.FromString(answer) if answer else None


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
