"""`shikoku health [ADDRESS] [--service NAME]`: is a process of ours serving? Exits 0 if it
says so, 1 if not or if it does not answer in time: what a container's HEALTHCHECK, a Compose
healthcheck or a probe runs (deploy/README.md).

ADDRESS is either
- a gRPC address (`host:port`, or any gRPC target): asks the standard health service,
  `grpc.health.v1.Health/Check`, about service NAME (default "", the whole server; every
  process of ours also answers for the full name of each service it serves, e.g.
  `shikoku.internal.v1.RulesService`). Health checks need no API key or deployment token;
- an `http://` or `https://` URL, such as the web entrypoint's `http://127.0.0.1:8080/healthz`:
  a GET answered 200.

Without ADDRESS it checks the service this container runs: the `shikoku serve NAME` process
found among the machine's processes (in a container, the only one), at the address that process
listens on by the same environment (`SHIKOKU_<NAME>_LISTEN_ADDR` or `SHIKOKU_<NAME>_ADDR`;
`SHIKOKU_WEB_ADDR` and `/healthz` for the web entrypoint, `SHIKOKU_NOTIFY_ADDR` for the
notifier), a wildcard host taken as loopback.
That is the image's HEALTHCHECK, the same for every service the image runs.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from infra.process_settings import Addresses, Listening
from infra.settings import from_environment
from services.notify.shell.settings import NotifySettings

DEFAULT_TIMEOUT_SECONDS = 5.0
#: What `shikoku serve` may be asked to run (tools/cli.py's SERVE_MODULES).
SERVICES = ("gateway", "lobby", "routes", "rules", "web", "notify")
_WILDCARDS = {"", "0.0.0.0", "::", "[::]"}


def check(address: str, service: str = "", timeout: float = DEFAULT_TIMEOUT_SECONDS) -> str:
    """The answer of the process at `address`: "SERVING" when healthy, else what it said or
    why it could not be asked."""
    if address.startswith(("http://", "https://")):
        return _check_http(address, timeout)
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            answer = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else None
            details = error.details() if isinstance(error, grpc.Call) else str(error)
            return f"{code.name if code else 'ERROR'}: {details}"
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status))


def _check_http(url: str, timeout: float) -> str:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            status = int(answer.status)
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"
    except (urllib.error.URLError, OSError) as error:
        return f"UNAVAILABLE: {getattr(error, 'reason', error)}"
    return "SERVING" if status == 200 else f"HTTP {status}"


def served_service(commands: Iterable[list[str]]) -> str | None:
    """The NAME of the first `shikoku serve NAME` among processes' argument lists."""
    for argv in commands:
        names = [Path(arg).name for arg in argv]
        if "shikoku" not in names or "serve" not in names:
            continue
        after = argv[names.index("serve") + 1 :]
        if found := next((arg for arg in after if arg in SERVICES), None):
            return found
    return None


def process_commands(proc: Path = Path("/proc")) -> list[list[str]]:
    """Every other process's argument list, the oldest (lowest id) first."""
    own = str(os.getpid())
    commands = []
    pids = sorted((p for p in proc.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    for pid in pids:
        if pid.name == own:
            continue
        try:
            raw = (pid / "cmdline").read_bytes()
        except OSError:
            continue  # gone, or not ours to read
        if raw:
            commands.append(raw.rstrip(b"\0").decode(errors="replace").split("\0"))
    return commands


def own_address(service: str) -> str:
    """Where this machine's (container's) replica of `service` answers health checks."""
    if service == "web":
        host, _, port = Addresses.from_env().web.rpartition(":")
        return f"http://{_loopback(host)}:{port}/healthz"
    if service == "notify":  # one address of its own (SHIKOKU_NOTIFY_ADDR), called by nobody
        host, _, port = from_environment(NotifySettings, "notify").listen_address.rpartition(":")
        return f"{_loopback(host)}:{port}"
    # The service's own settings, as it reads them (infra.process_settings.Listening).
    listening, addresses = from_environment(Listening, service), Addresses.from_env()
    if problems := listening.ambiguity(service, addresses):
        raise SystemExit(f"{service}: {problems[0]}")
    host, _, port = listening.address(service, addresses).rpartition(":")
    return f"{_loopback(host)}:{port}"


def _loopback(host: str) -> str:
    if host not in _WILDCARDS:
        return host
    return "[::1]" if ":" in host else "127.0.0.1"


def main(
    address: str | None,
    service: str = "",
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    proc: Path = Path("/proc"),
) -> int:
    if address is None:
        served = served_service(process_commands(proc))
        if served is None:
            print("shikoku health: no `shikoku serve NAME` runs here; name an ADDRESS")
            return 1
        address = own_address(served)
    answer = check(address, service, timeout)
    print(f"{address}{f' ({service})' if service else ''}: {answer}")
    return 0 if answer == "SERVING" else 1
