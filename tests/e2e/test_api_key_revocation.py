"""A revoked API key is refused by every gateway within a second of `shikoku api-key revoke`:
two gateway processes sharing one Redis (`shikoku run --replicas 2`), each remembering the key
from calls through it, both refuse it at once (they used to take it for up to 10 s more)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import grpc
import pytest

from shikoku.v1 import lobby_pb2, lobby_pb2_grpc
from shikoku_sdk import ShikokuError
from shikoku_sdk.channel import keyed_channel
from tests.e2e.api import System
from tests.e2e.launch import SHIKOKU, issue_api_key, start_system, stop_system

pytestmark = pytest.mark.e2e

#: Refused by every gateway within this long of the revocation (the old cache kept it 10 s).
WITHIN_SECONDS = 1.0


@pytest.fixture(scope="module")
def two_gateways(redis_url: str) -> Iterator[System]:
    system = start_system(
        redis_url, "--replicas", "2", SHIKOKU_RATE_PER_SECOND="10000", SHIKOKU_RATE_BURST="10000"
    )
    yield system
    stop_system(system)


def gateways_of(system: System) -> list[str]:
    """Each gateway process's own address (System.gateway balances over them all)."""
    return system.gateway.removeprefix("ipv4:").split(",")


def reason_of_call(lobby: lobby_pb2_grpc.LobbyServiceStub) -> str:
    try:
        lobby.ListTables(lobby_pb2.ListTablesRequest(page_size=1), timeout=5)
    except grpc.RpcError as error:
        return ShikokuError.from_rpc_error(error).reason
    return "OK"


def revoked_everywhere_within(system: System, gateways: list[str]) -> tuple[float, float]:
    """Issues a key, uses it through each of `gateways` (each remembers it), revokes it the
    operator's way and calls through each until all refuse it: the seconds from the revoke
    command's start and from its end until then."""
    key = issue_api_key(system.redis_url, "soon revoked")
    channels = [keyed_channel(gateway, key) for gateway in gateways]
    try:
        lobbies = [lobby_pb2_grpc.LobbyServiceStub(channel) for channel in channels]
        assert [reason_of_call(lobby) for lobby in lobbies] == ["OK"] * len(gateways)
        started = time.monotonic()
        subprocess.run(
            [str(SHIKOKU), "api-key", "revoke", key.split(".")[0]],
            env=dict(os.environ, REDIS_URL=system.redis_url),
            check=True,
            capture_output=True,
        )
        revoked = time.monotonic()
        pending = list(lobbies)
        while pending:
            assert time.monotonic() - revoked < 15, "the key is still taken"
            pending = [lobby for lobby in pending if reason_of_call(lobby) != "API_KEY_REVOKED"]
            if pending:
                time.sleep(0.02)
        refused = time.monotonic()
    finally:
        for channel in channels:
            channel.close()
    return refused - started, refused - revoked


def test_a_revoked_key_is_refused_by_every_gateway_within_a_second(two_gateways: System) -> None:
    gateways = gateways_of(two_gateways)
    assert len(gateways) == 2
    _since_start, since_revoked = revoked_everywhere_within(two_gateways, gateways)
    assert since_revoked < WITHIN_SECONDS, f"refused everywhere {since_revoked:.3f} s after"
