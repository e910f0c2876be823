"""The web entrypoint's process: the public API for browsers over Connect and gRPC-Web (and the
demo page) on hypercorn, HTTP/1.1 and cleartext HTTP/2 (prior knowledge or upgrade) on one
port, in front of the gRPC gateway (see docs/api.md, "From a browser").

    SHIKOKU_WEB_ADDR=127.0.0.1:8080 SHIKOKU_GATEWAY_ADDR=127.0.0.1:50051 \\
        python -m gateway.web.server
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging

import grpc
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.asyncio.worker_context import WorkerContext
from starlette.types import ASGIApp

from gateway.web.app import web_application
from gateway.web.connections import ConnectionGuard, ConnectionLimits, GuardedConnection
from gateway.web.settings import WebSettings
from infra import garbage
from infra.config import service_channel
from infra.logs import announce
from infra.observability import observe_process
from infra.open_files import raise_open_files_limit
from infra.settings import from_environment
from infra.stopping import stop_requested

log = logging.getLogger(__name__)

#: How long answers under way (streams above all) may go on once the process is told to stop.
GRACE_SECONDS = 2.0
#: Files the process keeps for itself besides its connections (gateway channel, logs, ...).
OWN_FILES = 100
#: Connections the kernel queues for the process to accept.
BACKLOG = 1024


class WebServer:
    """hypercorn serving `app` on `address`, each connection a `GuardedConnection` (`app` caps
    its requests in flight itself). hypercorn's own serving loop is not used: it has no hook
    for a connection before it is served, where the caps refuse it."""

    def __init__(self, app: ASGIApp, address: str, limits: ConnectionLimits) -> None:
        self._app = ASGIWrapper(app)  # type: ignore[arg-type]  # starlette's ASGI types are looser
        self._guard = ConnectionGuard(limits)
        self._config = self._guard.hypercorn_config()
        self._config.bind = [address]
        self._config.backlog = BACKLOG
        self._config.include_server_header = False
        # Its records go to the process's handler (infra.logs), as JSON or text; the access
        # log is ours (gateway.web.observed), one line per call.
        self._config.errorlog = logging.getLogger("hypercorn.error")
        self._config.accesslog = None
        self._context = WorkerContext(None)
        self._servers: list[asyncio.Server] = []
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def address(self) -> str:
        """Where it listens (its port, when asked for port 0)."""
        socket = self._servers[0].sockets[0]
        host, port = socket.getsockname()[:2]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    async def start(self) -> None:
        for sock in self._config.create_sockets().insecure_sockets:
            server = await asyncio.start_server(self._serve, sock=sock, backlog=BACKLOG)
            self._servers.append(server)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            loop = asyncio.get_running_loop()
            await GuardedConnection(
                self._guard, self._app, loop, self._config, self._context, reader, writer
            )
        finally:
            self._connections.discard(task)

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Takes no more connections, closes idle ones, lets requests under way finish for
        `grace` seconds, then cancels what is left."""
        await self._context.terminated.set()
        for server in self._servers:
            server.close()
        if self._connections:
            await asyncio.wait(set(self._connections), timeout=grace)
        for task in set(self._connections):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._connections, return_exceptions=True)
        for server in self._servers:
            await server.wait_closed()


def build_web(settings: WebSettings, gateway: grpc.aio.Channel, open_files: int) -> WebServer:
    """The web entrypoint in front of `gateway`, holding at most the connections
    `open_files` (the process's limit) leaves room for."""
    limits = settings.connection_limits
    if not limits.connections or limits.connections > open_files - OWN_FILES:
        # Past the open-files limit, accepting would fail and stall; closing is better.
        limits = dataclasses.replace(limits, connections=max(open_files - OWN_FILES, 1))
        log.info("web: at most %d connections, as RLIMIT_NOFILE allows", limits.connections)
    app = web_application(gateway, settings.allowed_origins, limits.in_flight, limits.per_address)
    return WebServer(app, settings.process.addresses.web, limits)


async def main() -> None:
    settings = from_environment(WebSettings, WebSettings.NAME)
    observe_process(settings.NAME, settings.process.observability)
    open_files = raise_open_files_limit()
    channel = service_channel(settings.process.addresses.gateway, settings.process.token)
    server = build_web(settings, channel, open_files)
    try:
        await server.start()
    except OSError as error:  # the port is taken, or not an address here
        address = settings.process.addresses.web
        raise SystemExit(f"web: cannot listen on {address}: {error}") from None
    announce(f"web listening on {server.address}")
    garbage.settle()
    await stop_requested()
    await server.stop()
    await channel.close(None)
    announce("web stopped")


if __name__ == "__main__":
    asyncio.run(main())
