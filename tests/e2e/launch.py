"""Starting the whole system as `make run` does (`shikoku run`, real processes on free loopback
ports) for the end-to-end and browser tests, with an API key issued the operator's way."""

from __future__ import annotations

import itertools
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from infra.config import ClusterUrl
from shikoku_dev.redis_server import free_port
from tests.e2e.api import System

START_TIMEOUT_SECONDS = 60
GATEWAY_LINE = re.compile(r"^gateway listening on (\S+:\d+)$")
REDIS_URL_LINE = re.compile(r"^REDIS_URL=(\S+)$")
READY_LINE = "all services running"
SHIKOKU = Path(sys.executable).parent / "shikoku"


_databases = itertools.count(1)  # database 0 is the in-process tests'


def _own_database(redis_url: str) -> str:
    if ClusterUrl.parse(redis_url) is not None:
        return redis_url  # a cluster has one database; keys of each system are its own ids
    server = urlsplit(redis_url)
    return urlunsplit(server._replace(path=f"/{next(_databases)}"))


def issue_api_key(redis_url: str, name: str, *options: str) -> str:
    """A key issued the way an operator does it: `shikoku api-key create NAME [options]`."""
    created = subprocess.run(
        [str(SHIKOKU), "api-key", "create", name, *options],
        env=dict(os.environ, REDIS_URL=redis_url),
        capture_output=True,
        text=True,
        check=True,
    )
    return created.stdout.splitlines()[-1]


def start_system(redis_url: str | None, *run_options: str, **settings: str) -> System:
    """`shikoku run [run_options]` on free ports, with extra environment `settings`, on a
    database of `redis_url`'s server of its own: the in-process tests flush theirs at will, and
    a running system's background consumers (the rules service's summary projector) must not
    take their entries. With no `redis_url`, `shikoku run` starts its own Redis (`--cluster`:
    its own cluster) and the system is reached through all the gateways it prints."""
    env = dict(os.environ, **settings)
    env.pop("REDIS_URL", None)
    if redis_url is not None:
        env["REDIS_URL"] = redis_url = _own_database(redis_url)
    for name in ("GATEWAY", "LOBBY", "RULES", "ROUTES", "WEB", "NOTIFY"):
        env[f"SHIKOKU_{name}_ADDR"] = f"127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [str(SHIKOKU), "run", *run_options],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
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
    gateways: list[str] = []
    while True:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            process.kill()
            pytest.fail("shikoku run did not start: " + "".join(output))
        if found := GATEWAY_LINE.match(line):
            gateways.append(found.group(1))
        if found := REDIS_URL_LINE.match(line):
            redis_url = redis_url or found.group(1)
        if line.startswith(READY_LINE) and gateways:
            break
    assert redis_url is not None
    gateway = gateways[0] if len(gateways) == 1 else "ipv4:" + ",".join(gateways)
    api_key = issue_api_key(redis_url, "e2e tests", "--hosts")
    return System(gateway, env["SHIKOKU_WEB_ADDR"], redis_url, process, output, api_key)


def stop_system(system: System) -> None:
    if system.process.poll() is None:
        system.process.send_signal(signal.SIGTERM)
        system.process.wait(timeout=30)
