"""Benchmark: tournament day (issue 25, docs/operations.md "Capacity model").

The whole system runs as real processes on loopback (shikoku_dev.supervisor, embedded
Redis, one process of each service). A host registers four players for each of `TABLES`
tables and creates a one-round tournament of 4-player tables; one StartRound seats and starts
the whole round (timed). The round is then watched as a host watches it: the console's one
WatchTournament stream (read here) and `shikoku tournament status --watch` (a subprocess, its
terminal output discarded). A sample of `SAMPLE` tables is played at human pace, one command
every `PERIOD` s each, by the SDK's random player holding each table's four seats.

Printed:
- the time StartRound took for the round;
- each process's CPU (per cent of a core) and RSS, at rest with the round live (nothing
  played) and while the sample plays; the lobby's, rules' and Redis's RSS per live table (what
  the round added over the tables);
- the delay from a command's acknowledgement to the console stream's update of its table with
  that version or later: p50, p99, max (target: p99 ≤ 1 s).

Settings (environment): SHIKOKU_TOURNAMENT_TABLES (default 1000), SHIKOKU_TOURNAMENT_SAMPLE
(tables played, default 20), SHIKOKU_TOURNAMENT_PERIOD (seconds between a table's commands,
default 2), SHIKOKU_TOURNAMENT_SECONDS (each measuring window, default 20). `make bench` runs it
with SHIKOKU_RATE_PER_SECOND=0.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc

from bench.bench_load import Processes, cpu_seconds, percentile, rss_total, watched_processes
from bench.processes import machine
from shikoku.v1 import game_pb2, lobby_pb2, lobby_pb2_grpc
from shikoku_dev.supervisor import System
from shikoku_sdk import Client, RandomPlayer
from shikoku_sdk.channel import keyed_channel
from shikoku_sdk.errors import ShikokuError

TABLES = int(os.environ.get("SHIKOKU_TOURNAMENT_TABLES", "1000"))
SAMPLE = int(os.environ.get("SHIKOKU_TOURNAMENT_SAMPLE", "20"))
PERIOD = float(os.environ.get("SHIKOKU_TOURNAMENT_PERIOD", "2"))
WINDOW_SECONDS = float(os.environ.get("SHIKOKU_TOURNAMENT_SECONDS", "20"))
TABLE_SIZE = 4
REGISTERING_THREADS = 16


def bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


@dataclass
class Console:
    """The host console's stream: when each table was last seen at each version."""

    seen: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    updates: int = 0

    def follow(self, lobby: lobby_pb2_grpc.LobbyServiceStub, tournament_id: str) -> None:
        request = lobby_pb2.WatchTournamentRequest(tournament_id=tournament_id)
        try:
            for item in lobby.WatchTournament(request):
                if item.HasField("table") and item.table.game_id:
                    arrived = time.perf_counter()
                    with self.lock:
                        self.updates += 1
                        self.seen.setdefault(item.table.game_id, []).append(
                            (item.table.game.version, arrived)
                        )
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                raise

    def shown_at(self, game_id: str, version: int, after: float) -> float | None:
        """When the console first showed `game_id` at `version` or later, after `after`."""
        with self.lock:
            for seen_version, arrived in self.seen.get(game_id, ()):
                if seen_version >= version and arrived >= after:
                    return arrived
        return None


@dataclass
class Acknowledged:
    game_id: str
    version: int
    at: float


def register(lobby: lobby_pb2_grpc.LobbyServiceStub, name: str) -> tuple[str, str]:
    answer = lobby.RegisterPlayer(
        lobby_pb2.RegisterPlayerRequest(display_name=name, request_id=str(uuid.uuid4()))
    )
    return answer.player_id, answer.credential


def cpu_percent(pids: Processes, seconds: float) -> dict[str, float]:
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    time.sleep(seconds)
    return {name: 100 * (cpu_seconds(pid) - before[name]) / seconds for name, pid in pids.items()}


