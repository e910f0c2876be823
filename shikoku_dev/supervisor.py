"""`shikoku run`: the whole system on this machine, as separate processes.

Starts the embedded Redis (unless REDIS_URL is set) — or with `--cluster` an embedded Redis
Cluster of three masters with a replica each — then rules, routes, lobby, gateway and web, each
waiting for the previous to listen; stops them all, in reverse order, on Ctrl-C/SIGTERM. With
`replicas` > 1, every service but the web bridge runs that many processes, each on a port of its
own, and every caller balances over all of them.

While it runs, `Keeper` starts again on its own address every process that dies, after a delay
that doubles while it keeps dying (`Backoff`), and says so in one line; the others go on
serving. A node of the embedded cluster is started again too (a master only once a replica has
taken its place), and the embedded Redis when it is `--durable`; without `--durable` its data
died with it, so the system stops, saying why.
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
from services.notify.shell.settings import NotifySettings
from shikoku_dev.redis_cluster import EmbeddedRedisCluster
from shikoku_dev.redis_server import EmbeddedRedis, free_port

SERVICES = (
    ("rules", "services.rules.shell.server"),
    ("routes", "services.routes.shell.server"),
    ("lobby", "services.lobby.shell.server"),
    ("gateway", "gateway.server"),
    ("web", "gateway.web.server"),
    ("notify", "services.notify.shell.server"),
)
# The web bridge is one process (an HTTP front end; put a load balancer before several), and so
# is the notifier here (several share its work in a deployment, but one is plenty on a machine).
SINGLE = {"web", "notify"}
START_TIMEOUT_SECONDS = 30.0
# How `shikoku run` restarts a process that died (Backoff): after half a second, doubling while
# it keeps dying up to half a minute; once it has stayed up a minute, half a second again.
RESTART_FIRST_SECONDS = 0.5
RESTART_CAP_SECONDS = 30.0
RESTART_STEADY_SECONDS = 60.0
# How often `shikoku run` looks for a process that died.
WATCH_SECONDS = 0.1
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
        label: str = "",
    ) -> None:
        self.name = name
        self.module = module
        self.env = env
        self.log = log
        #: This replica's own address, when the service runs as several.
        self.listen = listen
        #: Where it serves /metrics.
        self.metrics = metrics
        #: What the supervisor calls it: the service's name, numbered when it runs as several
        #: processes (`rules-2`).
        self.label = label or name
        self.listening = threading.Event()
        #: The address it said it listens on, once it has.
        self.address = ""
        self.started_at = time.monotonic()
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
                self.address = line.rstrip().rpartition(" ")[2]
                self.listening.set()
                if self.name == "gateway":
                    say(line.rstrip(), self.log)
                    continue
            if line.startswith("{"):  # a JSON log line names its process itself
                say(line.rstrip(), self.log)
                continue
            say(f"[{self.label}] {line.rstrip()}", self.log)

    def again(self) -> ServiceProcess:
        """A new process of the same service, on the same addresses (not waited for)."""
        return ServiceProcess(
            self.name, self.module, self.env, self.log, self.listen, self.metrics, self.label
        )

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
    replica; `replicas`: processes of each service but the web bridge and the notifier, unless
    `processes` gives a service's own count (e.g. {"gateway": 2})."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        durable: bool = False,
        data_dir: Path | None = None,
        log: TextIO | None = None,
        cluster: bool = False,
        replicas: int = 1,
        processes: Mapping[str, int] | None = None,
    ) -> None:
        self._processes = {name: replicas for name, _module in SERVICES if name not in SINGLE}
        if wrong := set(processes or {}) - set(self._processes):
            raise ValueError(f"these do not run as several processes: {sorted(wrong)}")
        self._processes.update(processes or {})
        if min(self._processes.values()) < 1:
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
        #: Ports this system picked for its own processes (`_unclaimed_port`).
        self._handed_out: set[int] = set()
        self.started_at = time.monotonic()
        # A key for trying the system out, issued when it runs on a Redis of its own.
        self.api_key = ""

    @classmethod
    def on_free_ports(
        cls,
        log: TextIO | None = None,
        cluster: bool = False,
        replicas: int = 1,
        processes: Mapping[str, int] | None = None,
    ) -> System:
        """A private system on loopback ports nobody else uses, with its own Redis."""
        env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
        for name, _module in SERVICES:
            env[f"SHIKOKU_{name.upper()}_ADDR"] = f"127.0.0.1:{free_port()}"
        return cls(env, log=log, cluster=cluster, replicas=replicas, processes=processes)

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

    def page_address(self, page: str = "") -> str:
        """A page of the web entrypoint: the board page (docs/browser.md) or `host`, the host
        console, with the development key when there is one."""
        key = f"?api_key={quote(self.api_key, safe='')}" if self.api_key else ""
        return f"{self.web_origin()}/{page}{key}"

    def web_origin(self) -> str:
        """Where the web entrypoint answers, as a browser on this machine reaches it."""
        host, _, port = self.env.get("SHIKOKU_WEB_ADDR", "127.0.0.1:8080").rpartition(":")
        host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "[::]": "[::1]"}.get(host, host)
        return f"http://{host}:{port}"

    def start(self) -> System:
        self.started_at = time.monotonic()
        # The secret the processes of this system share (infra/deployment_token.py).
        self.env.setdefault(DEPLOYMENT_TOKEN, secrets.token_urlsafe(32))
        # Notifications link to this system's board page; the browser keeps the API key, so the
        # link carries none (a key in it would put the game's query after the key's).
        self.env.setdefault("SHIKOKU_PUBLIC_URL", self.web_origin())
        if "REDIS_URL" not in self.env:
            self._start_redis()
        listens = self._spread_replicas()
        for name, module in SERVICES:
            own = listens.get(name, [""])
            for n, listen in enumerate(own):
                metrics = (n == 0 and self.env.get(metrics_setting(name))) or (
                    f"127.0.0.1:{self._unclaimed_port()}"
                )
                label = f"{name}-{n + 1}" if len(own) > 1 else name
                service = ServiceProcess(name, module, self.env, self.log, listen, metrics, label)
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
        listens: dict[str, list[str]] = {}
        for name, count in self._processes.items():
            if count == 1:
                continue
            setting = f"SHIKOKU_{name.upper()}_ADDR"
            first = self.env.get(setting, _DEFAULT_ADDRESSES[name])
            host = first.rpartition(":")[0]
            others = [f"{host}:{self._unclaimed_port()}" for _ in range(count - 1)]
            listens[name] = [first, *others]
            self.env[setting] = ",".join(listens[name])
        return listens

    def _unclaimed_port(self) -> int:
        """A free port that no address of this system's settings names yet: a port free now is
        not reserved, so one the caller put in a setting (free when it was picked, its process
        not started yet) could come back here and be taken twice."""
        claimed = {
            int(tail)
            for key, value in self.env.items()
            if key.startswith("SHIKOKU_") and key.endswith("_ADDR")
            for address in value.split(",")
            if (tail := address.rpartition(":")[2]).isdigit()
        }
        claimed |= self._handed_out
        while (port := free_port()) in claimed:
            pass
        self._handed_out.add(port)
        return port

    def processes(self, name: str) -> list[ServiceProcess]:
        """The running processes of service `name`, one per replica."""
        return [service for service in self.services if service.name == name]

    def restart(self, service: ServiceProcess) -> ServiceProcess:
        """Kills `service` (SIGKILL) and starts it again on its own address."""
        service.kill()
        again = service.again()
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


_DEFAULT_ADDRESSES = {
    **dataclasses.asdict(Addresses.from_env()),
    "notify": NotifySettings().listen_address,
}


@dataclasses.dataclass
class Backoff:
    """How long to wait before starting a process again that died: `first`, then twice the last
    delay each time it dies again, up to `cap`; a death after it stayed up `steady` seconds
    waits `first` again."""

    first: float = RESTART_FIRST_SECONDS
    cap: float = RESTART_CAP_SECONDS
    steady: float = RESTART_STEADY_SECONDS
    _next: float | None = dataclasses.field(default=None, init=False, repr=False)

    def after(self, uptime: float) -> float:
        """The delay before the next start, for a process that died after `uptime` seconds."""
        if self._next is None or uptime >= self.steady:
            self._next = self.first
        delay = self._next
        self._next = min(delay * 2, self.cap)
        return delay


def exit_status(code: int) -> str:
    """A process's exit status as people read it: `signal 9`, `code 1`."""
    return f"signal {-code}" if code < 0 else f"code {code}"


