"""Benchmark: wall time of replaying each shared real game in-process (domain code only) and
through the gateway (real processes on loopback, started once)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc

from shikoku_dev.supervisor import System
from shikoku_sdk import Client
from shikoku_sdk.channel import keyed_channel
from tests.shared import site_game_files
from tools.sitelog.export_format import load
from tools.sitelog.gateway_table import GatewayTable
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import replay


def main() -> None:
    games = [load(path) for path in site_game_files()]
    print("in-process:")
    for game in games:
        start = time.perf_counter()
        outcome = replay(game, InProcessTable(game))
        seconds = time.perf_counter() - start
        status = "ok" if outcome.matches(game) else "DIVERGED"
        print(f"  {game.id:<20} {outcome.actions:>4} actions  {seconds:6.2f} s  {status}")
    print("through the gateway:")
    with (
        open(os.devnull, "w") as quiet,
        System.on_free_ports(log=quiet) as system,
        keyed_channel(system.gateway, system.api_key) as channel,
    ):
        grpc.channel_ready_future(channel).result(timeout=10)
        for game in games:
            start = time.perf_counter()
            with Client(system.gateway, api_key=system.api_key) as client:
                outcome = replay(game, GatewayTable(game, client))
            seconds = time.perf_counter() - start
            status = "ok" if outcome.matches(game) else "DIVERGED"
            print(f"  {game.id:<20} {outcome.actions:>4} actions  {seconds:6.2f} s  {status}")


if __name__ == "__main__":
    main()
