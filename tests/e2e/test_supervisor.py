"""`shikoku run` survives one of its processes dying: the supervisor starts it again on its own
address, after a delay that doubles while it keeps failing, says so in one line, and the
others go on serving; Ctrl-C still stops everything. Real processes (`shikoku run`, its
children found in the process table), real sockets, real games through the gateway."""

from __future__ import annotations

import re
import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
import redis

from shikoku_dev.supervisor import Backoff, exit_status
from shikoku_sdk import Client, RandomPlayer, seat_table
from tests.e2e.api import System
from tests.e2e.launch import start_system, stop_system
from tools.health import check

RULES = "services.rules.shell.server"
# Limits far above what a few bot moves need (the defaults would slow the bots down).
FAST = {"SHIKOKU_RATE_PER_SECOND": "10000", "SHIKOKU_RATE_BURST": "10000"}
pytestmark = pytest.mark.e2e  # the whole module, with its three tests of the pure policy
# A restarted process is a new Python interpreter importing grpc and the rules: a second or
# two on a loaded 2-core machine; this leaves room for much worse.
BACK_SECONDS = 20.0


# -- the delays, as a pure policy ------------------------------------------------------------


def test_the_delay_doubles_while_a_process_keeps_dying_up_to_the_cap() -> None:
    backoff = Backoff(first=0.5, cap=30.0, steady=60.0)
    delays = [backoff.after(uptime=1.0) for _ in range(9)]
    assert delays == [0.5, 1, 2, 4, 8, 16, 30, 30, 30]


def test_a_process_that_stayed_up_a_while_starts_from_the_first_delay_again() -> None:
    backoff = Backoff(first=0.5, cap=30.0, steady=60.0)
    assert [backoff.after(1.0) for _ in range(4)] == [0.5, 1, 2, 4]
    assert backoff.after(uptime=59.0) == 8
    assert backoff.after(uptime=60.0) == 0.5
    assert backoff.after(uptime=0.2) == 1


def test_exit_statuses_read_as_signals_or_codes() -> None:
    assert exit_status(-9) == "signal 9"
    assert exit_status(1) == "code 1"


# -- helpers ---------------------------------------------------------------------------------


def wait_for(what: str, found: Callable[[], object], timeout: float = BACK_SECONDS) -> object:
    deadline = time.monotonic() + timeout
    while not (result := found()):
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout} s: {what}")
        time.sleep(0.05)
    return result


def lines(system: System) -> list[str]:
    return [line.rstrip("\n") for line in list(system.output)]


def line_matching(system: System, pattern: str, timeout: float = BACK_SECONDS) -> re.Match[str]:
    def find() -> re.Match[str] | None:
        return next((m for line in lines(system) if (m := re.fullmatch(pattern, line))), None)

    found = wait_for(f"a line {pattern!r} in {lines(system)}", find, timeout)
    assert isinstance(found, re.Match)
    return found


def children(system: System) -> list[psutil.Process]:
    return list(psutil.Process(system.process.pid).children(recursive=True))


def processes_of(system: System, module: str) -> list[psutil.Process]:
    return [p for p in psutil.Process(system.process.pid).children() if module in p.cmdline()]


def own_address(process: psutil.Process) -> str:
    """Where a service process listens, by its environment as the supervisor set it."""
    env = process.environ()
    return env.get("SHIKOKU_RULES_LISTEN_ADDR") or env["SHIKOKU_RULES_ADDR"]


def serving(address: str) -> bool:
    return check(address, timeout=1.0) == "SERVING"


def play(player: RandomPlayer, client: Client, moves: int) -> int:
    """Takes `moves` actions in the game; returns the game's version afterwards."""
    for _ in range(moves):
        assert player.step(), "the game ended or nobody of ours may act"
    return int(client.state(player.game_id).version)


def stopped_cleanly(system: System, sig: signal.Signals = signal.SIGINT) -> None:
    """SIGINT (Ctrl-C) or SIGTERM stops `shikoku run` with 0, every one of its processes gone,
    and no process was started again while stopping."""
    everyone = children(system)
    assert len(everyone) >= 6, everyone  # Redis and the five services at least
    said = len(system.output)
    system.process.send_signal(sig)
    assert system.process.wait(timeout=60) == 0, "".join(system.output)
    _gone, alive = psutil.wait_procs(everyone, timeout=10)
    assert alive == [], alive
    after = lines(system)[said:]
    assert not [line for line in after if "restarting" in line or " is back" in line], after
    assert after[-1] == "stopped", after