class Keeper:
    """Keeps a started System running: `check()`, called every WATCH_SECONDS from the thread
    that stops the system, starts again each process that died, on its own addresses, after its
    Backoff delay, saying so in one line; never once `stopping` is set.

    Redis: a node of the embedded cluster is started again the same way, a master only once a
    replica serves its slots (EmbeddedRedisCluster.replaced). The embedded Redis is started
    again when it is durable (its append-only file has every acknowledged write); when it is
    not, its data is gone and `check()` returns why the system must stop."""

    def __init__(self, system: System, stopping: threading.Event) -> None:
        self.system = system
        self.stopping = stopping
        self._backoffs: dict[str, Backoff] = {}
        #: What is down (a label) -> when to start it again.
        self._due: dict[str, float] = {}
        #: When each Redis process (a label) was last started.
        self._redis_started: dict[str, float] = {}
        #: Restarted processes not yet listening.
        self._returning: list[ServiceProcess] = []
        #: Masters whose restart waits for a replica to take over (said once each).
        self._waiting: set[str] = set()

    def check(self) -> str | None:
        """One look at every process; why the system must stop, or None."""
        now = time.monotonic()
        for index, service in enumerate(self.system.services):
            code = service.process.poll()
            if code is None or self.stopping.is_set():
                continue
            if service.label not in self._due:
                self._died(service.label, code, now - service.started_at, now)
            elif now >= self._due[service.label]:
                del self._due[service.label]
                self.system.services[index] = again = service.again()
                self._returning.append(again)
        for service in list(self._returning):
            if service.listening.is_set():
                self._returning.remove(service)
                say(
                    f"{service.label} is back on {service.address} (pid {service.process.pid})",
                    self.system.log,
                )
            elif service.process.poll() is not None:
                self._returning.remove(service)
        if self.system.redis is not None:
            return self._check_redis(self.system.redis, now)
        if self.system.redis_cluster is not None:
            self._check_cluster(self.system.redis_cluster, now)
        return None

    def _died(self, label: str, code: int, uptime: float, now: float) -> None:
        self._later(label, f"exited ({exit_status(code)})", uptime, now)

    def _later(self, label: str, what: str, uptime: float, now: float) -> None:
        delay = self._backoffs.setdefault(label, Backoff()).after(uptime)
        self._due[label] = now + delay
        say(f"{label} {what}; restarting in {delay:g} s", self.system.log)

    def _check_redis(self, redis: EmbeddedRedis, now: float) -> str | None:
        label = "redis"
        code = redis.exit_code
        if code is None or self.stopping.is_set():
            return None
        if not redis.durable:
            return (
                f"redis exited ({exit_status(code)}); it held the games in memory only, so they "
                "are gone: stopping everything (shikoku run --durable keeps them on disk)"
            )
        if label not in self._due:
            uptime = now - self._redis_started.get(label, self.system.started_at)
            self._died(label, code, uptime, now)
        elif now >= self._due[label]:
            del self._due[label]
            self._redis_started[label] = now
            try:
                redis.start()
            except RuntimeError as error:
                say(f"redis did not start again: {error}", self.system.log)
                if redis.exit_code is None:  # it did not listen in time and was stopped
                    self._later(label, "did not listen", 0.0, now)
                return None
            say(f"redis is back on 127.0.0.1:{redis.port}", self.system.log)
        return None

    def _check_cluster(self, cluster: EmbeddedRedisCluster, now: float) -> None:
        for port, code in cluster.exited().items():
            label = f"redis node {port}"
            if self.stopping.is_set():
                return
            if label not in self._due:
                uptime = now - self._redis_started.get(label, self.system.started_at)
                self._died(label, code, uptime, now)
                continue
            if now < self._due[label]:
                continue
            if not cluster.replaced(port):
                if label not in self._waiting:
                    self._waiting.add(label)
                    say(
                        f"{label} served slots: waiting for its replica to take them over "
                        "before starting it again (it would come back empty)",
                        self.system.log,
                    )
                continue
            self._waiting.discard(label)
            del self._due[label]
            self._redis_started[label] = now
            try:
                cluster.restart(port, wait=False)
            except RuntimeError as error:
                say(f"{label} did not start again: {error}", self.system.log)
                continue
            say(f"{label} is back", self.system.log)


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
        say(f"browser: {system.page_address()}")
        say(f"host console: {system.page_address('host')}")
        say("all services running; Ctrl-C stops them")
        keeper = Keeper(system, stop)
        while not stop.wait(WATCH_SECONDS):
            if (fatal := keeper.check()) is not None:
                say(fatal)
                return 1
        return 0
    except RuntimeError as error:
        print(f"shikoku run: {error}", file=sys.stderr, flush=True)
        return 1
    finally:
        system.stop()
        say("stopped")
