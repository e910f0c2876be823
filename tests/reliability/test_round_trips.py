"""The write path's round trips to Redis, counted on the connections themselves: an accepted
command costs the rules service one (the append script, which checks the command id and the
version and writes the change note), on one Redis server and on a Redis Cluster; and the
gateway's rate limit charges most calls without Redis."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis.asyncio
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import AbstractConnection

from gateway.rate_limit import Limits, TokenBuckets, lease_size
from infra.settings import from_environment
from services.projections.game_summaries import changes_key, shard_of
from services.rules.domain import events as ev
from services.rules.domain.commands import CreateGame
from services.rules.domain.decide import legal_actions
from services.rules.domain.state import GameState
from services.rules.shell.server import build_rules
from services.rules.shell.settings import RulesSettings
from shikoku_dev.redis_cluster import EmbeddedRedisCluster
from tools.bots import choose, command_for

COMMANDS = 150


class RoundTrips:
    """How many times this process's Redis connections sent: once a command, or once a
    pipeline of commands (a round trip each; a cluster's pipeline, once to each node)."""

    sent = 0


@pytest.fixture(autouse=True)
def round_trips(monkeypatch: pytest.MonkeyPatch) -> None:
    send = AbstractConnection.send_packed_command

    async def counted(self: AbstractConnection, command: Any, check_health: bool = True) -> None:
        RoundTrips.sent += 1
        await send(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counted)


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[RulesSettings]:
    monkeypatch.setenv("SHIKOKU_INTERNAL_TOKEN", "round-trips-" + "0" * 32)
    yield from_environment(RulesSettings, RulesSettings.NAME)


async def trips_per_command(
    client: redis.asyncio.Redis | RedisCluster, settings: RulesSettings, game_id: str
) -> list[int]:
    """The round trips of each of COMMANDS random commands of a new game, decided and appended
    by the rules service's own repository (as its Submit does)."""
    games = build_rules(settings, client, routes=None, consumer="counted").games  # type: ignore[arg-type]
    players = tuple(ev.SeatedPlayer(seat, f"p{seat}") for seat in (1, 2, 3, 4))
    created = await games.execute(game_id, CreateGame(players, seed=5), None, "create")
    assert created.after is not None
    state: GameState = created.after.state
    rng = random.Random(game_id)
    trips: list[int] = []
    for number in range(COMMANDS):
        command = command_for(choose(legal_actions(state), rng), rng, state)
        before = RoundTrips.sent
        executed = await games.execute(game_id, command, None, f"c-{number}")
        trips.append(RoundTrips.sent - before)
        assert executed.after is not None
        state = executed.after.state
    # Nothing was skipped that the log does not hold: the kept state is the log's fold.
    assert (await games.load(game_id)).state == state
    return trips


async def test_an_accepted_command_costs_one_round_trip_on_one_redis_server(
    redis_client: redis.asyncio.Redis, settings: RulesSettings
) -> None:
    trips = await trips_per_command(redis_client, settings, "g-counted")
    assert max(trips) <= 2  # the snapshot, every so many versions, is the second
    assert sum(trips) / len(trips) <= 1.1, trips
    # Each append wrote its change note in the same round trip.
    notes = await redis_client.xrange(changes_key(shard_of("g-counted", settings.summary_shards)))
    assert [fields for _id, fields in notes or ()] == [{b"g": b"g-counted"}] * (COMMANDS + 1)


@pytest.mark.slow
async def test_an_accepted_command_costs_one_round_trip_to_each_node_on_a_cluster(
    redis_cluster: EmbeddedRedisCluster, settings: RulesSettings
) -> None:
    nodes = [ClusterNode(host, port) for host, port in redis_cluster.startup_nodes]
    client = RedisCluster(startup_nodes=nodes)
    await client.initialize()
    try:
        trips = await trips_per_command(client, settings, "g-counted-on-cluster")
    finally:
        await client.aclose()
    # The append on the game's master and, in the same pipeline, the note on its shard's.
    assert max(trips) <= 3
    assert sum(trips) / len(trips) <= 2.1, trips


async def test_the_rate_limit_charges_a_caller_within_its_limit_mostly_without_redis(
    redis_client: redis.asyncio.Redis,
) -> None:
    buckets = TokenBuckets(redis_client, Limits(per_second=50, burst=100))
    await buckets.take("ratelimit:{warm}")  # the connection is made
    before, calls = RoundTrips.sent, 80
    for _ in range(calls):  # 40 calls a second for two seconds
        assert await buckets.take("ratelimit:{within}") is None
        await asyncio.sleep(1 / 40)
    assert (RoundTrips.sent - before) / calls <= 0.15


async def test_the_rate_limit_holds_across_gateways_that_lease_tokens(
    redis_client: redis.asyncio.Redis,
) -> None:
    limits = Limits(per_second=50, burst=100)
    gateways = [TokenBuckets(redis_client, limits) for _ in range(3)]
    await gateways[0].take("ratelimit:{warm}")
    before, start = RoundTrips.sent, time.monotonic()
    admitted = calls = 0
    while time.monotonic() - start < 1.0:  # a flood through three gateways at once
        for gateway in gateways:
            calls += 1
            admitted += await gateway.take("ratelimit:{flood}") is None
        await asyncio.sleep(0.001)
    allowed = limits.burst + limits.per_second * (time.monotonic() - start)
    assert admitted <= allowed + 1  # never more than the shared bucket held
    # Never much less: what each gateway leased and had not spent when a call came.
    assert admitted >= allowed - len(gateways) * lease_size(limits) - limits.per_second * 0.1
    assert (RoundTrips.sent - before) / calls <= 0.25
