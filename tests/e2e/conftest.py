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


@pytest.fixture(scope="session")
def system(redis_url: str) -> Iterator[System]:
    # The tests drive bots and replays at machine speed, far beyond the per-caller default
    # limits; tests/e2e/test_rate_limits.py starts a system of its own with small ones.
    env = dict(
        os.environ, REDIS_URL=redis_url, SHIKOKU_RATE_PER_SECOND="10000", SHIKOKU_RATE_BURST="10000"
    )
    for name in ("GATEWAY", "LOBBY", "RULES", "ROUTES", "WEB"):
        env[f"SHIKOKU_{name}_ADDR"] = f"127.0.0.1:{free_port()}"
    shikoku = Path(sys.executable).parent / "shikoku"
    process = subprocess.Popen(
        [str(shikoku), "run"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
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
    system = System(gateway, redis_url, process, output)
    yield system
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


@pytest.fixture
def client(system: System) -> Iterator[Client]:
    client = Client(system)
    yield client
    client.channel.close()
    client.redis.close()
