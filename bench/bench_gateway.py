"""Benchmark: a game through the gateway (real processes on loopback).

A random bot plays a 4-player game to the end while 100 clients watch it live: the latency
of each command through the gateway, and the events per second delivered to the watchers;
then 100 more watchers catch up on the finished game at once.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shikoku.v1 import game_pb2, game_pb2_grpc
from shikoku_dev.supervisor import System
from shikoku_sdk import Client, RandomPlayer, seat_table
from shikoku_sdk.channel import keyed_channel

WATCHERS, SEATS = 100, 4


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def watch_to_the_end(gateway: str, api_key: str, game_id: str, received: list[int]) -> None:
    with keyed_channel(gateway, api_key) as channel:
        stub = game_pb2_grpc.GameServiceStub(channel)
        request = game_pb2.WatchGameRequest(game_id=game_id, from_version=1)
        count = 0
        for response in stub.WatchGame(request, timeout=600):
            if response.HasField("event"):
                count += 1
                if response.event.type == "GameEnded":
                    break
        received.append(count)


def watched(gateway: str, api_key: str, game_id: str) -> tuple[list[threading.Thread], list[int]]:
    received: list[int] = []
    threads = [
        threading.Thread(target=watch_to_the_end, args=(gateway, api_key, game_id, received))
        for _ in range(WATCHERS)
    ]
    for thread in threads:
        thread.start()
    return threads, received


def main() -> None:
    # One address, no credentials: the per-caller rate limit would only measure itself.
    os.environ.setdefault("SHIKOKU_RATE_PER_SECOND", "0")
    os.environ.setdefault("SHIKOKU_STREAMS_PER_CALLER", "0")
    with (
        open(os.devnull, "w") as quiet,
        System.on_free_ports(log=quiet) as system,
        Client(system.gateway, api_key=system.api_key) as client,
    ):
        table = seat_table(client, SEATS)
        game_id = table.game_id

        threads, received = watched(system.gateway, system.api_key, game_id)
        latencies: list[float] = []
        start = time.perf_counter()
        player = RandomPlayer(game_id, table.seats, seed=1)
        actions = player.play(on_answer=lambda _answer, seconds: latencies.append(1000 * seconds))
        for thread in threads:
            thread.join()
        live_seconds = time.perf_counter() - start
        print(
            f"{actions} commands through the gateway with {WATCHERS} watchers: "
            f"p50 {percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms"
        )
        events = received[0]
        assert received == [events] * WATCHERS, "every watcher gets every event"
        print(
            f"live: {WATCHERS} watchers x {events} events in {live_seconds:.1f} s "
            f"(the game's own pace): {WATCHERS * events / live_seconds:,.0f} events/s delivered"
        )

        start = time.perf_counter()
        threads, received = watched(system.gateway, system.api_key, game_id)
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - start
        assert received == [events] * WATCHERS
        print(
            f"catching up: {WATCHERS} watchers x {events} events in {seconds:.2f} s: "
            f"{WATCHERS * events / seconds:,.0f} events/s delivered"
        )


if __name__ == "__main__":
    main()