def main() -> None:
    print(machine())
    print(f"{TABLES} tables of {TABLE_SIZE}, {SAMPLE} played, a command every {PERIOD} s each")
    with (
        open(os.devnull, "w") as quiet,
        System.on_free_ports(log=quiet) as system,
        keyed_channel(system.gateway, system.api_key) as channel,
    ):
        grpc.channel_ready_future(channel).result(timeout=30)
        lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
        host = lobby.RegisterPlayer(
            lobby_pb2.RegisterPlayerRequest(display_name="host", role=lobby_pb2.ROLE_HOST)
        )
        begin = time.perf_counter()
        with ThreadPoolExecutor(REGISTERING_THREADS) as pool:
            players = list(
                pool.map(lambda n: register(lobby, f"player {n}"), range(TABLES * TABLE_SIZE))
            )
        print(f"{len(players)} players registered in {time.perf_counter() - begin:.1f} s")
        credentials = dict(players)
        tournament = lobby.CreateTournament(
            lobby_pb2.CreateTournamentRequest(
                name="bench",
                player_ids=[player_id for player_id, _ in players],
                table_size=TABLE_SIZE,
                rounds=1,
                request_id=str(uuid.uuid4()),
            ),
            metadata=bearer(host.credential),
        )
        pids = watched_processes(system)
        rss_before = {name: rss_total(pid) for name, pid in pids.items()}
        begin = time.perf_counter()
        started = lobby.StartRound(
            lobby_pb2.StartRoundRequest(
                tournament_id=tournament.tournament_id, request_id=str(uuid.uuid4())
            ),
            metadata=bearer(host.credential),
            timeout=3600,
        )
        seating = time.perf_counter() - begin
        round_ = started.rounds[-1]
        print(f"StartRound seated and started {len(round_.tables)} tables in {seating:.1f} s")

        console = Console()
        follower = threading.Thread(
            target=console.follow, args=(lobby, tournament.tournament_id), daemon=True
        )
        follower.start()
        watcher = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tools.cli",
                "tournament",
                "status",
                tournament.tournament_id,
                "--watch",
                "--gateway",
                system.gateway,
                "--api-key",
                system.api_key,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, TERM="dumb", COLUMNS="200"),
        )
        pids["status --watch"] = [watcher.pid]
        try:
            time.sleep(2)
            rss_live = {name: rss_total(pid) for name, pid in pids.items()}
            resting = cpu_percent(pids, WINDOW_SECONDS)
            acknowledged, playing = play_sample(system, round_, credentials, pids)
            print_figures(pids, rss_before, rss_live, resting, playing, len(round_.tables))
            print_delays(console, acknowledged)
            if (ended := watcher.poll()) is not None:
                said = watcher.stderr.read() if watcher.stderr else ""
                print(f"status --watch ended early, exit {ended}: {said!r}")
        finally:
            watcher.terminate()
            watcher.wait(timeout=10)


def play_sample(
    system: System,
    round_: lobby_pb2.TournamentRound,
    credentials: dict[str, str],
    pids: Processes,
) -> tuple[list[Acknowledged], dict[str, float]]:
    """Plays `SAMPLE` tables at human pace over one window; the commands acknowledged, and
    each process's CPU over the window."""
    acknowledged: list[Acknowledged] = []
    lock = threading.Lock()
    stop = threading.Event()
    games = {table.table_id: table for table in round_.tables}

    def play(n: int, table: lobby_pb2.TournamentTable, game_id: str) -> None:
        rng = random.Random(n)
        with Client(system.gateway, api_key=system.api_key) as client:
            seats = {
                seat: client.with_credential(credentials[player_id])
                for seat, player_id in enumerate(table.player_ids, 1)
            }
            player = RandomPlayer(game_id, seats, rng)
            slot = time.perf_counter() + rng.uniform(0, PERIOD)

            def note(answer: game_pb2.SubmitCommandResponse, _seconds: float) -> None:
                with lock:
                    acknowledged.append(Acknowledged(game_id, answer.version, time.perf_counter()))

            while not stop.is_set():
                if stop.wait(max(0.0, slot - time.perf_counter())):
                    return
                slot += PERIOD
                try:
                    if not player.step(note):
                        return
                except ShikokuError:
                    continue

    sample = list(games.values())[:SAMPLE]
    with keyed_channel(system.gateway, system.api_key) as channel:
        lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
        game_ids = [
            lobby.GetTable(lobby_pb2.GetTableRequest(table_id=t.table_id)).game_id for t in sample
        ]
    threads = [
        threading.Thread(target=play, args=(n, table, game_id), daemon=True)
        for n, (table, game_id) in enumerate(zip(sample, game_ids, strict=True))
    ]
    for thread in threads:
        thread.start()
    playing = cpu_percent(pids, WINDOW_SECONDS)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    time.sleep(2)  # the last updates reach the console
    return acknowledged, playing


def print_figures(
    pids: Processes,
    rss_before: dict[str, float],
    rss_live: dict[str, float],
    resting: dict[str, float],
    playing: dict[str, float],
    tables: int,
) -> None:
    print(
        f"{'process':16} {'CPU at rest %':>14} {'CPU playing %':>14} {'RSS MB':>8} {'KB/table':>9}"
    )
    for name in pids:
        added = rss_live[name] - rss_before.get(name, rss_live[name])
        print(
            f"{name:16} {resting.get(name, 0):14.1f} {playing.get(name, 0):14.1f} "
            f"{rss_live[name]:8.1f} {1024 * added / tables:9.1f}"
        )
    at_rest = sum(v for k, v in resting.items() if k not in ("loadgen",))
    print(
        f"at rest, all processes but this one: {at_rest:.1f} % of a core for {tables} live tables "
        f"({1000 * at_rest / 100 / tables:.2f} ms of CPU a second per table)"
    )


def print_delays(console: Console, acknowledged: list[Acknowledged]) -> None:
    delays = []
    missing = 0
    for ack in acknowledged:
        shown = console.shown_at(ack.game_id, ack.version, ack.at - 5.0)
        if shown is None:
            missing += 1
        else:
            delays.append(max(0.0, shown - ack.at) * 1000)
    if not delays:
        print(f"no command reached the console ({missing} acknowledged)")
        return
    print(
        f"command -> console update: {len(delays)} commands, p50 {percentile(delays, 0.5):.0f} ms, "
        f"p99 {percentile(delays, 0.99):.0f} ms, max {max(delays):.0f} ms"
        f"{f', {missing} never shown' if missing else ''} (target p99 <= 1000 ms); "
        f"{console.updates} updates streamed"
    )


if __name__ == "__main__":
    main()
