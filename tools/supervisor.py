"""`shikoku run`: the whole system on this machine, as separate processes.

Starts the embedded Redis (unless REDIS_URL is set) — or with `--cluster` an embedded Redis
Cluster of three masters with a replica each — then rules, routes, lobby, gateway and web, each
waiting for the previous to listen; stops them all, in reverse order, on Ctrl-C/SIGTERM or as
soon as one of them dies. With `replicas` > 1, every service but the web bridge runs that many
processes, each on a port of its own, and every caller balances over all of them.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from gateway.api_keys import issue_api_key
from infra.config import Addresses, grpc_target
from infra.deployment_token import SETTING as DEPLOYMENT_TOKEN
from infra.logs import FORMAT_SETTING as LOG_FORMAT
from infra.metrics import metrics_setting
from infra.redis_cluster import EmbeddedRedisCluster
from infra.redis_server import EmbeddedRedis, free_port

SERVICES = (
    ("rules", "services.rules.shell.server"),
    ("routes", "services.routes.shell.server"),
    ("lobby", "services.lobby.shell.server"),
    ("gateway", "gateway.server"),
    ("web", "gateway.web.server"),
)
# The web bridge is one process (an HTTP front end; put a load balancer before several).
SINGLE = {"web"}
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
        self,
        name: str,
        module: str,
        env: Mapping[str, str],
        log: TextIO | None = None,
        listen: str = "",
        metrics: str = "",
    ) -> None:
        self.name = name
        self.module = module
        self.env = env
        self.log = log
        #: This replica's own address, when the service runs as several.
        self.listen = listen
        #: Where it serves /metrics.
        self.metrics = metrics
        self.listening = threading.Event()
        own = {f"SHIKOKU_{name.upper()}_LISTEN_ADDR": listen} if listen else {}
        if metrics:
            own[metrics_setting(name)] = metrics
        self.process = subprocess.Popen(
            [sys.executable, "-u", "-m", module],
            env={**env, **own},
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
            if line.startswith("{"):  # a JSON log line names its process itself
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

    def kill(self) -> None:
        """Ends the process at once (SIGKILL), as a crash would."""
        self.process.kill()
        self.process.wait()

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
    stopped in reverse; `env` overrides the environment (addresses, REDIS_URL). `cluster`: the
    embedded Redis is a cluster of 3 masters with a replica each, and appends wait for one
    replica; `replicas`: processes of each service but the web bridge."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        durable: bool = False,
        data_dir: Path | None = None,
        log: TextIO | None = None,
        cluster: bool = False,
        replicas: int = 1,
    ) -> None:
        if replicas < 1:
            raise ValueError("every service needs at least one process")
        self.env = dict(os.environ if env is None else env)
        self.log = log
        self._durable = durable
        self._data_dir = data_dir
        self._cluster = cluster
        self.replicas = replicas
        self.redis: EmbeddedRedis | None = None
        self.redis_cluster: EmbeddedRedisCluster | None = None
        self.services: list[ServiceProcess] = []
        # A key for trying the system out, issued when it runs on a Redis of its own.
        self.api_key = ""

    @classmethod
    def on_free_ports(
        cls, log: TextIO | None = None, cluster: bool = False, replicas: int = 1
    ) -> System:
        """A private system on loopback ports nobody else uses, with its own Redis."""
        env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
        for name, _module in SERVICES:
            env[f"SHIKOKU_{name.upper()}_ADDR"] = f"127.0.0.1:{free_port()}"
        return cls(env, log=log, cluster=cluster, replicas=replicas)

    @property
    def gateway(self) -> str:
        """The gateway setting: one address, or all of the replicas' separated by commas."""
        return self.env.get("SHIKOKU_GATEWAY_ADDR", "127.0.0.1:50051")

    @property
    def gateways(self) -> list[str]:
        return [address.strip() for address in self.gateway.split(",")]

    @property
    def gateway_target(self) -> str:
        """The gRPC target that reaches every gateway (a client balances over them)."""
        return grpc_target(self.gateway)

    @property
    def browser_address(self) -> str:
        """The board page (docs/browser.md), with the development key when there is one."""
        host, _, port = self.env.get("SHIKOKU_WEB_ADDR", "127.0.0.1:8080").rpartition(":")
        host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "[::]": "[::1]"}.get(host, host)
        key = f"?api_key={quote(self.api_key, safe='')}" if self.api_key else ""
        return f"http://{host}:{port}/{key}"

    def start(self) -> System:
        # The secret the processes of this system share (infra/deployment_token.py).
        self.env.setdefault(DEPLOYMENT_TOKEN, secrets.token_urlsafe(32))
        if "REDIS_URL" not in self.env:
            self._start_redis()
        listens = self._spread_replicas()
        for name, module in SERVICES:
            for n, listen in enumerate(listens.get(name, [""])):
                metrics = (n == 0 and self.env.get(metrics_setting(name))) or (
                    f"127.0.0.1:{free_port()}"
                )
                service = ServiceProcess(name, module, self.env, self.log, listen, metrics)
                self.services.append(service)
                service.wait_listening()
                say(f"{name} metrics on http://{metrics}/metrics", self.log)
        return self

    def _start_redis(self) -> None:
        if self._cluster:
            self.redis_cluster = EmbeddedRedisCluster(
                masters=3, replicas=1, avoid_ports=self._configured_ports()
            ).start()
            self.env["REDIS_URL"] = self.redis_cluster.cluster_url
            self.env.setdefault("SHIKOKU_REDIS_WAIT_REPLICAS", "1")
            say("redis cluster: 3 masters, 1 replica each", self.log)
        else:
            self.redis = EmbeddedRedis(
                port=int(self.env.get("SHIKOKU_REDIS_PORT", "0")) or None,
                data_dir=self._data_dir,
                durable=self._durable,
            ).start()
            self.env["REDIS_URL"] = self.redis.url
            say(f"redis listening on 127.0.0.1:{self.redis.port}", self.log)
        say(f"REDIS_URL={self.env['REDIS_URL']}", self.log)
        self.api_key = issue_api_key(self.env["REDIS_URL"], "development", hosts=True)
        say(f"development API key: {self.api_key}", self.log)

    def _configured_ports(self) -> set[int]:
        ports = set()
        for name, _module in SERVICES:
            address = self.env.get(f"SHIKOKU_{name.upper()}_ADDR", _DEFAULT_ADDRESSES[name])
            ports |= {int(part.rpartition(":")[2]) for part in address.split(",")}
        return ports

    def _spread_replicas(self) -> dict[str, list[str]]:
        """With several replicas: each one's own address (the first keeps the configured one,
        the others take free ports), and every service's setting naming all of them."""
        if self.replicas == 1:
            return {}
        listens: dict[str, list[str]] = {}
        for name, _module in SERVICES:
            if name in SINGLE:
                continue
            setting = f"SHIKOKU_{name.upper()}_ADDR"
            first = self.env.get(setting, _DEFAULT_ADDRESSES[name])
            host = first.rpartition(":")[0]
            others = [f"{host}:{free_port()}" for _ in range(self.replicas - 1)]
            listens[name] = [first, *others]
            self.env[setting] = ",".join(listens[name])
        return listens

    def processes(self, name: str) -> list[ServiceProcess]:
        """The running processes of service `name`, one per replica."""
        return [service for service in self.services if service.name == name]

    def restart(self, service: ServiceProcess) -> ServiceProcess:
        """Kills `service` (SIGKILL) and starts it again on its own address."""
        service.kill()
        again = ServiceProcess(
            service.name, service.module, service.env, self.log, service.listen, service.metrics
        )
        self.services[self.services.index(service)] = again
        again.wait_listening()
        return again

    def failed(self) -> ServiceProcess | None:
        return next((s for s in self.services if s.process.poll() is not None), None)

    def stop(self) -> None:
        for service in reversed(self.services):
            service.stop()
        self.services.clear()
        if self.redis:
            self.redis.stop()
            self.redis = None
        if self.redis_cluster:
            self.redis_cluster.stop()
            self.redis_cluster = None

    def __enter__(self) -> System:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *_exc: object) -> None:
        self.stop()


_DEFAULT_ADDRESSES = dataclasses.asdict(Addresses.from_env())


def run(
    durable: bool = False, data_dir: Path | None = None, cluster: bool = False, replicas: int = 1
) -> int:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if sys.stdout.isatty():  # a person reads the logs: text, not JSON
        os.environ.setdefault(LOG_FORMAT, "text")
    system = System(durable=durable, data_dir=data_dir, cluster=cluster, replicas=replicas)
    try:
        system.start()
        say(f"browser: {system.browser_address}")
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
