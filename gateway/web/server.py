"""The web bridge process: the public API as JSON over HTTP/1.1 for browsers, in front of the
gRPC gateway (see docs/browser.md).

    SHIKOKU_WEB_ADDR=127.0.0.1:8080 SHIKOKU_GATEWAY_ADDR=127.0.0.1:50051 \\
        python -m gateway.web.server
"""

from __future__ import annotations

import asyncio
import os

from gateway.web.bridge import DEFAULT_MAX_CONNECTIONS, Bridge
from gateway.web.cors import Cors
from gateway.web.methods import public_methods
from gateway.web.pages import demo_pages
from gateway.web.protocol import LINE_LIMIT
from infra.config import Addresses, service_channel
from infra.stopping import stop_requested

GRACE_SECONDS = 2.0


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


async def start(bridge: Bridge, address: str) -> tuple[asyncio.Server, str]:
    """Listens at `address` (port 0: any free port); returns the server and where it listens."""
    host, port = split_address(address)
    # The reader's limit bounds the request line and each header line.
    server = await asyncio.start_server(bridge.connection, host, port, limit=LINE_LIMIT)
    bound = server.sockets[0].getsockname()[1]
    return server, f"{address.rpartition(':')[0]}:{bound}"


async def main() -> None:
    addresses = Addresses.from_env()
    channel = service_channel(addresses.gateway)
    max_connections = int(os.environ.get("SHIKOKU_WEB_MAX_CONNECTIONS", DEFAULT_MAX_CONNECTIONS))
    bridge = Bridge(channel, public_methods(), Cors.from_env(), demo_pages(), max_connections)
    server, listening = await start(bridge, addresses.web)
    print(f"web listening on {listening}", flush=True)

    await stop_requested()
    server.close()
    await bridge.close_connections(GRACE_SECONDS)
    await channel.close(None)
    print("web stopped", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
