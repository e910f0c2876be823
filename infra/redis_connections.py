"""Redis connections that report a connection closed under a command as the ConnectionError it is.

With a socket timeout, redis-py's asyncio connection sends each command in a task of its own
(`asyncio.wait_for`). A connection closed by another task in between (the cluster client drops
a failed master's connections in a failover; a timed-out read disconnects) leaves the
connection's writer None, and redis-py raises a bare AttributeError, or a TypeError from a
transport closed mid-write (redis/redis-py#3546; an upstream fix, #4217, was not merged). Those
escape every retry and reach a caller as UNKNOWN. As a ConnectionError the cluster client retries
the command on the new master, and the services answer what is left UNAVAILABLE, which clients
retry. Nothing was written when the writer was already gone; a write cut short mid-way is a
lost connection like any other (a retried command with its command id is applied once).
"""

from __future__ import annotations

from collections.abc import Iterable

from redis.asyncio.connection import AbstractConnection, Connection, SSLConnection
from redis.exceptions import ConnectionError as RedisConnectionError


class _SendsOnALiveWriter(Connection):
    async def _send_packed_command(self, command: Iterable[bytes]) -> None:
        writer = self._writer
        if writer is None:
            raise RedisConnectionError("the connection was closed before the command was sent")
        try:
            writer.writelines(command)
        except (AttributeError, TypeError) as error:
            if not writer.transport.is_closing():
                raise
            raise RedisConnectionError("the connection was closed while sending") from error
        await writer.drain()


class RaceSafeConnection(_SendsOnALiveWriter):
    """A plain TCP connection."""


class RaceSafeSSLConnection(_SendsOnALiveWriter, SSLConnection):
    """A TLS connection."""


def race_safe(connection_class: type[AbstractConnection]) -> type[AbstractConnection]:
    """The race-safe form of redis-py's TCP and TLS connections; any other (a Unix socket's)
    as it is."""
    if connection_class is SSLConnection:
        return RaceSafeSSLConnection
    if connection_class is Connection:
        return RaceSafeConnection
    return connection_class
