"""What a flood of made-up credentials costs the lobby: the gateway's interceptors (rate limit,
then access check, as gateway/server.py chains them) on a real grpc.aio server, in front of the
lobby's real credential servicer on another, which counts the lookups that reach it; keys,
buckets, players and tables in a real Redis."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import grpc
import pytest
import redis.asyncio

from gateway.api_keys import ApiKeys
from gateway.auth import Authorization
from gateway.rate_limit import Limits, RateLimit, TokenBuckets
from infra.call_chain import CallChain
from shikoku.internal.v1 import lobby_pb2_grpc as internal_lobby_pb2_grpc
from shikoku.v1 import lobby_pb2, lobby_pb2_grpc
from shikoku_sdk.errors import ShikokuError
from tests.gateway.lobby_behind import CountingCredentials, LobbyBehind, lobby_behind

#: A public method whose rule needs only the API key; a credential sent is still checked.
GET_TITLE = "/shikoku.v1.TitleService/GetTitle"
UNKNOWN_SECONDS = 2.0  # long enough for 30 calls on a loaded machine
GRANT_SECONDS = 0.3


@dataclass
class Gateway:
    channel: grpc.aio.Channel
    lobby: lobby_pb2_grpc.LobbyServiceAsyncStub  # the lobby itself, to register players
    credentials: CountingCredentials
    keys: ApiKeys

    async def call(self, api_key: str, token: str = "") -> str:
        """GetTitle through the gateway's interceptors: "OK", or the refusal's reason."""
        metadata = [("x-api-key", api_key)]
        if token:
            metadata.append(("authorization", f"Bearer {token}"))
        say: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]
        say = self.channel.unary_unary(GET_TITLE, None, None)
        try:
            await say(b"", metadata=metadata)
        except grpc.aio.AioRpcError as error:
            return ShikokuError.from_rpc_error(error).reason or error.code().name
        return "OK"


async def _title(request: bytes, context: object) -> bytes:
    return b""


@pytest.fixture
async def gateway(redis_client: redis.asyncio.Redis) -> AsyncIterator[Gateway]:
    async with (
        lobby_behind(redis_client, CountingCredentials) as lobby,
        gatewayed(redis_client, lobby) as gateway,
    ):
        yield gateway


@asynccontextmanager
async def gatewayed(
    redis_client: redis.asyncio.Redis, lobby: LobbyBehind[CountingCredentials]
) -> AsyncIterator[Gateway]:
    credentials, lobby_channel = lobby.credentials, lobby.channel
    keys = ApiKeys(redis_client)
    authorization = Authorization(
        keys,
        internal_lobby_pb2_grpc.CredentialServiceStub(lobby_channel),
        grant_seconds=GRANT_SECONDS,
        unknown_seconds=UNKNOWN_SECONDS,
    )
    buckets = TokenBuckets(redis_client, Limits(per_second=50, burst=100))
    rate_limit = RateLimit(buckets, keys, authorization.vouches_for)
    server = grpc.aio.server(interceptors=[CallChain(admissions=[rate_limit, authorization])])
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "shikoku.v1.TitleService", {"GetTitle": grpc.unary_unary_rpc_method_handler(_title)}
            )
        ]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield Gateway(channel, lobby_pb2_grpc.LobbyServiceStub(lobby_channel), credentials, keys)
    await server.stop(None)


async def test_invented_credentials_under_one_key_are_limited_before_the_lobby_sees_them(
    gateway: Gateway,
) -> None:
    """Hundreds of calls, each with a new made-up token, under one key of 2 calls a second in
    bursts of 5: they are charged to the key's bucket before any lookup, so most are refused
    RATE_LIMITED, and at most burst + rate * t of them cost the lobby a lookup."""
    _issued, api_key = await gateway.keys.issue("inventor", per_second=2, burst=5)
    calls = 300
    start = time.monotonic()
    reasons: list[str] = []
    for batch in range(0, calls, 20):
        tokens = [f"t-000000000000~invented{n}" for n in range(batch, batch + 20)]
        reasons += await asyncio.gather(*(gateway.call(api_key, token) for token in tokens))
    elapsed = time.monotonic() - start
    allowed = 5 + 2 * elapsed
    assert gateway.credentials.asked <= allowed, (gateway.credentials.asked, elapsed)
    assert reasons.count("RATE_LIMITED") >= calls - allowed
    assert set(reasons) == {"RATE_LIMITED", "INVALID_CREDENTIAL"}
    assert reasons.count("INVALID_CREDENTIAL") == gateway.credentials.asked


async def test_a_repeated_unknown_credential_is_answered_by_the_gateway(gateway: Gateway) -> None:
    _issued, api_key = await gateway.keys.issue("retrier", per_second=1000, burst=1000)
    invented = "t-000000000000~madeup"
    reasons = [await gateway.call(api_key, invented) for _ in range(30)]
    assert reasons == ["INVALID_CREDENTIAL"] * 30
    assert gateway.credentials.asked == 1  # the 29 others from the negative cache
    await asyncio.sleep(UNKNOWN_SECONDS + 0.1)
    assert await gateway.call(api_key, invented) == "INVALID_CREDENTIAL"
    assert gateway.credentials.asked == 2  # remembered briefly, then asked again


async def test_a_proven_credential_keeps_its_own_bucket_while_invented_ones_empty_the_keys(
    gateway: Gateway,
) -> None:
    """A player the lobby has accepted is charged to a bucket of its own, even after its grants
    lapse: a flood of made-up tokens that empties its key's bucket does not stop it."""
    _issued, api_key = await gateway.keys.issue("shared page", per_second=0.5, burst=5)
    player = await gateway.lobby.RegisterPlayer(
        lobby_pb2.RegisterPlayerRequest(display_name="Real player")
    )
    assert await gateway.call(api_key, player.credential) == "OK"  # proven by the lobby now
    asked = gateway.credentials.asked
    flood = [await gateway.call(api_key, f"t-000000000000~fake{n}") for n in range(20)]
    assert flood.count("RATE_LIMITED") >= 15  # the key's bucket is empty
    flood_lookups = gateway.credentials.asked - asked
    assert flood_lookups <= 5  # the key's burst
    await asyncio.sleep(GRANT_SECONDS + 0.1)  # the player's grants lapse
    assert [await gateway.call(api_key, player.credential) for _ in range(3)] == ["OK"] * 3
    assert gateway.credentials.asked == asked + flood_lookups + 1  # asked again, once
