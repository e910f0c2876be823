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


class _SendsToken:
    def __init__(self, token: str) -> None:
        self._token = token

    def _with_token(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()))
        metadata.add(HEADER, self._token)
        return grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )


# One class per kind of call: a channel files each interceptor under the first kind it is an
# instance of only, so one class of both kinds never sees a streaming call.
class _SendsTokenOnUnary(_SendsToken, grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_token(details), request)


class _SendsTokenOnStream(_SendsToken, grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[type-arg]
    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_token(details), request)


def token_interceptors(token: str) -> list[Any]:
    """Client interceptors that send the deployment's token, when there is one."""
    return [_SendsTokenOnUnary(token), _SendsTokenOnStream(token)] if token else []
