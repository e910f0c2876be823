"""Benchmark: the lobby through the gateway (real processes on loopback).

Creating 100 tables and seating 400 players, then p50/p99 latency of lobby calls under 50
concurrent clients.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc

from shikoku.v1 import lobby_pb2, lobby_pb2_grpc
from shikoku_dev.supervisor import System
from shikoku_sdk.channel import keyed_channel

TABLES, SEATS, CLIENTS, CALLS_PER_CLIENT = 100, 4, 50, 40


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    with (
        open(os.devnull, "w") as quiet,
        System.on_free_ports(log=quiet) as system,
        keyed_channel(system.gateway, system.api_key) as channel,
    ):
        grpc.channel_ready_future(channel).result(timeout=10)
        lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
        start = time.perf_counter()
        table_ids = []
        for number in range(TABLES):
            created = lobby.CreateTable(
                lobby_pb2.CreateTableRequest(seat_count=SEATS, display_name=f"bench {number}")
            )
            table_ids.append(created.table.table_id)
            for seat in range(1, SEATS + 1):
                lobby.JoinTable(
                    lobby_pb2.JoinTableRequest(
                        table_id=created.table.table_id, player_name=f"p{seat}", seat=seat
                    )
                )
        seconds = time.perf_counter() - start
        print(f"{TABLES} tables created and {TABLES * SEATS} players seated in {seconds:.2f} s")

        def client(number: int) -> list[float]:
            latencies = []
            for call in range(CALLS_PER_CLIENT):
                begin = time.perf_counter()
                if call % 4 == 0:
                    lobby.ListTables(lobby_pb2.ListTablesRequest(page_size=20))
                else:
                    table_id = table_ids[(number * CALLS_PER_CLIENT + call) % len(table_ids)]
                    lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id))
                latencies.append((time.perf_counter() - begin) * 1000)
            return latencies

        start = time.perf_counter()
        with ThreadPoolExecutor(CLIENTS) as pool:
            latencies = [ms for run in pool.map(client, range(CLIENTS)) for ms in run]
        seconds = time.perf_counter() - start
        print(
            f"{CLIENTS} concurrent clients, {len(latencies)} calls (GetTable, ListTables) "
            f"in {seconds:.2f} s: p50 {statistics.median(latencies):.1f} ms, "
            f"p99 {percentile(latencies, 0.99):.1f} ms"
        )


if __name__ == "__main__":
    main()
