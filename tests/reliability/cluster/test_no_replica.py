"""A Redis Cluster shard whose master has no replica left, under `SHIKOKU_REDIS_NO_REPLICA`.

First the event store alone, on a cluster of its own (3 masters, a replica each), whose replica
of one master is killed (the shard is then without replica, as after a failover) and restarted:
`degrade` acknowledges appends on the master at once and counts them, `refuse` refuses them with
NO_REPLICA at once, writing nothing; an append that reached the master just before its replica
was lost is not acknowledged, nor is its retry, until a replica has it; both leave the state by
themselves when the replica is back. The same on one Redis server whose replica is detached, and
the append script's count of good replicas is the store's.

Then the whole system (`test_bot_games_go_on_while_a_killed_master_stays_down`): bot games
through the gateways while a master is killed and stays down, its replica promoted and without
one, for `SHIKOKU_MASTER_DOWN_SECONDS`.
"""

from __future__ import annotations

import asyncio
import gc
import io
import os
import random
import signal
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import grpc
import pytest
import redis
import redis.asyncio
from prometheus_client import REGISTRY
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from infra.eventstore import (
    GOOD_REPLICAS_LUA,
    RECOUNT_SECONDS,
    REPORTED_SECONDS,
    EventStore,
    NewEvent,
    NoReplica,
    NotReplicated,
    ReplicaCounts,
    Replication,
    good_replicas,
    stream_key,
)
from infra.process_settings import ReplicationSettings
from infra.settings import SettingsError, load
from services.rules.domain import undo
from shikoku.v1 import game_pb2
from shikoku_dev.redis_cluster import HOST, EmbeddedRedisCluster
from shikoku_dev.redis_server import EmbeddedRedis
from shikoku_dev.supervisor import System
from shikoku_sdk import Client, RandomPlayer, ShikokuError
from shikoku_sdk.random_player import choose, command_for
from tests.e2e.observing import scrape, total

from .conftest import cluster_client
from .test_eventstore_cluster import ids_by_master
from .test_failover import ACTIONS_LIMIT, GAMES, Game, read_games

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # the services on a Redis Cluster

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


async def test_a_node_that_is_no_master_is_no_shard_without_replica(
    cluster: EmbeddedRedisCluster, client: RedisCluster
) -> None:
    """As a client's slot map may still name a failed-over master that came back a replica: its
    INFO shows no replicas, and that must not pass for a master without any."""
    counts = ReplicaCounts(client, 1)
    replica = client.get_node(host=HOST, port=cluster.replica_ports()[0])
    assert replica is not None
    assert await counts.replicas(replica) == 1
    assert counts.without_replica(time.monotonic()) == set()
    master = client.get_primaries()[0]
    assert await counts.replicas(master) == 1
    lonely = lose_replica(cluster, int(master.port))
    try:
        assert await counts.replicas(master, fresh=True) == 0
        assert counts.without_replica(time.monotonic()) == {master.name}
    finally:
        cluster.restart(lonely)


def replicate(replica: EmbeddedRedis, master: EmbeddedRedis | None) -> None:
    """Makes `replica` replicate `master` (None: no one) and waits until the master agrees."""
    with redis.Redis(host=HOST, port=replica.port) as node:
        node.execute_command("REPLICAOF", *((HOST, master.port) if master else ("NO", "ONE")))
    if master is None:
        return
    deadline = time.monotonic() + 10
    with redis.Redis(host=HOST, port=master.port) as node:
        while good_replicas(node.info("replication")) < 1:
            assert time.monotonic() < deadline, "the replica did not come online"
            time.sleep(0.02)


async def test_one_redis_server_without_its_replica_follows_the_policy_too() -> None:
    master, replica = EmbeddedRedis().start(), EmbeddedRedis().start()
    client = redis.asyncio.Redis(host=HOST, port=master.port)
    try:
        replicate(replica, master)
        degrading = EventStore(client, "game", Replication(1, WAIT_MS, "degrade"))
        refusing = EventStore(client, "game", Replication(1, WAIT_MS, "refuse"))
        assert await degrading.append("g-1", 0, event(0)) == 1
        assert await refusing.append("g-2", 0, event(0)) == 1
        replicate(replica, None)
        await asyncio.sleep(RECOUNT_SECONDS)
        before, start = degraded(), time.monotonic()
        for n in range(1, 11):
            assert await degrading.append("g-1", n, event(n)) == n + 1
        with pytest.raises(NoReplica):
            await refusing.append("g-2", 1, event(1))
        assert time.monotonic() - start < AT_ONCE_S
        assert degraded() - before == 10
        assert without_replica() == 1
        replicate(replica, master)

        async def accepted_again() -> bool:
            try:
                await refusing.append("g-2", 1, event(1))
            except NoReplica:
                return False
            return True

        await until(accepted_again, RECOUNT_SECONDS + 3, "writes stayed refused")
        before = degraded()
        assert await degrading.append("g-1", 11, event(11)) == 12
        assert degraded() == before
        assert without_replica() == 0
    finally:
        await client.aclose()
        replica.stop()
        master.stop()
        gc.collect()