@pytest.fixture
def system() -> Iterator[System]:
    system = start_system(None, **FAST)
    yield system
    stop_system(system)


@pytest.fixture
def cluster_system() -> Iterator[System]:
    system = start_system(None, "--cluster", **FAST)
    yield system
    stop_system(system)


# -- shikoku run -----------------------------------------------------------------------------


@pytest.mark.e2e
def test_a_killed_rules_process_comes_back_and_one_failing_at_start_is_retried(
    system: System,
) -> None:
    """SIGKILL of the rules process; its port then taken by another socket, so the restarted
    process cannot listen and exits at once: the supervisor says each death and waits 0.5, then
    1 s; the lobby keeps answering through the gateway meanwhile. Once the port is free, rules
    is back on it and the game goes on where it was."""
    # Enough attempts (the SDK's backoff: 0.1 s doubling) to outlast the gateway's wait before
    # it tries the returned rules process again (at most 2 s, infra.config.RECONNECT_MAX_MS).
    client = Client(system.gateway, api_key=system.api_key, attempts=10)
    table = seat_table(client, 3)
    player = RandomPlayer(table.game_id, table.seats, seed=1)
    before = play(player, client, 5)
    (rules,) = processes_of(system, RULES)
    address = own_address(rules)
    others = {p.pid for p in children(system)} - {rules.pid}
    host, _, port = address.rpartition(":")

    rules.kill()
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # The restart comes half a second after the death, and its process needs longer than that
    # to import what it runs before it binds.
    deadline = time.monotonic() + 1.0
    while True:
        try:
            squatter.bind((host, int(port)))
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)
    squatter.listen()
    try:
        line_matching(system, r"rules exited \(signal 9\); restarting in 0\.5 s")
        line_matching(system, r"rules exited \(code 1\); restarting in 1 s")
        # Everything else kept running and serving.
        assert others <= {p.pid for p in children(system)}
        assert list(client.list_tables())
        assert client.create_table(3).table.table_id
    finally:
        squatter.close()

    back = line_matching(system, rf"rules is back on {re.escape(address)} \(pid (\d+)\)")
    (again,) = processes_of(system, RULES)
    assert again.pid == int(back.group(1)) != rules.pid
    assert own_address(again) == address
    assert serving(address)
    assert play(player, client, 5) > before
    client.close()
    stopped_cleanly(system)


# -- shikoku run --cluster -------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.slow
def test_with_a_cluster_the_other_rules_process_serves_while_the_killed_one_comes_back(
    cluster_system: System,
) -> None:
    system = cluster_system
    client = Client(system.gateway, api_key=system.api_key, attempts=10)
    table = seat_table(client, 3)
    player = RandomPlayer(table.game_id, table.seats, seed=2)
    before = play(player, client, 5)
    replicas = processes_of(system, RULES)
    assert len(replicas) == 2
    everyone = replicas[0].environ()["SHIKOKU_RULES_ADDR"].split(",")
    second = next(p for p in replicas if own_address(p) == everyone[1])
    address = own_address(second)
    others = {p.pid for p in children(system)} - {second.pid}

    second.kill()
    # The game goes on through the other rules process while this one is down.
    during = play(player, client, 3)
    assert during > before
    assert not [line for line in lines(system) if line.startswith("rules-2 is back")], (
        "the moves were answered only after rules-2 was back: too slow to tell"
    )
    line_matching(system, r"rules-2 exited \(signal 9\); restarting in 0\.5 s")
    back = line_matching(system, rf"rules-2 is back on {re.escape(address)} \(pid (\d+)\)")
    assert int(back.group(1)) != second.pid
    assert serving(address)
    assert others <= {p.pid for p in children(system)}
    died = [line for line in lines(system) if re.match(r"\S+ exited", line)]
    assert [line.split()[0] for line in died] == ["rules-2"], died
    after = play(player, client, 5)
    assert after > during

    # A master of the cluster dies: it is started again on its port once its replica has taken
    # its slots over (the cluster's node timeout and an election, some seconds), and comes back
    # as a replica. Sooner, it would serve its slots empty and its replica would copy that.
    port = next(port for port in cluster_ports(system) if role(port) == "master")
    (node,) = [
        p
        for p in children(system)
        if p.name() == "redis-server" and re.search(rf":{port}\b", " ".join(p.cmdline()))
    ]
    said = len(system.output)
    node.kill()
    line_matching(system, rf"redis node {port} exited \(signal 9\); restarting in 0\.5 s")
    line_matching(
        system,
        rf"redis node {port} served slots: waiting for its replica to take them over before "
        r"starting it again \(it would come back empty\)",
    )
    line_matching(system, rf"redis node {port} is back", timeout=60)
    assert role(port) == "slave"
    news = [line for line in lines(system)[said:] if line.startswith(f"redis node {port}")]
    assert [line.split(": ")[0].split(";")[0] for line in news] == [
        f"redis node {port} exited (signal 9)",
        f"redis node {port} served slots",
        f"redis node {port} is back",
    ], news
    assert play(player, client, 5) > after
    client.close()
    stopped_cleanly(system)


