"""The web entrypoint's process: the public API for browsers over Connect and gRPC-Web (and the
demo page) on uvicorn, in front of the gRPC gateway (see docs/api.md, "From a browser").

    SHIKOKU_WEB_ADDR=127.0.0.1:8080 SHIKOKU_GATEWAY_ADDR=127.0.0.1:50051 \\
        python -m gateway.web.server
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Iterator

import grpc
import uvicorn
from starlette.types import ASGIApp

from gateway.web.app import web_application
from gateway.web.connections import ConnectionLimits, protocol_for
from gateway.web.settings import WebSettings
from infra.config import service_channel
from infra.observability import observe_process
from infra.open_files import raise_open_files_limit
from infra.settings import from_environment
from infra.stopping import stop_requested

log = logging.getLogger(__name__)

#: How long answers under way (streams above all) may go on once the process is told to stop.
GRACE_SECONDS = 2.0
#: Files the process keeps for itself besides its connections (gateway channel, logs, ...).
OWN_FILES = 100


class _Server(uvicorn.Server):
    """uvicorn, stopped by `main` rather than by signal handlers of its own (which would
    re-raise the signal once stopped, and so skip the channel's closing)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def server_for(app: ASGIApp, address: str, limits: ConnectionLimits) -> uvicorn.Server:
    """uvicorn serving `app` with the connection limits of gateway.web.connections (`app` caps
    its requests in flight itself): uvicorn's own `limit_concurrency` is off, as it counts idle
    sockets."""
    host, port = split_address(address)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol_for(limits),
        ws="none",  # no WebSocket routes; an upgrade would take the socket out of our count
        lifespan="off",
        # The browser's own address is what the gateway limits by; a X-Forwarded-For it sent
        # could be made up.
        proxy_headers=False,
        server_header=False,
        timeout_keep_alive=limits.keep_alive,
        timeout_graceful_shutdown=int(GRACE_SECONDS),
        limit_concurrency=None,
        access_log=False,  # ours is gateway.web.observed's, one line per call
        log_level="warning",
        log_config=None,  # its records go to the process's handler (infra.logs), as JSON or text
    )
    return _Server(config)


def bound_address(server: uvicorn.Server, address: str) -> str:
    port = server.servers[0].sockets[0].getsockname()[1]
    return f"{address.rpartition(':')[0]}:{port}"


def build_web(settings: WebSettings, gateway: grpc.aio.Channel, open_files: int) -> uvicorn.Server:
    """The web entrypoint in front of `gateway`, holding at most the connections
    `open_files` (the process's limit) leaves room for."""
    limits = settings.connection_limits
    if not limits.connections or limits.connections > open_files - OWN_FILES:
        # Past the open-files limit, accepting would fail and stall; closing is better.
        limits = dataclasses.replace(limits, connections=max(open_files - OWN_FILES, 1))
        log.info("web: at most %d connections, as RLIMIT_NOFILE allows", limits.connections)
    app = web_application(gateway, settings.allowed_origins, limits.in_flight)
    return server_for(app, settings.process.addresses.web, limits)


async def main() -> None:
    settings = from_environment(WebSettings, WebSettings.NAME)
    observe_process(settings.NAME, settings.process.observability)
    open_files = raise_open_files_limit()
    address = settings.process.addresses.web
    channel = service_channel(settings.process.addresses.gateway, settings.process.token)
    server = build_web(settings, channel, open_files)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            await serving  # it failed at start (the port is taken...): say why
            raise SystemExit("web: the server stopped before it started")
        await asyncio.sleep(0.05)
    print(f"web listening on {bound_address(server, address)}", flush=True)

    stopping = asyncio.create_task(stop_requested())
    await asyncio.wait((serving, stopping), return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    await serving
    stopping.cancel()
    await channel.close(None)
    print("web stopped", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