REPLICA_LINES = [
    # (INFO replication lines of the replicas, good ones): the lag is whole seconds of the
    # server's clock, and reads -1 just after an acknowledgement.
    (["state=online,offset=9,lag=-1"], 1),
    (["state=online,offset=9,lag=0", "state=online,offset=7,lag=5"], 2),
    (["state=online,offset=9,lag=6"], 0),
    (["state=wait_bgsave,offset=0,lag=0", "state=send_bulk,offset=0,lag=0"], 0),
    ([], 0),
]


@pytest.mark.parametrize(("lines", "good"), REPLICA_LINES)
async def test_the_script_and_the_store_count_the_same_good_replicas(
    client: RedisCluster, lines: list[str], good: int
) -> None:
    text = "\r\n".join(
        ["# Replication", "role:master", f"connected_slaves:{len(lines)}"]
        + [f"slave{n}:ip=127.0.0.1,port={7000 + n},{line}" for n, line in enumerate(lines)]
        + ["master_repl_offset:9", ""]
    )
    counted = await client.eval(GOOD_REPLICAS_LUA + "return good_replicas(ARGV[1])", 0, text)
    assert counted == good
    parsed: dict[str, object] = {"role": "master", "connected_slaves": len(lines)}
    for n, line in enumerate(lines):
        fields = dict(field.split("=") for field in line.split(","))
        parsed[f"slave{n}"] = {**fields, "lag": int(fields["lag"])}
    assert good_replicas(parsed) == good


def test_the_policy_is_read_from_the_settings() -> None:
    def policy(environ: dict[str, str]) -> Replication:
        return load(ReplicationSettings, environ).policy

    assert policy({}) == Replication(0, 1_000, "degrade")
    assert policy({"SHIKOKU_REDIS_NO_REPLICA": " Refuse", "SHIKOKU_REDIS_WAIT_REPLICAS": "1"}) == (
        Replication(1, 1_000, "refuse")
    )
    with pytest.raises(SettingsError, match="SHIKOKU_REDIS_NO_REPLICA: expected one of degrade"):
        policy({"SHIKOKU_REDIS_NO_REPLICA": "sometimes"})


# -- the whole system: a killed master that stays down ---------------------------------------

#: How long the killed master stays down under `degrade` (its replica promoted, the shard
#: without replica); `refuse` is tried for a few seconds after that. `make soak` keeps it
#: down a minute.
MASTER_DOWN_SECONDS = float(os.environ.get("SHIKOKU_MASTER_DOWN_SECONDS", "10"))
SYSTEM_WAIT_MS = 2_000
#: Retries of one call: through a failover (~7 s) and the refused seconds, 1 s apart.
BOT_ATTEMPTS = 40


@dataclass
class ShardBot:
    """Plays games one after another, each at a new table whose game's stream is on the shard
    (`on`) or off it, until `enough` is set; notes when each command was acknowledged."""

    client: Client
    players: int
    on_shard: Callable[[str], bool]
    on: bool
    rng: random.Random
    enough: threading.Event
    games: list[Game] = field(default_factory=list)
    #: (when, game id) of every acknowledged command
    acks: list[tuple[float, str]] = field(default_factory=list)
    error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.enough.is_set():
                game_id, seats = seat_table_where(self.client, self.players, self.wanted)
                game = Game(game_id, seats)
                self.games.append(game)

                def acknowledged(
                    answer: game_pb2.SubmitCommandResponse, _seconds: float, game: Game = game
                ) -> None:
                    game.acknowledged.update({e.version: e.type for e in answer.events})
                    self.acks.append((time.monotonic(), game.game_id))

                RandomPlayer(game_id, seats, self.rng).play(ACTIONS_LIMIT, acknowledged)
                game.ended = True
        except BaseException as error:  # reported by the test
            self.error = error

    def wanted(self, game_id: str) -> bool:
        return self.on_shard(game_id) == self.on

    def rate(self, start: float, end: float) -> tuple[int, float]:
        """Commands acknowledged in (start, end], and the seconds from the first of them to
        `end` (a bot may still be backing off from the failover at `start`)."""
        times = [at for at, _ in self.acks if start < at <= end]
        return len(times), (end - times[0]) if times else 0.0