def cluster_ports(system: System) -> list[int]:
    nodes = system.redis_url.removeprefix("redis+cluster://").split(",")
    return [int(node.rpartition(":")[2]) for node in nodes]


def role(port: int) -> str:
    try:
        with redis.Redis(port=port, socket_timeout=1.0) as node:
            reply = node.execute_command("ROLE")
    except redis.RedisError:
        return "down"
    return str(reply[0].decode())


# -- the embedded Redis ----------------------------------------------------------------------


def redis_server(system: System) -> psutil.Process:
    (server,) = [p for p in children(system) if "redis-server" in p.name()]
    return server


@pytest.mark.e2e
def test_a_durable_redis_that_dies_comes_back_with_the_games(tmp_path: Path) -> None:
    system = start_system(None, "--durable", "--data-dir", str(tmp_path), **FAST)
    try:
        client = Client(system.gateway, api_key=system.api_key, attempts=10)
        table = seat_table(client, 3)
        player = RandomPlayer(table.game_id, table.seats, seed=3)
        before = play(player, client, 5)
        server = redis_server(system)
        port = system.redis_url.rpartition(":")[2].partition("/")[0]
        server.kill()
        line_matching(system, r"redis exited \(signal 9\); restarting in 0\.5 s")
        line_matching(system, rf"redis is back on 127\.0\.0\.1:{port}")
        assert redis_server(system).pid != server.pid
        # The game is still there, at the version it had, and goes on.
        assert int(client.state(table.game_id).version) == before
        assert play(player, client, 5) > before
        client.close()
        stopped_cleanly(system, signal.SIGTERM)
    finally:
        stop_system(system)


@pytest.mark.e2e
def test_a_redis_without_durable_that_dies_stops_everything_saying_why(system: System) -> None:
    everyone = children(system)
    redis_server(system).kill()
    assert system.process.wait(timeout=60) == 1
    _gone, alive = psutil.wait_procs(everyone, timeout=10)
    assert alive == [], alive
    said = lines(system)
    assert (
        "redis exited (signal 9); it held the games in memory only, so they are gone: stopping "
        "everything (shikoku run --durable keeps them on disk)"
    ) in said, said
    assert said[-1] == "stopped", said
    assert not [line for line in said if "restarting" in line], said


def test_ports_picked_for_replicas_never_repeat_an_address_of_the_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A free port is not reserved: the port a caller set for the lobby (free when picked, the
    lobby not started yet) can come back from the system's own draw, as it once did in CI, and
    two processes then claim it. The draw passes over every port the settings name."""
    from shikoku_dev import supervisor

    drawn = iter([50052, 50053, 50061, 50062])
    monkeypatch.setattr(supervisor, "free_port", lambda: next(drawn))
    system = supervisor.System(
        env={"SHIKOKU_LOBBY_ADDR": "127.0.0.1:50052", "SHIKOKU_RULES_ADDR": "127.0.0.1:50053"}
    )
    assert [system._unclaimed_port(), system._unclaimed_port()] == [50061, 50062]
