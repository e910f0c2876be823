"""A Redis Cluster shard whose master has no replica left, under `SHIKOKU_REDIS_NO_REPLICA`.

First the event store alone, on a cluster of its own (3 masters, a replica each), whose replica
of one master is killed (the shard is then without replica, as after a failover) and restarted:
`degrade` acknowledges appends on the master at once and counts them, `refuse` refuses them with
NO_REPLICA at once, writing nothing; an append that reached the master just before its replica
was lost is not acknowledged, nor is its retry, until a replica has it; both leave the state by
themselves when the replica is back.

Then the whole system (`test_bot_games_go_on_while_a_killed_master_stays_down`): bot games
through the gateways while a master is killed and stays down, its replica promoted and without
one, for `SHIKOKU_MASTER_DOWN_SECONDS`.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import cast

import pytest
import redis
import redis.asyncio
from prometheus_client import REGISTRY
from redis.asyncio.cluster import RedisCluster

from infra.eventstore import (
    RECOUNT_SECONDS,
    EventStore,
    NewEvent,
    NoReplica,
    NotReplicated,
    Replication,
)
from infra.redis_cluster import HOST, EmbeddedRedisCluster

from .conftest import cluster_client
from .test_eventstore_cluster import ids_by_master

pytestmark = [pytest.mark.reliability, pytest.mark.cluster]

WAIT_MS = 2_000
#: Well under the WAIT timeout: what "at once" means on a loaded machine.
AT_ONCE_S = 0.25 * WAIT_MS / 1000


@pytest.fixture(scope="module")
def cluster() -> Iterator[EmbeddedRedisCluster]:
    with EmbeddedRedisCluster(masters=3, replicas=1) as cluster:
        yield cluster


@pytest.fixture
async def client(cluster: EmbeddedRedisCluster) -> AsyncIterator[RedisCluster]:
    client = await cluster_client(cluster)
    await client.flushall(target_nodes=RedisCluster.PRIMARIES)
    yield client
    await client.aclose()
    gc.collect()  # the test's stores leave the gauge with it


def store(client: RedisCluster, policy: str, wait_ms: int = WAIT_MS) -> EventStore:
    replication = Replication(1, wait_ms, "refuse" if policy == "refuse" else "degrade")
    return EventStore(cast(redis.asyncio.Redis, client), "game", replication)


def event(n: int) -> list[NewEvent]:
    return [NewEvent("Played", 1, {"n": n})]


def replica_of(cluster: EmbeddedRedisCluster, master: int) -> int:
    for port in cluster.replica_ports():
        with redis.Redis(host=HOST, port=port, decode_responses=True) as node:
            if int(node.info("replication")["master_port"]) == master:
                return port
    raise AssertionError(f"master {master} has no replica")


def pid_of(port: int) -> int:
    with redis.Redis(host=HOST, port=port) as node:
        return int(node.info("server")["process_id"])


def connected_replicas(master: int) -> int:
    with redis.Redis(host=HOST, port=master) as node:
        return int(node.info("replication")["connected_slaves"])


def lose_replica(cluster: EmbeddedRedisCluster, master: int) -> int:
    """Kills the replica of `master` and returns once the master has dropped it (its port)."""
    replica = replica_of(cluster, master)
    cluster.kill(replica)
    deadline = time.monotonic() + 5
    while connected_replicas(master) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert connected_replicas(master) == 0
    return replica


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def degraded() -> float:
    return sample("shikoku_redis_writes_without_replica_total", outcome="degraded")


def refused() -> float:
    return sample("shikoku_redis_writes_without_replica_total", outcome="refused")


def without_replica() -> float:
    return sample("shikoku_redis_shards_without_replica")


async def until(condition: Callable[[], Awaitable[bool]], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.1)


async def test_degrade_acknowledges_on_the_master_alone_at_once_until_the_replica_is_back(
    cluster: EmbeddedRedisCluster, client: RedisCluster
) -> None:
    games = store(client, "degrade")
    chosen = ids_by_master(client, 1)
    master, other = sorted(chosen)[:2]
    (lonely,), (paired,) = chosen[master], chosen[other]
    await games.append(lonely, 0, event(0))
    replica = lose_replica(cluster, master)
    try:
        await asyncio.sleep(RECOUNT_SECONDS)  # the count made with the replica is due again
        before = degraded()
        start = time.monotonic()
        for n in range(1, 21):
            assert await games.append(lonely, n, event(n)) == n + 1
        took = time.monotonic() - start
        assert took < AT_ONCE_S, f"20 appends to a master without replica took {took:.2f} s"
        assert degraded() - before == 20
        assert without_replica() == 1
        assert await games.append(paired, 0, event(0)) == 1  # the other shards wait as before
        assert degraded() - before == 20
        assert [e.version for e in await games.read(lonely)] == list(range(1, 22))
    finally:
        cluster.restart(replica)
    # Back and in sync: within a count's age the appends wait for it again.
    version = 21

    async def confirmed_again() -> bool:
        nonlocal version
        before = degraded()
        version = await games.append(lonely, version, event(version))
        return degraded() == before

    await until(confirmed_again, RECOUNT_SECONDS + 3, "the shard stayed degraded")
    assert without_replica() == 0
    before = degraded()
    version = await games.append(lonely, version, event(version))
    assert degraded() == before


async def test_refuse_answers_no_replica_at_once_and_writes_nothing(
    cluster: EmbeddedRedisCluster, client: RedisCluster
) -> None:
    games = store(client, "refuse")
    chosen = ids_by_master(client, 1)
    master, other = sorted(chosen)[:2]
    (lonely,), (paired,) = chosen[master], chosen[other]
    await games.append(lonely, 0, event(0))
    replica = lose_replica(cluster, master)
    try:
        before = refused()
        # The count made a moment ago still has the replica: the script counts again itself
        # and writes nothing (the pipelined WAIT may take its timeout, this once).
        with pytest.raises(NoReplica) as first:
            await games.append(lonely, 1, event(1))
        assert not first.value.written
        assert (first.value.reason, first.value.kind.value) == ("NO_REPLICA", "UNAVAILABLE")
        for _ in range(20):
            start = time.monotonic()
            with pytest.raises(NoReplica) as refusal:
                await games.append(lonely, 1, event(1))
            took = time.monotonic() - start
            assert took < AT_ONCE_S, f"refused after {took:.2f} s"
            assert not refusal.value.written
        assert refused() - before == 21
        assert without_replica() == 1
        assert await games.version(lonely) == 1, "a refused append wrote something"
        assert await games.append(paired, 0, event(0)) == 1  # the other shards go on
        assert [e.version for e in await games.read(lonely)] == [1]  # reads go on too
    finally:
        cluster.restart(replica)

    async def accepted_again() -> bool:
        try:
            await games.append(lonely, 1, event(1))
        except NoReplica:
            return False
        return True

    await until(accepted_again, RECOUNT_SECONDS + 3, "writes stayed refused")
    assert without_replica() == 0


async def test_a_write_on_the_master_alone_is_not_acknowledged_until_a_replica_has_it(
    cluster: EmbeddedRedisCluster, client: RedisCluster
) -> None:
    """The hard case: the append script ran while the replica was there, and the replica was
    lost before it confirmed. The write is on the master alone: it is not acknowledged, and
    neither is a retry with its command id (which finds it applied), until a replica has it."""
    games = store(client, "refuse", wait_ms=1_500)
    chosen = ids_by_master(client, 1)
    master = sorted(chosen)[0]
    (game,) = chosen[master]
    await games.append(game, 0, event(0))
    replica = replica_of(cluster, master)
    pid = pid_of(replica)
    os.kill(pid, signal.SIGSTOP)  # there, but confirming nothing
    try:
        # A replica that is there but behind is no lost replica: NOT_REPLICATED, as before.
        with pytest.raises(NotReplicated):
            await games.append_once(game, 1, event(1), command_id="lagging")
        appending = asyncio.create_task(games.append_once(game, 2, event(2), command_id="c"))
        await asyncio.sleep(0.3)  # written; waiting for the replica's confirmation
        assert await games.version(game) == 3
    finally:
        os.kill(pid, signal.SIGKILL)  # lost, with nothing confirmed
    with pytest.raises(NoReplica) as refusal:
        await appending
    assert refusal.value.written
    while replica in cluster.replica_ports():  # reaped
        await asyncio.sleep(0.01)
    for _ in range(3):  # every retry is refused, at once
        start = time.monotonic()
        with pytest.raises(NoReplica):
            await games.applied(game, "c")
        with pytest.raises(NoReplica):
            await games.append_once(game, 2, event(2), command_id="c")
        assert time.monotonic() - start < AT_ONCE_S
    cluster.restart(replica)

    async def acknowledged() -> bool:
        try:
            return await games.applied(game, "c") is not None
        except NoReplica:
            return False

    await until(acknowledged, RECOUNT_SECONDS + 3, "the retry stayed refused")
    again = await games.append_once(game, 2, event(2), command_id="c")
    assert (again.first, again.last, again.duplicate) == (3, 3, True)
    with redis.Redis(host=HOST, port=replica) as node:
        node.execute_command("READONLY")
        assert len(node.xrange(games.key(game))) == 3, "the replica lacks what was acknowledged"


def test_the_policy_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHIKOKU_REDIS_NO_REPLICA", raising=False)
    assert Replication.from_env().no_replica == "degrade"
    monkeypatch.setenv("SHIKOKU_REDIS_NO_REPLICA", " Refuse")
    assert Replication.from_env().no_replica == "refuse"
    monkeypatch.setenv("SHIKOKU_REDIS_NO_REPLICA", "sometimes")
    with pytest.raises(SystemExit, match="SHIKOKU_REDIS_NO_REPLICA is degrade or refuse"):
        Replication.from_env()
