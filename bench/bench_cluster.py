"""Benchmark: the same bot load through the gateway on one Redis and on the embedded cluster.

Side by side in one run: `GAMES` random-bot games at once (SDK clients, as fast as answered),
first on one Redis with one process of each service, then on an embedded Redis Cluster (3
masters, a replica each, appends waiting for one replica) with two processes of each service,
reached through both gateways. Prints commands/s and SubmitCommand p50/p99 for each.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shikoku.v1 import game_pb2
from shikoku_dev.supervisor import System
from shikoku_sdk import Client, RandomPlayer, seat_table

GAMES = int(os.environ.get("SHIKOKU_BENCH_GAMES", "8"))


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def load(system: System) -> tuple[int, float, list[float]]:
    """Plays GAMES games at once; the commands acknowledged, the seconds it took, and each
    command's latency in ms."""
    latencies: list[float] = []
    lock = threading.Lock()

    def answered(_answer: game_pb2.SubmitCommandResponse, seconds: float) -> None:
        with lock:
            latencies.append(1000 * seconds)

    def one_game(seed: int) -> None:
        with Client(system.gateway_target, api_key=system.api_key) as client:
            table = seat_table(client, 3 + seed % 4)
            RandomPlayer(table.game_id, table.seats, seed).play(on_answer=answered)

    threads = [threading.Thread(target=one_game, args=(seed,)) for seed in range(GAMES)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(latencies), time.perf_counter() - start, latencies


def main() -> None:
    # One address, no credentials: the per-caller rate limit would only measure itself.
    os.environ.setdefault("SHIKOKU_RATE_PER_SECOND", "0")
    print(f"{GAMES} bot games at once, 3 to 6 players, as fast as answered")
    print(f"{'form':<44} {'commands':>8} {'cmd/s':>7} {'p50 ms':>7} {'p99 ms':>7}")
    forms = [
        ("one Redis, one process of each service", False, 1),
        ("cluster 3+3 (WAIT 1), two processes each", True, 2),
    ]
    for label, cluster, replicas in forms:
        with (
            open(os.devnull, "w") as quiet,
            System.on_free_ports(log=quiet, cluster=cluster, replicas=replicas) as system,
        ):
            commands, seconds, latencies = load(system)
        print(
            f"{label:<44} {commands:>8} {commands / seconds:>7.0f} "
            f"{percentile(latencies, 0.5):>7.1f} {percentile(latencies, 0.99):>7.1f}"
        )


if __name__ == "__main__":
    main()
