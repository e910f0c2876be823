"""The size limit on request bodies, answered as a Connect error of the protocol the request
speaks (Connect or gRPC-Web), with our reason.

The limit is enforced on the body as it is received: a body announced (Content-Length) or found
to be larger fails the Connect server's read of it with REQUEST_TOO_LARGE, before more than the
limit is held in memory. What the client still sends is read and dropped, up to a bound, so
that it sees the answer instead of a connection reset in the middle of its upload.
"""

from __future__ import annotations

import grpc
from connectrpc.errors import ConnectError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.web.errors import refusal

#: Largest request body: the gateway's own limit on a message.
BODY_LIMIT_BYTES = 1024 * 1024
#: How much more of a refused body is read (and dropped) before the answer.
DRAIN_LIMIT_BYTES = 8 * 1024 * 1024


def too_large(limit: int) -> ConnectError:
    return refusal(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "REQUEST_TOO_LARGE",
        f"request bodies are at most {limit} bytes",
        {"limit": str(limit)},
    )


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyLimit:
    """ASGI middleware: at most `limit` bytes of request body reach the application."""

    def __init__(self, app: ASGIApp, limit: int = BODY_LIMIT_BYTES) -> None:
        self._app = app
        self._limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        declared = _declared_length(scope)
        received = 0
        more = True

        async def limited() -> Message:
            nonlocal received, more
            if declared is not None and declared > self._limit:
                await drain()
                raise too_large(self._limit)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                more = bool(message.get("more_body", False))
                if received > self._limit:
                    await drain()
                    raise too_large(self._limit)
            return message

        async def drain() -> None:
            nonlocal received, more
            while more and received <= self._limit + DRAIN_LIMIT_BYTES:
                message = await receive()
                if message["type"] != "http.request":
                    return
                received += len(message.get("body", b""))
                more = bool(message.get("more_body", False))

        await self._app(scope, limited, send)
