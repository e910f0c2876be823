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

import uvicorn
from starlette.types import ASGIApp

from gateway.web.app import web_application
from gateway.web.connections import ConnectionLimits, protocol_for
from gateway.web.cors import allowed_origins
from infra.config import Addresses, service_channel
from infra.observability import observe_process
from infra.open_files import raise_open_files_limit
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


async def main() -> None:
    observe_process("web")
    addresses = Addresses.from_env()
    limits = ConnectionLimits.from_env()
    open_files = raise_open_files_limit()
    if not limits.connections or limits.connections > open_files - OWN_FILES:
        # Past the open-files limit, accepting would fail and stall; closing is better.
        limits = dataclasses.replace(limits, connections=max(open_files - OWN_FILES, 1))
        log.info("web: at most %d connections, as RLIMIT_NOFILE allows", limits.connections)
    channel = service_channel(addresses.gateway)
    app = web_application(channel, allowed_origins(), limits.in_flight)
    server = server_for(app, addresses.web, limits)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            await serving  # it failed at start (the port is taken...): say why
            raise SystemExit("web: the server stopped before it started")
        await asyncio.sleep(0.05)
    print(f"web listening on {bound_address(server, addresses.web)}", flush=True)

    stopping = asyncio.create_task(stop_requested())
    await asyncio.wait((serving, stopping), return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    await serving
    stopping.cancel()
    await channel.close(None)
    print("web stopped", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
