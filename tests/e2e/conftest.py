"""The whole system as `make run` starts it: `shikoku run`, real processes on loopback."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shikoku.redis_server import free_port
from tests.e2e.api import Client, System

START_TIMEOUT_SECONDS = 60
GATEWAY_LINE = re.compile(r"^gateway listening on (\S+:\d+)$")
SHIKOKU = Path(sys.executable).parent / "shikoku"


def issue_api_key(redis_url: str, name: str) -> str:
    """A key issued the way an operator does it: `shikoku api-key create`."""
    created = subprocess.run(
        [str(SHIKOKU), "api-key", "create", name],
        env=dict(os.environ, REDIS_URL=redis_url),
        capture_output=True,
        text=True,
        check=True,
    )
    return created.stdout.splitlines()[-1]


def start_system(redis_url: str, **settings: str) -> System:
    """`shikoku run` on free ports against `redis_url`, with extra environment `settings`."""
    env = dict(os.environ, REDIS_URL=redis_url, **settings)
    for name in ("GATEWAY", "LOBBY", "RULES", "ROUTES"):
        env[f"SHIKOKU_{name}_ADDR"] = f"127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [str(SHIKOKU), "run"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: queue.Queue[str] = queue.Queue()
    output: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    gateway = ""
    while not gateway:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            process.kill()
            pytest.fail("shikoku run did not start: " + "".join(output))
        if found := GATEWAY_LINE.match(line):
            gateway = found.group(1)
    return System(gateway, redis_url, process, output, issue_api_key(redis_url, "e2e tests"))


def stop_system(system: System) -> None:
    if system.process.poll() is None:
        system.process.send_signal(signal.SIGTERM)
        system.process.wait(timeout=30)


@pytest.fixture(scope="session")
def system(redis_url: str) -> Iterator[System]:
    # The tests drive bots and replays at machine speed, far beyond the per-caller default
    # limits; tests/e2e/test_rate_limits.py starts a system of its own with small ones.
    system = start_system(redis_url, SHIKOKU_RATE_PER_SECOND="10000", SHIKOKU_RATE_BURST="10000")
    yield system
    stop_system(system)


@pytest.fixture
def client(system: System) -> Iterator[Client]:
    client = Client(system)
    yield client
    client.channel.close()
    client.redis.close()
