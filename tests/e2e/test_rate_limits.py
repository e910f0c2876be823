"""Rate limits through the real gateway, on a system of its own started with small limits (2
calls a second, bursts of 5, 2 open streams per caller): a client that hammers it is told to
wait; others are served."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import cast

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from infra.grpc_errors import Metadata
from shikoku.v1 import game_pb2, lobby_pb2, lobby_pb2_grpc
from shikoku_sdk import Client as SdkClient
from shikoku_sdk import ShikokuError, seat_table
from shikoku_sdk.channel import keyed_channel
from tests.e2e.api import Client, System, auth
from tests.e2e.launch import issue_api_key, start_system, stop_system
from tests.e2e.observing import metrics_urls, scrape, total

pytestmark = pytest.mark.e2e


def start_limited(redis_url: str, *run_options: str) -> System:
    """A system of its own with small limits: 2 calls a second, bursts of 5, 2 streams."""
    return start_system(
        redis_url,
        *run_options,
        SHIKOKU_RATE_PER_SECOND="2",
        SHIKOKU_RATE_BURST="5",
        SHIKOKU_STREAMS_PER_CALLER="2",
    )


@pytest.fixture(scope="module")
def limited(redis_url: str) -> Iterator[System]:
    system = start_limited(redis_url)
    yield system
    stop_system(system)


@pytest.fixture
def client(limited: System) -> Iterator[Client]:
    client = Client(limited)
    yield client
    client.channel.close()
    client.redis.close()


def details(error: grpc.RpcError) -> tuple[error_details_pb2.ErrorInfo, float]:
    """The ErrorInfo and the RetryInfo's delay in seconds."""
    trailers = dict(cast(Metadata, error.trailing_metadata() or ()))
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
    assert status.details[0].Unpack(info) and status.details[1].Unpack(retry)
    return info, retry.retry_delay.ToTimedelta().total_seconds()


def test_a_client_over_its_limit_is_told_when_to_retry_and_others_are_served(
    client: Client,
) -> None:
    created = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=2))
    table_id = created.table.table_id
    joined = client.lobby.JoinTable(
        lobby_pb2.JoinTableRequest(table_id=table_id, player_name="Patient")
    )
    hammering = auth(created.host_token)
    served = 0
    with pytest.raises(grpc.RpcError) as raised:
        for call in range(50):
            if call % 2:
                client.lobby.ListTables(lobby_pb2.ListTablesRequest(), metadata=hammering)
            else:
                client.lobby.GetTable(
                    lobby_pb2.GetTableRequest(table_id=table_id), metadata=hammering
                )
            served += 1
    assert 5 <= served < 50  # the burst, and whatever refilled meanwhile
    error = raised.value
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error.details()
    info, delay = details(error)
    assert info.reason == "RATE_LIMITED"
    assert dict(info.metadata) == {"limit_per_second": "2", "burst": "5"}
    assert 0 < delay <= 0.5  # a token every half second

    # Another credential has a bucket of its own.
    other = auth(joined.seat_token)
    table = client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id), metadata=other)
    assert table.table_id == table_id
    # And the hammering client is served again once it has waited as it was told.
    time.sleep(delay + 0.1)
    client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id), metadata=hammering)


def test_health_checks_are_not_charged(limited: System) -> None:
    with limited.channel() as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for _ in range(20):
            reply = health.Check(health_pb2.HealthCheckRequest(), metadata=auth("prober"))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_a_request_over_a_mebibyte_is_refused(client: Client) -> None:
    huge = lobby_pb2.GetTableRequest(table_id="t" * (2 * 1024 * 1024))
    with pytest.raises(grpc.RpcError) as raised:
        client.lobby.GetTable(huge, metadata=auth("sends-too-much"))
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_an_application_key_with_limits_of_its_own(limited: System) -> None:
    """A bot's key issued with higher limits plays at machine speed where the gateway's
    defaults (2 a second, bursts of 5) would stop it; its limits show in a refusal."""
    fast_key = issue_api_key(limited.redis_url, "fast bot", "--per-second", "1", "--burst", "30")
    with keyed_channel(limited.gateway, fast_key) as channel:
        lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
        bot = lobby.RegisterPlayer(lobby_pb2.RegisterPlayerRequest(display_name="Fast bot"))
        mine = auth(bot.credential)
        for _ in range(30):
            lobby.ListTables(lobby_pb2.ListTablesRequest(page_size=1), metadata=mine)
        with pytest.raises(grpc.RpcError) as raised:
            for _ in range(5):
                lobby.ListTables(lobby_pb2.ListTablesRequest(page_size=1), metadata=mine)
    info, _delay = details(raised.value)
    assert info.reason == "RATE_LIMITED"
    assert dict(info.metadata) == {"limit_per_second": "1", "burst": "30"}