def seat_table_where(
    client: Client, players: int, wanted: Callable[[str], bool]
) -> tuple[str, dict[int, Client]]:
    """A started table of `players` seats, all held here, whose game id `wanted` accepts (the
    tables made on the way are left empty)."""
    while True:
        created = client.create_table(players, display_name="no-replica bots")
        table_id = created.table.table_id
        if wanted(table_id):
            break
    seats: dict[int, Client] = {}
    for n in range(1, players + 1):
        joined = client.join_table(table_id, f"bot {n}")
        seats[joined.seat] = client.with_credential(joined.seat_token)
    game_id = client.with_credential(created.host_token).start_table(table_id).game_id
    assert game_id == table_id  # a game's stream is on its table's shard
    return game_id, seats


def where(on_shard: Callable[[str], bool], on: bool) -> Callable[[str], bool]:
    return lambda game_id: on_shard(game_id) == on


def slots_of(port: int) -> list[tuple[int, int]]:
    with redis.Redis(host=HOST, port=port) as node:
        ranges = cast(list[list[Any]], node.execute_command("CLUSTER SLOTS"))
    return [(int(r[0]), int(r[1])) for r in ranges if int(r[2][1]) == port]


def metrics_of(system: System, *names: str) -> list[str]:
    return [scrape(f"http://{p.metrics}/metrics") for n in names for p in system.processes(n)]


def next_command(player: RandomPlayer) -> tuple[int, game_pb2.Command]:
    """The seat and the command a random player would take next (not sent)."""
    listed = player.reader.legal_actions(player.game_id).actions
    action = choose([a for a in listed if a.seat in player.seats], player.rng)
    return action.seat, command_for(action, player.rng, player.best_routes)


@pytest.fixture(scope="module")
def system() -> Iterator[System]:
    system = System.on_free_ports(log=io.StringIO(), cluster=True, replicas=2)
    system.env["SHIKOKU_RATE_PER_SECOND"] = "0"  # the bots play at machine speed
    system.env["SHIKOKU_REDIS_WAIT_REPLICAS"] = "1"
    system.env["SHIKOKU_REDIS_WAIT_MS"] = str(SYSTEM_WAIT_MS)
    system.env.pop("SHIKOKU_REDIS_NO_REPLICA", None)  # the default policy first
    with system:
        yield system


