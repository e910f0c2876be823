"""`shikoku run`: the whole system on this machine, as separate processes.

Starts the embedded Redis (unless REDIS_URL is set), then rules, routes, lobby and gateway,
each waiting for the previous to listen; stops them all, in reverse order, on Ctrl-C/SIGTERM
or as soon as one of them dies.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from shikoku.redis_server import EmbeddedRedis

SERVICES = (
    ("rules", "services.rules.server"),
    ("routes", "services.routes.server"),
    ("lobby", "services.lobby.server"),
    ("gateway", "gateway.server"),
)
START_TIMEOUT_SECONDS = 30.0
_output_lock = threading.Lock()


def say(line: str) -> None:
    """Writes one whole line; threads relaying several processes never interleave."""
    with _output_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class ServiceProcess:
    def __init__(self, name: str, module: str, env: Mapping[str, str]) -> None:
        self.name = name
        self.listening = threading.Event()
        self.process = subprocess.Popen(
            [sys.executable, "-u", "-m", module],
            env=dict(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._relay_output, daemon=True).start()

    def _relay_output(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(f"{self.name} listening on "):
                self.listening.set()
                if self.name == "gateway":
                    say(line.rstrip())
                    continue
            say(f"[{self.name}] {line.rstrip()}")

    def wait_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not self.listening.wait(0.1):
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with code {self.process.returncode} at start"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not start within {START_TIMEOUT_SECONDS}s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def run(durable: bool = False, data_dir: Path | None = None) -> int:
    env = dict(os.environ)
    redis: EmbeddedRedis | None = None
    started: list[ServiceProcess] = []
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        if "REDIS_URL" not in env:
            redis = EmbeddedRedis(
                port=int(env.get("SHIKOKU_REDIS_PORT", "0")) or None,
                data_dir=data_dir,
                durable=durable,
            ).start()
            env["REDIS_URL"] = redis.url
            say(f"redis listening on 127.0.0.1:{redis.port}")
        for name, module in SERVICES:
            service = ServiceProcess(name, module, env)
            started.append(service)
            service.wait_listening()
        say("all services running; Ctrl-C stops them")
        while not stop.wait(0.5):
            for service in started:
                if service.process.poll() is not None:
                    say(f"{service.name} exited with code {service.process.returncode}")
                    return 1
        return 0
    except RuntimeError as error:
        print(f"shikoku run: {error}", file=sys.stderr, flush=True)
        return 1
    finally:
        for service in reversed(started):
            service.stop()
        if redis:
            redis.stop()
        say("stopped")
