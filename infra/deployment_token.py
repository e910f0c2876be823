"""Service-to-service authentication: a secret shared by one deployment's processes.

The internal services (rules, lobby, routes) serve only callers that send the deployment's
token (`SHIKOKU_INTERNAL_TOKEN`) as `x-shikoku-internal` metadata: the gateway, each other, and
the web bridge. Anyone else who can reach them is refused with UNAUTHENTICATED, so reaching an
internal port is not enough to act for a seat, end a game or read a closed one. `shikoku run`
makes a token for its processes; a deployment sets one for all of its processes (a Kubernetes
Secret, a Compose environment file).

The gateway also honours `x-forwarded-for` (the caller's address, for rate limits) only from a
caller that proves to be our own proxy with this token, or from `SHIKOKU_TRUSTED_PROXIES`.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from typing import Any

import grpc

from infra.call_chain import Admission
from infra.grpc_types import Context
from kernel.rejection import Kind, Rejected

HEADER = "x-shikoku-internal"
SETTING = "SHIKOKU_INTERNAL_TOKEN"

MISSING = Rejected(
    "DEPLOYMENT_CREDENTIAL_REQUIRED",
    "this is an internal service: only the deployment's own processes may call it",
    Kind.UNAUTHENTICATED,
)


def carries_token(metadata: Iterable[tuple[str, str | bytes]] | None, token: str) -> bool:
    sent = next((v for k, v in metadata or () if k.lower() == HEADER), "")
    return bool(token) and isinstance(sent, str) and hmac.compare_digest(sent, token)


class RequiresDeploymentToken(Admission):
    """Refuses every call that does not carry `token`, but health checks: probes (a kubelet,
    Compose, `shikoku health`) hold no secret. Reflection is refused too: an internal service's
    schema is no business of a caller outside the deployment."""

    free_prefixes = ("/grpc.health.v1.",)

    def __init__(self, token: str) -> None:
        self._token = token

    async def admit(self, method: str, request: Any, context: Context) -> None:
        if not carries_token(context.invocation_metadata(), self._token):
            raise MISSING


class _WithToken:
    """A method of a `TokenChannel`: the call made with the token among its metadata."""

    def __init__(self, call: Any, sent: tuple[tuple[str, str], ...]) -> None:
        self._call = call
        self._sent = sent

    def __call__(self, request: Any, *, metadata: Any = None, **options: Any) -> Any:
        return self._call(request, metadata=(*(metadata or ()), *self._sent), **options)


class TokenChannel(grpc.aio.Channel):
    """`channel`, every call on it sending the deployment's `token` (none when it is empty).
    The token goes in each call's own metadata: a client interceptor would do the same at the
    price of grpc.aio's intercepted calls (a call object and a task more per call), on every
    call from the gateway to the services."""

    def __init__(self, channel: grpc.aio.Channel, token: str) -> None:
        self._channel = channel
        self._sent = ((HEADER, token),) if token else ()

    def unary_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _WithToken(self._channel.unary_unary(method, *args, **kwargs), self._sent)

    def unary_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _WithToken(self._channel.unary_stream(method, *args, **kwargs), self._sent)

    def stream_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _WithToken(self._channel.stream_unary(method, *args, **kwargs), self._sent)

    def stream_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _WithToken(self._channel.stream_stream(method, *args, **kwargs), self._sent)

    async def close(self, grace: float | None = None) -> None:
        await self._channel.close(grace)

    def get_state(self, try_to_connect: bool = False) -> grpc.ChannelConnectivity:
        return self._channel.get_state(try_to_connect)

    async def wait_for_state_change(self, last_observed_state: grpc.ChannelConnectivity) -> None:
        await self._channel.wait_for_state_change(last_observed_state)

    async def channel_ready(self) -> None:
        await self._channel.channel_ready()

    async def __aenter__(self) -> TokenChannel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close(None)
