"""Talking to the system under test through the gateway, for the end-to-end tests."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import grpc
import pytest
import redis
import redis.cluster
from google.protobuf import json_format
from google.protobuf.message import Message

from infra.config import ClusterUrl
from infra.eventstore import stream_key
from shikoku.v1 import game_pb2, game_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from shikoku_sdk.channel import keyed_channel
from shikoku_sdk.errors import ShikokuError


@dataclass
class System:
    gateway: str
    web: str  # the JSON-over-HTTP bridge for browsers
    redis_url: str
    process: subprocess.Popen[str]
    output: list[str]
    api_key: str

    def channel(self) -> grpc.Channel:
        return keyed_channel(self.gateway, self.api_key)


PASS = game_pb2.Command(pass_turn=game_pb2.Pass())


def sync_redis(url: str) -> redis.Redis:
    """A blocking client for `url`, one server or a cluster (for the tests' own reads)."""
    cluster = ClusterUrl.parse(url)
    if cluster is None:
        return redis.Redis.from_url(url)
    node = redis.cluster.ClusterNode
    nodes = [node(host, port) for host, port in cluster.nodes]  # type: ignore[no-untyped-call]
    return cast(redis.Redis, redis.RedisCluster(startup_nodes=nodes, password=cluster.password))


def document(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(message)


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


class Client:
    def __init__(self, system: System) -> None:
        self.channel = system.channel()
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(self.channel)
        self.game = game_pb2_grpc.GameServiceStub(self.channel)
        self.redis = sync_redis(system.redis_url)

    def stream_length(self, game_id: str) -> int:
        return int(self.redis.xlen(stream_key("game", game_id)))


def expect_error(call: Callable[[], object], code: grpc.StatusCode, reason: str) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        call()
    error = raised.value
    assert error.code() == code, error.details()
    assert ShikokuError.from_rpc_error(error).reason == reason


def open_table(
    client: Client, seats: int = 3, options: lobby_pb2.TableOptions | None = None
) -> tuple[str, list[str], str]:
    """A table with every seat taken, not started: (table id, seat tokens, host token)."""
    created = client.lobby.CreateTable(
        lobby_pb2.CreateTableRequest(seat_count=seats, options=options)
    )
    table_id = created.table.table_id
    tokens = [
        client.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=table_id, player_name=f"player {n}")
        ).seat_token
        for n in range(1, seats + 1)
    ]
    return table_id, tokens, created.host_token


def started_table(
    client: Client, seats: int = 3, options: lobby_pb2.TableOptions | None = None
) -> tuple[str, list[str], str]:
    """A started table: (game id, seat tokens, host token)."""
    table_id, tokens, host_token = open_table(client, seats, options)
    started = client.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(host_token)
    )
    return started.game_id, tokens, host_token
