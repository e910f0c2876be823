"""A connection closed by another task while a command waits to be sent is a ConnectionError.

redis-py sends each command in a task of its own (a socket timeout is set); closing the
connection in between used to surface as an AttributeError, which reached callers as UNKNOWN in
the cluster failover test. infra.redis_connections makes it the ConnectionError it is.
"""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio.connection import Connection
from redis.exceptions import ConnectionError as RedisConnectionError

from infra.config import redis_client


async def _closed_while_waiting_to_send(url: str, plain: bool) -> BaseException | None:
    client = redis_client(url)
    pool = client.connection_pool
    if plain:
        pool.connection_class = Connection
    connection = await pool.get_connection()  # type: ignore[no-untyped-call]
    try:
        ping = connection.pack_command("PING")
        sending = asyncio.create_task(connection.send_packed_command(ping))
        await asyncio.sleep(0)  # the send now waits in its own task
        await connection.disconnect(nowait=True)
        try:
            await sending
        except Exception as error:
            return error
        return None
    finally:
        await pool.release(connection)
        await client.aclose()


async def test_redis_py_alone_raises_a_bare_attribute_error(redis_url: str) -> None:
    """The race is real (if redis-py mends it, infra.redis_connections can go)."""
    error = await _closed_while_waiting_to_send(redis_url, plain=True)
    assert isinstance(error, AttributeError)


async def test_our_connections_raise_a_connection_error_and_the_client_goes_on(
    redis_url: str,
) -> None:
    error = await _closed_while_waiting_to_send(redis_url, plain=False)
    assert isinstance(error, RedisConnectionError)
    client = redis_client(redis_url)
    try:
        assert await client.ping()
    finally:
        await client.aclose()


@pytest.mark.parametrize("scheme", ["redis", "rediss"])
def test_every_tcp_client_gets_the_race_safe_connections(scheme: str) -> None:
    pool = redis_client(f"{scheme}://localhost:6379/0").connection_pool
    assert pool.connection_class.__module__ == "infra.redis_connections"
