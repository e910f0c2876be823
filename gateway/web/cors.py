"""Cross-origin access: which web origins may call the API from a page of theirs, and the
headers the Connect and gRPC-Web protocols need a preflight to allow and a response to expose.

`SHIKOKU_WEB_ORIGINS` is a comma-separated list of origins (`https://play.example`); the default
`*` allows any, which suits development and is safe here: no cookies are used, a page must send
the API key and the player's credential itself, so no request carries ambient authority.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp

DEFAULT_ORIGINS = ("*",)

ALLOW_METHODS = ("GET", "POST")
ALLOW_HEADERS = (
    # ours, as on the gRPC API
    "authorization",
    "x-api-key",
    # Connect
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-accept-encoding",
    "connect-content-encoding",
    # gRPC-Web
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
)
EXPOSE_HEADERS = (
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "content-encoding",
    "connect-content-encoding",
    "retry-after",
)
PREFLIGHT_MAX_AGE_SECONDS = 7200


def allowed_origins(origins: Iterable[str]) -> tuple[str, ...]:
    """The origins as CORS compares them (an origin never ends in a slash)."""
    return tuple(origin.strip().rstrip("/") for origin in origins if origin.strip())


def with_cors(app: ASGIApp, origins: tuple[str, ...]) -> ASGIApp:
    return CORSMiddleware(
        app,
        allow_origins=origins,
        allow_methods=ALLOW_METHODS,
        allow_headers=ALLOW_HEADERS,
        expose_headers=EXPOSE_HEADERS,
        max_age=PREFLIGHT_MAX_AGE_SECONDS,
    )
