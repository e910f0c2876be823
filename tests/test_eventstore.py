"""The event-log contract (infra/eventlog.py `EventLog`), one suite for every adapter: the log in
memory, the Redis store on one Redis server, and the Redis store on a Redis Cluster of 3 masters
(aggregate ids chosen so that their streams land on every master). What only the cluster has is
in tests/reliability/cluster/test_eventstore_cluster.py, the replica policies in
tests/reliability/cluster/test_no_replica.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
import redis.asyncio
from prometheus_client import REGISTRY
from redis.asyncio.cluster import RedisCluster

from infra.eventlog import (
    FOLLOW_BATCH,
    Appended,
    EventLog,
    MemoryEventLog,
    NewEvent,
    StoredEvent,
    VersionConflict,
)
from infra.eventstore import EventStore, stream_key
from shikoku_dev.redis_cluster import EmbeddedRedisCluster
from tests.reliability.cluster.conftest import cluster_client, spread_ids


def batch(*types: str) -> list[NewEvent]:
    return [NewEvent(t, 1, {"n": i, "name": t}) for i, t in enumerate(types)]


@dataclass
class Backend:
    """Logs of one adapter, all on the same data: `log(kind)` on the test's client, `logs(n)`
    on `n` clients of their own (as `n` processes would be)."""

    name: str
    ids: list[str]
    client: redis.asyncio.Redis | RedisCluster | None = None
    redis_url: str = ""
    cluster: EmbeddedRedisCluster | None = None
    memory: dict[str, MemoryEventLog] = field(default_factory=dict)
    opened: list[redis.asyncio.Redis | RedisCluster] = field(default_factory=list)

    def log(self, kind: str = "game") -> EventLog:
        if self.client is None:
            return self.memory.setdefault(kind, MemoryEventLog(kind))
        return EventStore(self.client, kind)

    async def logs(self, n: int, kind: str = "game") -> list[EventLog]:
        if self.client is None:
            return [self.log(kind)] * n
        for _ in range(n):
            if self.cluster is not None:
                self.opened.append(await cluster_client(self.cluster))
            else:
                self.opened.append(redis.asyncio.Redis.from_url(self.redis_url))
        return [EventStore(client, kind) for client in self.opened[-n:]]


@pytest.fixture(params=["memory", "redis", pytest.param("cluster", marks=pytest.mark.slow)])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    ids = [f"t-{n:012x}" for n in range(3)]
    if request.param == "memory":
        found = Backend("memory", ids)
    elif request.param == "redis":
        url: str = request.getfixturevalue("redis_url")
        plain = redis.asyncio.Redis.from_url(url)
        await plain.flushdb()
        found = Backend("redis", ids, plain, url)
        found.opened.append(plain)
    else:
        cluster: EmbeddedRedisCluster = request.getfixturevalue("redis_cluster")
        client = await cluster_client(cluster)
        await client.flushall(target_nodes=RedisCluster.PRIMARIES)
        found = Backend("cluster", spread_ids(client, 1), client, cluster=cluster)
        found.opened.append(client)
    yield found
    for opened in found.opened:
        await opened.aclose()


async def first_event(log: EventLog, aggregate: str, from_version: int = 1) -> StoredEvent:
    async for event in log.follow(aggregate, from_version, block_ms=100):
        return event
    raise AssertionError("follow ended")


def counted(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_key_uses_the_aggregate_id_as_hash_tag() -> None:
    assert stream_key("game", "g-1") == "game:{g-1}:events"


async def test_append_then_read_returns_events_with_gapless_versions(backend: Backend) -> None:
    log = backend.log()
    for aggregate in backend.ids:
        assert await log.append(aggregate, 0, batch("A", "B"), cause={"seat": 1}) == 2
        assert await log.append(aggregate, 2, batch("C")) == 3
    for aggregate in backend.ids:
        events = await log.read(aggregate)
        assert [(e.version, e.type, e.payload["name"]) for e in events] == [
            (1, "A", "A"),
            (2, "B", "B"),
            (3, "C", "C"),
        ]
        assert [e.cause for e in events] == [{"seat": 1}, None, None]
        assert [e.version for e in await log.read(aggregate, 2)] == [2, 3]
        assert [e.version for e in await log.read(aggregate, 1, 2)] == [1, 2]
        assert [e.version for e in await log.read(aggregate, 0, 1)] == [1]
        assert await log.read(aggregate, 4) == []
        assert await log.version(aggregate) == 3
    assert await log.version("t-unknown") == 0
    assert await log.read("t-unknown") == []


async def test_append_at_a_stale_version_writes_nothing(backend: Backend) -> None:
    log = backend.log()
    for aggregate in backend.ids:
        await log.append(aggregate, 0, batch("A"))
        with pytest.raises(VersionConflict) as conflict:
            await log.append(aggregate, 0, batch("X", "Y"))
        assert (conflict.value.expected, conflict.value.actual) == (0, 1)
        with pytest.raises(VersionConflict) as ahead:
            await log.append(aggregate, 5, batch("X"))
        assert (ahead.value.expected, ahead.value.actual) == (5, 1)
        assert [e.type for e in await log.read(aggregate)] == ["A"]
        assert await log.version(aggregate) == 1


async def test_concurrent_appends_at_one_version_let_exactly_one_win(backend: Backend) -> None:
    """Ten writers per aggregate, from three clients (three processes), race at each version."""
    logs = await backend.logs(3)
    for version in (0, 1):
        attempts = [
            (aggregate, logs[i % 3].append(aggregate, version, batch(f"E{version}-{i}")))
            for aggregate in backend.ids
            for i in range(10)
        ]
        results = await asyncio.gather(*(a for _id, a in attempts), return_exceptions=True)
        for aggregate in backend.ids:
            mine = [r for (a, _), r in zip(attempts, results, strict=True) if a == aggregate]
            assert mine.count(version + 1) == 1, mine
            assert sum(isinstance(r, VersionConflict) for r in mine) == 9, mine
    for aggregate in backend.ids:
        assert [e.version for e in await logs[0].read(aggregate)] == [1, 2]


async def test_payloads_come_back_as_stored_not_as_the_callers_objects(backend: Backend) -> None:
    log = backend.log()
    payload = {"company": "TR", "price": 20, "path": (1, 2), "nested": {"a": [3]}}
    await log.append("g-1", 0, [NewEvent("PrivateSold", 3, payload)])
    payload["price"] = 999
    (event,) = await log.read("g-1")
    assert (event.type, event.schema_version, event.payload) == (
        "PrivateSold",
        3,
        {"company": "TR", "price": 20, "path": [1, 2], "nested": {"a": [3]}},
    )
    event.payload["price"] = 0
    assert (await log.read("g-1"))[0].payload["price"] == 20


async def test_a_batch_keeps_its_cause_on_its_first_event(backend: Backend) -> None:
    log = backend.log()
    await log.append("g-1", 0, batch("A", "B"), cause={"type": "Pass", "seat": 2})
    await log.append("g-1", 2, batch("C"))
    causes = [event.cause for event in await log.read("g-1")]
    assert causes == [{"type": "Pass", "seat": 2}, None, None]


async def test_several_logs_read_at_once_are_each_log_whole(backend: Backend) -> None:
    log = backend.log("table")
    one, two, _three = backend.ids
    await log.append(one, 0, batch("A", "B"))
    await log.append(two, 0, batch("C"))
    logs = await log.read_many([two, "t-none", one])
    assert logs == [await log.read(two), [], await log.read(one)]
    assert [len(events) for events in logs] == [1, 0, 2]
    assert await log.read_many([]) == []
    tails = await log.read_many([one, two, one], from_versions=[2, 1, 3])
    assert tails == [await log.read(one, 2), await log.read(two), []]


async def test_kinds_of_aggregate_are_separate_logs(backend: Backend) -> None:
    """A table and its game share the id, and each has its own stream and command ids."""
    games, tables = backend.log("game"), backend.log("table")
    await games.append_once("t-1", 0, batch("GameStarted"), command_id="c-1")
    assert await tables.version("t-1") == 0
    assert await tables.applied("t-1", "c-1") is None
    assert await tables.append_once("t-1", 0, batch("TableCreated"), command_id="c-1") == (
        Appended(1, 1)
    )
    assert [e.type for e in await games.read("t-1")] == ["GameStarted"]


async def test_follow_yields_old_events_then_new_ones_as_appended(backend: Backend) -> None:
    log = backend.log()
    seen: dict[str, list[int]] = {aggregate: [] for aggregate in backend.ids}

    async def watch(aggregate: str) -> None:
        async for event in log.follow(aggregate, from_version=2, block_ms=100):
            seen[aggregate].append(event.version)
            if event.version == 4:
                return

    for aggregate in backend.ids:
        await log.append(aggregate, 0, batch("A", "B"))
    watchers = [asyncio.create_task(watch(aggregate)) for aggregate in backend.ids]
    await asyncio.sleep(0.3)  # past a few empty waits
    for aggregate in backend.ids:
        await log.append(aggregate, 2, batch("C", "D"))
    await asyncio.wait_for(asyncio.gather(*watchers), 5)
    assert seen == {aggregate: [2, 3, 4] for aggregate in backend.ids}


async def test_a_follower_of_an_empty_stream_wakes_up_on_the_first_append(
    backend: Backend,
) -> None:
    """Followers of the same stream on other clients each get the batch, whole, at once."""
    logs = await backend.logs(3)
    aggregate = backend.ids[0]

    async def next_batch(log: EventLog) -> list[StoredEvent]:
        async for found in log.follow_batches(aggregate, block_ms=5_000):
            return found
        raise AssertionError("follow ended")

    followers = [asyncio.create_task(next_batch(log)) for log in logs]
    await asyncio.sleep(0.3)  # every follower waits
    assert not any(follower.done() for follower in followers)
    await logs[0].append(aggregate, 0, batch("A", "B", "C"))
    batches = await asyncio.wait_for(asyncio.gather(*followers), 2)
    assert [[e.type for e in found] for found in batches] == [["A", "B", "C"]] * 3


async def test_follow_batches_are_cut_at_the_batch_size(backend: Backend) -> None:
    log = backend.log()
    aggregate = backend.ids[0]
    await log.append(aggregate, 0, batch(*(f"E{i}" for i in range(FOLLOW_BATCH + 100))))
    sizes: list[tuple[int, int]] = []
    async for found in log.follow_batches(aggregate, 51):
        sizes.append((found[0].version, len(found)))
        if found[-1].version == FOLLOW_BATCH + 100:
            break
    assert sizes == [(51, FOLLOW_BATCH), (FOLLOW_BATCH + 51, 50)]


async def test_a_cancelled_follow_leaves_the_log_working(backend: Backend) -> None:
    """The gateway cancels a follow when its stream's client goes away, mid-wait. Nothing of it
    may be taken for the answer to a later call (on Redis: its XREAD's late reply on a pooled
    connection)."""
    log = backend.log()
    for aggregate in backend.ids:
        await log.append(aggregate, 0, batch("A"))
    followers = [
        asyncio.create_task(first_event(log, aggregate, from_version=2))
        for aggregate in backend.ids
        for _ in range(3)
    ]
    await asyncio.sleep(0.3)  # every follower waits
    for follower in followers:
        follower.cancel()
    _done, going_on = await asyncio.wait(followers, timeout=10)
    assert not going_on, "a cancelled follow went on"
    for aggregate in backend.ids:
        assert await log.append(aggregate, 1, batch("B", "C")) == 3
    for _ in range(5):
        for aggregate in backend.ids:
            assert await log.version(aggregate) == 3
            assert [e.type for e in await log.read(aggregate)] == ["A", "B", "C"]
    assert all(follower.cancelled() for follower in followers)


async def test_a_command_id_sent_by_many_clients_at_once_is_applied_once(
    backend: Backend,
) -> None:
    logs = await backend.logs(3)
    for aggregate in backend.ids:
        await logs[0].append(aggregate, 0, batch("A"))
    results = await asyncio.gather(
        *(
            logs[i % 3].append_once(
                aggregate, 1, batch("B", "C"), command_id="cmd-1", fingerprint="f-1"
            )
            for aggregate in backend.ids
            for i in range(10)
        )
    )
    for n, aggregate in enumerate(backend.ids):
        mine = results[n * 10 : (n + 1) * 10]
        assert {(r.first, r.last) for r in mine} == {(2, 3)}
        assert sum(not r.duplicate for r in mine) == 1
        assert {r.fingerprint for r in mine if r.duplicate} == {"f-1"}
        assert [e.type for e in await logs[1].read(aggregate)] == ["A", "B", "C"]
        assert await logs[2].applied(aggregate, "cmd-1") == Appended(
            2, 3, duplicate=True, fingerprint="f-1"
        )


async def test_an_applied_command_id_is_answered_before_the_version_is_checked(
    backend: Backend,
) -> None:
    log = backend.log()
    assert await log.applied("g-1", "cmd-1") is None
    assert await log.append_once("g-1", 0, batch("A", "B"), command_id="cmd-1") == Appended(1, 2)
    assert await log.append("g-1", 2, batch("C")) == 3
    again = await log.append_once("g-1", 0, batch("X"), command_id="cmd-1", fingerprint="other")
    assert again == Appended(1, 2, duplicate=True, fingerprint="")
    with pytest.raises(VersionConflict):  # another command id is checked against the version
        await log.append_once("g-1", 0, batch("X"), command_id="cmd-2")
    assert await log.applied("g-1", "cmd-2") is None
    assert await log.append_once("g-2", 0, batch("A"), command_id="cmd-1") == Appended(1, 1)
    assert [e.type for e in await log.read("g-1")] == ["A", "B", "C"]


async def test_appends_without_a_command_id_are_never_taken_for_duplicates(
    backend: Backend,
) -> None:
    log = backend.log()
    assert await log.append_once("g-1", 0, batch("A")) == Appended(1, 1)
    assert await log.append_once("g-1", 1, batch("B")) == Appended(2, 2)
    assert await log.applied("g-1", "") is None


async def test_every_adapter_counts_appended_events_and_conflicts(backend: Backend) -> None:
    kind = f"counted-{backend.name}"
    log = backend.log(kind)
    events = ("shikoku_events_appended_total", {"aggregate": kind, "event": "A"})
    conflicts = ("shikoku_version_conflicts_total", {"aggregate": kind})
    before = counted(events[0], **events[1]), counted(conflicts[0], **conflicts[1])
    await log.append_once("g-1", 0, batch("A", "A"), command_id="cmd-1")
    await log.append_once("g-1", 0, batch("A"), command_id="cmd-1")  # a duplicate: not counted
    with pytest.raises(VersionConflict):
        await log.append("g-1", 0, batch("A"))
    after = counted(events[0], **events[1]), counted(conflicts[0], **conflicts[1])
    assert (after[0] - before[0], after[1] - before[1]) == (2, 1)


async def test_the_memory_log_forgets_command_ids_a_day_after_the_last_command() -> None:
    """As Redis expires an aggregate's hash of command ids `COMMAND_ID_SECONDS` after the last
    command written to it (a duplicate renews it; asking whether one was applied does not)."""
    now = [1_000.0]
    log = MemoryEventLog("game", clock=lambda: now[0], command_id_seconds=100)
    await log.append_once("g-1", 0, batch("A"), command_id="cmd-1")
    now[0] += 60
    assert (await log.append_once("g-1", 0, batch("A"), command_id="cmd-1")).duplicate
    now[0] += 60
    assert await log.applied("g-1", "cmd-1") == Appended(1, 1, duplicate=True)
    now[0] += 40
    assert await log.applied("g-1", "cmd-1") is None
    assert await log.append_once("g-1", 1, batch("B"), command_id="cmd-1") == Appended(2, 2)
