"""The web entrypoint as one ASGI application: the public API over Connect (JSON and binary)
and gRPC-Web at the gRPC method paths, `/healthz`, and the demo page's files at `/`.

    POST /shikoku.v1.LobbyService/CreateTable   Connect or gRPC-Web, by Content-Type
    GET  /healthz                                200 ok
    GET  /, /app.js, ...                         gateway/web/static/

CORS wraps everything, so every answer, refusals included, is readable by an allowed page;
the body limit and the reading of header bytes wrap the API, so an oversized or garbled request
fails as a Connect error.
"""

from __future__ import annotations

from typing import Any

import grpc
from connectrpc.server import ConnectASGIApplication
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp

from gateway.public_api import public_services
from gateway.web.codecs import codecs
from gateway.web.connections import InFlightLimit
from gateway.web.cors import with_cors
from gateway.web.headers import HeaderText
from gateway.web.limits import BODY_LIMIT_BYTES, BodyLimit
from gateway.web.observed import ObservesWebCalls
from gateway.web.pages import static_files
from gateway.web.services import connect_application
from infra.observability import call_observers


def connect_applications(channel: grpc.aio.Channel) -> list[ConnectASGIApplication[Any]]:
    """One Connect application per service of the public API, each forwarding to the gateway;
    every call observed (metrics, access log, span) as the gRPC servers observe theirs."""
    options: dict[str, Any] = {
        "read_max_bytes": BODY_LIMIT_BYTES,
        "codecs": codecs(),
        "interceptors": [ObservesWebCalls(call_observers())],
    }
    return [connect_application(service, channel, **options) for service in public_services()]


async def healthz(request: Request) -> Response:
    return PlainTextResponse("ok\n", headers={"cache-control": "no-store"})


def web_application(
    channel: grpc.aio.Channel,
    origins: tuple[str, ...],
    max_in_flight: int = 0,
    max_in_flight_per_address: int = 0,
) -> ASGIApp:
    """`max_in_flight`: requests served at once, beyond which one is answered 503 SERVER_BUSY;
    `max_in_flight_per_address`: those of one client address, beyond which one is answered 429
    ADDRESS_BUSY (gateway.web.connections; 0: no cap); inside CORS so that a page can read why."""
    api: list[BaseRoute] = [
        Mount(app.path, app=HeaderText(BodyLimit(app))) for app in connect_applications(channel)
    ]
    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        *api,
        Mount("/", app=static_files()),
    ]
    limited = InFlightLimit(Starlette(routes=routes), max_in_flight, max_in_flight_per_address)
    return with_cors(limited, origins)
