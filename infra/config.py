"""Reaching the services and Redis, at the addresses the settings name (infra.process_settings).

Redis is named by one setting, `REDIS_URL`, in one of two forms:

- `redis://[user:password@]host:port/db` (or `rediss://` for TLS): one Redis server;
- `redis+cluster://[user:password@]host1:port1,host2:port2,...` (or `rediss+cluster://`): a
  Redis Cluster, reached through any of the listed nodes (the client learns the others).

A service is named by `SHIKOKU_<NAME>_ADDR`: one `host:port`, several `ip:port` separated by
commas, or a DNS name whose records list every replica (`dns:///rules.shikoku:50053`). Calls are
balanced over every replica that is healthy (gRPC `round_robin` with client-side health checks).
A replica listens on `SHIKOKU_<NAME>_LISTEN_ADDR` when its `_ADDR` names more than one.
`Addresses` is infra.process_settings' (here too for the commands that read them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast
from urllib.parse import unquote, urlsplit

import grpc
from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import Connection
from redis.exceptions import RedisClusterException, RedisError

from infra.deployment_token import TokenChannel
from infra.process_settings import Addresses as Addresses
from infra.redis_connections import race_safe

CLUSTER_SCHEMES = {"redis+cluster": False, "rediss+cluster": True}


def grpc_target(addresses: str) -> str:
    """A gRPC target for a service's setting: several `ip:port` become one `ipv4:`/`ipv6:`
    target that round_robin balances; one address or a `dns:` name is used as it is."""
    parts = [part.strip() for part in addresses.split(",") if part.strip()]
    if len(parts) <= 1:
        return addresses.strip()
    scheme = "ipv6" if parts[0].startswith("[") else "ipv4"
    return f"{scheme}:{','.join(parts)}"


# Balance over every replica, and leave out those whose health service does not say SERVING.
SERVICE_CONFIG = json.dumps(
    {"loadBalancingConfig": [{"round_robin": {}}], "healthCheckConfig": {"serviceName": ""}}
)


# A replica that went away is tried again at most this often (gRPC's default lets the wait grow
# to two minutes), so a restarted one (`shikoku run` restarts within half a second) gets calls
# again within a couple of seconds.
RECONNECT_MAX_MS = 2_000


def service_channel(addresses: str, token: str) -> grpc.aio.Channel:
    """A channel to every replica of one internal service, sending the deployment's `token`
    (when there is one)."""
    channel = grpc.aio.insecure_channel(
        grpc_target(addresses),
        options=[
            ("grpc.service_config", SERVICE_CONFIG),
            ("grpc.max_reconnect_backoff_ms", RECONNECT_MAX_MS),
        ],
    )
    return TokenChannel(channel, token)


# Fail fast when Redis is down (callers answer UNAVAILABLE); long enough for blocking reads,
# which wait at most 5 s (EventStore.follow).
REDIS_CONNECT_SECONDS = 1.0
REDIS_READ_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class ClusterUrl:
    """What a `redis+cluster://` URL names."""

    nodes: list[tuple[str, int]]
    username: str | None
    password: str | None
    ssl: bool

    @classmethod
    def parse(cls, url: str) -> ClusterUrl | None:
        """The cluster `url` names, or None for a URL of one server."""
        parts = urlsplit(url)
        if parts.scheme not in CLUSTER_SCHEMES:
            return None
        credentials, _, hosts = parts.netloc.rpartition("@")
        username, _, password = credentials.partition(":")
        nodes = [_host_port(host) for host in hosts.split(",") if host]
        if not nodes:
            raise ValueError(f"{url}: a cluster URL names at least one node")
        ssl = CLUSTER_SCHEMES[parts.scheme]
        return cls(nodes, unquote(username) or None, unquote(password) or None, ssl)


def redis_client(url: str) -> Redis:
    """The client for `url` (`REDIS_URL`'s form): a `RedisCluster` for a cluster URL.

    It is typed as `Redis`: the cluster client answers the same commands with the same
    arguments (each routed to the node of its key), and every operation of ours names keys of
    one hash slot, so one annotation serves both forms."""
    cluster = ClusterUrl.parse(url)
    if cluster is None:
        single = Redis.from_url(
            url, socket_connect_timeout=REDIS_CONNECT_SECONDS, socket_timeout=REDIS_READ_SECONDS
        )
        pool = single.connection_pool
        pool.connection_class = race_safe(pool.connection_class)
        return single
    client = RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in cluster.nodes],
        username=cluster.username,
        password=cluster.password,
        ssl=cluster.ssl,
        socket_connect_timeout=REDIS_CONNECT_SECONDS,
        socket_timeout=REDIS_READ_SECONDS,
    )
    # RedisCluster takes no connection class: its nodes, those it starts from and those it
    # learns, are made from one shared dict of connection settings.
    kind = race_safe(client.connection_kwargs["connection_class"])
    client.connection_kwargs["connection_class"] = kind
    for node in client.nodes_manager.startup_nodes.values():
        node.connection_class = cast(type[Connection], kind)
    return cast(Redis, client)


def _host_port(node: str) -> tuple[str, int]:
    host, _, port = node.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"{node!r}: a cluster node is host:port")
    return host.strip("[]"), int(port)


class RedisUnreachable(SystemExit):
    """Redis did not answer at start-up: one line for the operator, not a traceback."""


async def connect_redis(who: str, url: str) -> Redis:
    """A client that has answered a PING (and, for a cluster, loaded its slot map, so a burst
    of first commands does not make it re-initialise over and over)."""
    try:
        client = redis_client(url)
        if isinstance(client, RedisCluster):
            await client.initialize()
        await client.ping()
    except (RedisError, RedisClusterException, OSError, ValueError) as error:
        # RedisClusterException: no node of a cluster answered (not a RedisError).
        raise RedisUnreachable(f"{who}: cannot reach Redis at {_shown(url)}: {error}") from None
    return client


def _shown(url: str) -> str:
    """The URL without its password."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]).geturl()
