"""`shikoku run`: the whole system on this machine, as separate processes.

Starts the embedded Redis (unless REDIS_URL is set), then rules, routes, lobby, gateway and web,
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
from typing import TextIO

from gateway.api_keys import issue_api_key
from infra.redis_server import EmbeddedRedis, free_port

SERVICES = (
    ("rules", "services.rules.shell.server"),
    ("routes", "services.routes.shell.server"),
    ("lobby", "services.lobby.shell.server"),
    ("gateway", "gateway.server"),
    ("web", "gateway.web.server"),
)
START_TIMEOUT_SECONDS = 30.0
_output_lock = threading.Lock()


def say(line: str, stream: TextIO | None = None) -> None:
    """Writes one whole line; threads relaying several processes never interleave."""
    out = stream or sys.stdout
    with _output_lock:
        out.write(line + "\n")
        out.flush()


class ServiceProcess:
    def __init__(
        self, name: str, module: str, env: Mapping[str, str], log: TextIO | None = None
    ) -> None:
        self.name = name
        self.log = log
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
                    say(line.rstrip(), self.log)
                    continue
            say(f"[{self.name}] {line.rstrip()}", self.log)

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


class System:
    """Redis (embedded unless REDIS_URL is set) and the four services, started in order and
    stopped in reverse; `env` overrides the environment (addresses, REDIS_URL)."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        durable: bool = False,
        data_dir: Path | None = None,
        log: TextIO | None = None,
    ) -> None:
        self.env = dict(os.environ if env is None else env)
        self.log = log
        self._durable = durable
        self._data_dir = data_dir
        self.redis: EmbeddedRedis | None = None
        self.services: list[ServiceProcess] = []
        # A key for trying the system out, issued when it runs on a Redis of its own.
        self.api_key = ""

    @classmethod
    def on_free_ports(cls, log: TextIO | None = None) -> System:
        """A private system on loopback ports nobody else uses, with its own Redis."""
        env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
        for name, _module in SERVICES:
            env[f"SHIKOKU_{name.upper()}_ADDR"] = f"127.0.0.1:{free_port()}"
        return cls(env, log=log)

    @property
    def gateway(self) -> str:
        return self.env.get("SHIKOKU_GATEWAY_ADDR", "127.0.0.1:50051")

    def start(self) -> System:
        if "REDIS_URL" not in self.env:
            self.redis = EmbeddedRedis(
                port=int(self.env.get("SHIKOKU_REDIS_PORT", "0")) or None,
                data_dir=self._data_dir,
                durable=self._durable,
            ).start()
            self.env["REDIS_URL"] = self.redis.url
            say(f"redis listening on 127.0.0.1:{self.redis.port}", self.log)
            self.api_key = issue_api_key(self.redis.url, "development")
            say(f"development API key: {self.api_key}", self.log)
        for name, module in SERVICES:
            service = ServiceProcess(name, module, self.env, self.log)
            self.services.append(service)
            service.wait_listening()
        return self

    def failed(self) -> ServiceProcess | None:
        return next((s for s in self.services if s.process.poll() is not None), None)

    def stop(self) -> None:
        for service in reversed(self.services):
            service.stop()
        self.services.clear()
        if self.redis:
            self.redis.stop()
            self.redis = None

    def __enter__(self) -> System:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def run(durable: bool = False, data_dir: Path | None = None) -> int:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    system = System(durable=durable, data_dir=data_dir)
    try:
        system.start()
        say("all services running; Ctrl-C stops them")
        while not stop.wait(0.5):
            if (dead := system.failed()) is not None:
                say(f"{dead.name} exited with code {dead.process.returncode}")
                return 1
        return 0
    except RuntimeError as error:
        print(f"shikoku run: {error}", file=sys.stderr, flush=True)
        return 1
    finally:
        system.stop()
        say("stopped")