def test_bot_games_go_on_while_a_killed_master_stays_down(system: System) -> None:
    """Bot games on the shard of a killed master (half of them) and off it, the master down
    `MASTER_DOWN_SECONDS` after its replica took over: under the default policy the games on
    that shard go at the pace of the others, the gauge shows the shard; then, the rules
    processes restarted under `refuse`, a command for a game there is refused NO_REPLICA at
    once, writing nothing, while one off it is accepted; then the master is back as a replica,
    the refused command retried is acknowledged, the gauge is 0 in every process, every game
    ends, and no acknowledged event is lost or out of place."""
    cluster = system.redis_cluster
    assert cluster is not None
    target = cluster.masters_ports()[0]
    ranges = slots_of(target)

    def on_shard(game_id: str) -> bool:
        slot = key_slot(stream_key("game", game_id).encode())
        return any(first <= slot <= last for first, last in ranges)

    prober = Client(system.gateway_target, api_key=system.api_key, attempts=BOT_ATTEMPTS)
    probes = {
        on: RandomPlayer(*seat_table_where(prober, 3, where(on_shard, on)), 7)
        for on in (True, False)
    }
    once = Client(system.gateway_target, api_key=system.api_key, attempts=1)
    enough = threading.Event()
    bots = [
        ShardBot(
            Client(system.gateway_target, api_key=system.api_key, attempts=BOT_ATTEMPTS),
            3 + n % 2,
            on_shard,
            n % 2 == 0,
            random.Random(n),
            enough,
        )
        for n in range(max(GAMES, 2))
    ]
    threads = [threading.Thread(target=bot.run, daemon=True) for bot in bots]
    began = time.monotonic()
    marks: list[str] = []

    def mark(what: str) -> None:
        marks.append(f"{time.monotonic() - began:.1f} s {what}")

    for thread in threads:
        thread.start()
    try:
        time.sleep(2.0)
        cluster.kill(target)
        promoted = cluster.wait_for_failover(target, timeout=30)
        promoted_at = time.monotonic()
        mark("promoted")
        time.sleep(MASTER_DOWN_SECONDS)
        degraded_until = time.monotonic()

        # The default policy: the shard's games go on at the others' pace.
        rules = metrics_of(system, "rules")
        shown = [total(text, "shikoku_redis_shards_without_replica") for text in rules]
        accepted = sum(
            total(t, "shikoku_redis_writes_without_replica_total", outcome="degraded")
            for t in rules
        )
        paces = {}
        for on in (True, False):
            counted = [bot.rate(promoted_at, degraded_until) for bot in bots if bot.on == on]
            commands, seconds = sum(n for n, _ in counted), sum(s for _, s in counted)
            paces[on] = (commands, seconds)
        (on_n, on_s), (off_n, off_s) = paces[True], paces[False]
        pace = f"on the shard {on_n} in {on_s:.1f} s, off it {off_n} in {off_s:.1f} s"
        print(f"master {target} down, {promoted} promoted: {pace}; degraded writes {accepted}")
        assert on_s >= 2.0 and off_s >= 2.0, f"too little played to compare: {pace}"
        assert on_n / on_s >= (off_n / off_s) / 3, f"the shard without replica slowed: {pace}"
        assert max(shown) == 1, f"shikoku_redis_shards_without_replica of the rules: {shown}"
        assert accepted > 0

        # `refuse` (in the rules processes, the games' writers): a command on that shard is
        # refused at once, and nothing is written. The bots finish the games they are in.
        enough.set()
        system.env["SHIKOKU_REDIS_NO_REPLICA"] = "refuse"
        restarts = [
            threading.Thread(target=system.restart, args=(process,))
            for process in system.processes("rules")
        ]
        for restart in restarts:
            restart.start()
        for restart in restarts:
            restart.join()
        mark("rules restarted under refuse")
        probe = probes[True]
        version = probe.reader.state(probe.game_id).version
        number, command = next_command(probe)
        command_id = str(uuid.uuid4())
        seat = once.with_credential(probe.seats[number].credential or "")
        took: list[float] = []
        deadline = time.monotonic() + 15  # the gateways reconnect to the new processes
        while time.monotonic() < deadline:
            start = time.monotonic()
            try:
                seat.act(probe.game_id, command, command_id)
            except ShikokuError as error:
                if error.reason in ("", "RULES_UNAVAILABLE"):  # a restarted process's channel
                    time.sleep(0.2)
                    continue
                assert (error.code, error.reason) == (grpc.StatusCode.UNAVAILABLE, "NO_REPLICA")
                took.append(time.monotonic() - start)
                if len(took) == 3:
                    break
            else:
                raise AssertionError("a command on a shard without replica was accepted")
        print(f"refused NO_REPLICA in {', '.join(f'{t * 1000:.0f} ms' for t in took)}")
        assert len(took) == 3 and max(took) < SYSTEM_WAIT_MS / 1000 / 2, took
        assert probe.reader.state(probe.game_id).version == version, "a refusal wrote"
        rules = metrics_of(system, "rules")
        assert max(total(text, "shikoku_redis_shards_without_replica") for text in rules) == 1
        assert sum(
            total(text, "shikoku_redis_writes_without_replica_total", outcome="refused")
            for text in rules
        ) >= len(took)
        assert probes[False].step(), "a command off the shard was not accepted"

        # The master back, as a replica: the shard leaves the state by itself.
        cluster.restart(target)
        mark("master back as a replica")
        answer = probe.seats[number].act(probe.game_id, command, command_id)
        assert answer.events and answer.events[0].version == version + 1
        deadline = time.monotonic() + REPORTED_SECONDS + 10
        while any(
            total(text, "shikoku_redis_shards_without_replica")
            for text in metrics_of(system, "rules", "lobby")
        ):
            assert time.monotonic() < deadline, "a process still shows a shard without replica"
            time.sleep(0.5)
        mark("no process shows a shard without replica")
    finally:
        enough.set()
    for thread in threads:
        thread.join(timeout=300)
    mark("every game ended")
    print("; ".join(marks))
    failures = [repr(bot.error) for bot in bots if bot.error]
    assert not failures, failures
    games = [game for bot in bots for game in bot.games]
    assert all(game.ended for game in games), "games still going"

    stored = asyncio.run(read_games(system, [game.game_id for game in games]))
    for game in games:
        log = stored[game.game_id]
        versions = [logged.version for logged in log]
        assert versions == list(range(1, len(log) + 1)), f"{game.game_id}: a gap or a duplicate"
        types = {logged.version: type(logged.event).__name__ for logged in log}
        lost = {v: t for v, t in game.acknowledged.items() if types.get(v) != t}
        assert not lost, f"{game.game_id}: acknowledged events missing or changed: {lost}"
        assert undo.state_of(log).result is not None, f"{game.game_id} has no result"
    for bot in bots:
        bot.client.close()
    prober.close()
    once.close()