def test_a_caller_may_hold_only_so_many_streams_open(limited: System) -> None:
    fast_key = issue_api_key(limited.redis_url, "watcher", "--per-second", "100", "--burst", "100")
    with SdkClient(limited.gateway, api_key=fast_key) as client:
        table = seat_table(client, 2)
        game_id, seat = table.game_id, table.seats[1]
        watches = [seat.watch(game_id) for _ in range(2)]
        assert [next(iter(watch)).event.version for watch in watches] == [1, 1]
        request = game_pb2.WatchGameRequest(game_id=game_id)
        with pytest.raises(grpc.RpcError) as refused:
            next(iter(seat.games.WatchGame(request, metadata=auth(seat.credential or ""))))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert ShikokuError.from_rpc_error(refused.value).reason == "TOO_MANY_STREAMS"
        watches[0].close()
        time.sleep(0.5)
        third = seat.watch(game_id)
        assert next(iter(third)).event.version == 1  # a closed stream frees its place
        third.close()
        watches[1].close()


def test_an_anonymous_caller_cannot_pick_its_bucket_with_x_forwarded_for(client: Client) -> None:
    """A client on the gateway's own host that sends `x-forwarded-for` is still charged to its
    own address: only the deployment's proxies (the web bridge, with the deployment token, or
    hosts in SHIKOKU_TRUSTED_PROXIES) name the caller for another."""
    served = 0
    with pytest.raises(grpc.RpcError) as raised:
        for call in range(30):
            forged = (("x-forwarded-for", f"203.0.113.{call}"),)
            client.lobby.ListTables(lobby_pb2.ListTablesRequest(), metadata=forged)
            served += 1
    assert served < 30
    assert details(raised.value)[0].reason == "RATE_LIMITED"


def lobby_lookups(system: System) -> float:
    """Credential lookups the lobby has answered (its Authorize calls, every replica)."""
    return sum(
        total(scrape(url), "shikoku_rpc_calls_total", method="Authorize")
        for url in metrics_urls(system.output)["lobby"]
    )


def reasons_of_calls(system: System, api_key: str, tokens: list[str]) -> list[str]:
    """ListTables with each bearer token in turn: the reason of each refusal ("OK" if served)."""
    reasons = []
    with keyed_channel(system.gateway, api_key) as channel:
        lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
        for token in tokens:
            try:
                lobby.ListTables(lobby_pb2.ListTablesRequest(page_size=1), metadata=auth(token))
                reasons.append("OK")
            except grpc.RpcError as error:
                reasons.append(ShikokuError.from_rpc_error(error).reason)
    return reasons


def test_invented_credentials_are_limited_before_the_lobby_looks_them_up(
    limited: System,
) -> None:
    """Hundreds of calls under one key (2 a second, bursts of 5), each with a made-up token:
    they share the key's bucket, charged before any lookup, so at most burst + rate * t of
    them reach the lobby; the rest are refused RATE_LIMITED."""
    api_key = issue_api_key(limited.redis_url, "inventor")
    before = lobby_lookups(limited)
    start = time.monotonic()
    reasons = reasons_of_calls(limited, api_key, [f"t-{n:012x}~invented" for n in range(300)])
    elapsed = time.monotonic() - start
    looked_up = lobby_lookups(limited) - before
    allowed = 5 + 2 * elapsed
    assert looked_up <= allowed, (looked_up, elapsed)
    assert reasons.count("RATE_LIMITED") >= 300 - allowed
    assert set(reasons) == {"RATE_LIMITED", "INVALID_CREDENTIAL"}


def test_a_repeated_invented_credential_is_answered_from_the_negative_cache(
    limited: System,
) -> None:
    api_key = issue_api_key(limited.redis_url, "retrier", "--per-second", "100", "--burst", "100")
    before = lobby_lookups(limited)
    reasons = reasons_of_calls(limited, api_key, ["t-000000000000~made-up"] * 30)
    assert reasons == ["INVALID_CREDENTIAL"] * 30
    assert lobby_lookups(limited) - before == 1
