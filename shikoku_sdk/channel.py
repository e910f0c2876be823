"""A gRPC channel that sends the client application's API key with every call, for programs
that use the generated stubs directly rather than `Client`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, NamedTuple

import grpc

API_KEY_HEADER = "x-api-key"
API_KEY_ENV = "SHIKOKU_API_KEY"


def api_key_from_env() -> str:
    """The API key in $SHIKOKU_API_KEY (empty when unset)."""
    return os.environ.get(API_KEY_ENV, "")


class _CallDetails(NamedTuple):
    method: str
    timeout: float | None
    metadata: Any
    credentials: Any
    wait_for_ready: bool | None
    compression: Any


class _WithApiKey(
    grpc.UnaryUnaryClientInterceptor,  # type: ignore[type-arg, unused-ignore]
    grpc.UnaryStreamClientInterceptor,  # type: ignore[type-arg, unused-ignore]
):
    def __init__(self, api_key: str) -> None:
        self._header = (API_KEY_HEADER, api_key)

    def _keyed(self, details: grpc.ClientCallDetails) -> _CallDetails:
        metadata = [*(details.metadata or ()), self._header]
        return _CallDetails(
            details.method,
            details.timeout,
            metadata,
            details.credentials,
            getattr(details, "wait_for_ready", None),
            getattr(details, "compression", None),
        )

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: grpc.ClientCallDetails, request: Any
    ) -> Any:
        return continuation(self._keyed(details), request)

    def intercept_unary_stream(
        self, continuation: Callable[..., Any], details: grpc.ClientCallDetails, request: Any
    ) -> Any:
        return continuation(self._keyed(details), request)


def credential_metadata(credential: str | None) -> tuple[tuple[str, str], ...]:
    """The call metadata naming `credential` (a player credential, or a seat or host token):
    `authorization: Bearer <credential>`; none without one."""
    return (("authorization", f"Bearer {credential}"),) if credential else ()


def with_api_key(channel: grpc.Channel, api_key: str) -> grpc.Channel:
    """`channel`, sending `api_key` with every call (unchanged when the key is empty)."""
    return grpc.intercept_channel(channel, _WithApiKey(api_key)) if api_key else channel


# Several gateways behind one target (`ipv4:10.0.0.1:50051,10.0.0.2:50051`, or a DNS name with a
# record per gateway): calls are spread over every one whose health service says SERVING. The
# services' own channels use the same config (infra.config.SERVICE_CONFIG); the SDK keeps its
# copy because it stands alone, without the server's packages.
BALANCED = (
    (
        "grpc.service_config",
        json.dumps(
            {
                "loadBalancingConfig": [{"round_robin": {}}],
                "healthCheckConfig": {"serviceName": ""},
            }
        ),
    ),
)


def keyed_channel(address: str, api_key: str | None = None) -> grpc.Channel:
    """An insecure channel to `address` (one gateway, or a target naming several) that sends
    `api_key` (default: $SHIKOKU_API_KEY)."""
    key = api_key_from_env() if api_key is None else api_key
    return with_api_key(grpc.insecure_channel(address, options=BALANCED), key)
