"""`make deploy-check`: deploy/compose.yaml brought up with podman-compose and played on.

    python deploy/compose_check.py [--image IMAGE] [--redis-image IMAGE] [--players N]

1. brings the deployment up as a project of its own (`shikoku-check`), with a fresh deployment
   token in an env file of its own and the gateways' and web entrypoint's ports published on
   free loopback ports, so it disturbs no other deployment on the host;
2. waits for the one-shot `redis-cluster` to have formed the cluster (exit 0), then for every
   other container to pass its Compose health check (the notifier's included), run by `podman
   healthcheck run` (podman runs them on a timer only under systemd), and for the image's own
   HEALTHCHECK command (`shikoku health`, no address) to pass in each of ours too;
3. waits until the cluster answers `shikoku api-key list` from inside a gateway's container,
   then issues an API key there with `shikoku api-key create`;
4. plays a whole game of random bots (`python -m shikoku_sdk.bot`) through each gateway at
   once, from this host through the published ports, and reads the first game's state through
   the web entrypoint (Connect JSON), which reaches the gateways by their DNS name;
5. takes the deployment down, volumes and all, whatever happened; on a failure it prints the
   containers' states and the last lines of their logs first.

Exits 0 when every step passed. CONTAINERS_CONF should name deploy/containers.conf here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

DEPLOY = Path(__file__).resolve().parent
COMPOSE = DEPLOY / "compose.yaml"
PROJECT = "shikoku-check"
#: Our services' containers (each has the image's HEALTHCHECK as well as Compose's): two of
#: each replicated service (`rules-1`, `rules-2`, ...) and one of each single one.
REPLICATED = ("rules", "routes", "lobby", "gateway")
SINGLE = ("web", "notify")
ENDED = re.compile(r"^game (\S+) ended after (\d+) events: (\w+)$", re.MULTILINE)
HEALTHY_SECONDS = 240.0
CLUSTER_SECONDS = 180.0
GAME_SECONDS = 900.0


class CheckFailed(Exception):
    pass


def say(line: str) -> None:
    print(f"[deploy-check {time.strftime('%H:%M:%S')}] {line}", flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Deployment:
    """The Compose project on this host, driven through podman-compose and podman."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def compose(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        command = [
            *(sys.executable, "-m", "podman_compose", "--project-name", PROJECT),
            *("--file", str(COMPOSE), *args),
        ]
        return subprocess.run(
            command, env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def podman(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["podman", *args], env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def containers(self) -> dict[str, str]:
        """Compose service name -> container name, for every container of the project."""
        listed = self.podman(
            *("ps", "--all", "--filter", f"label=io.podman.compose.project={PROJECT}"),
            *("--format", "json"),
        )
        if listed.returncode != 0:
            raise CheckFailed(f"podman ps: {listed.stderr.strip()}")
        found = {}
        for container in json.loads(listed.stdout or "[]"):
            service = container.get("Labels", {}).get("com.docker.compose.service")
            if service:
                found[service] = container["Names"][0]
        return found

    def exit_code(self, container: str) -> int | None:
        """The container's exit code once it has exited, else None."""
        state = self.podman(
            "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", container
        )
        status, _, code = state.stdout.strip().partition(" ")
        return int(code) if status in {"exited", "stopped"} else None

    def exec(self, container: str, *command: str) -> subprocess.CompletedProcess[str]:
        return self.podman("exec", container, *command)


def wait_for_cluster(deployment: Deployment, container: str) -> None:
    deadline = time.monotonic() + CLUSTER_SECONDS
    while (code := deployment.exit_code(container)) is None:
        if time.monotonic() > deadline:
            raise CheckFailed(f"{container} did not finish within {CLUSTER_SECONDS:.0f} s")
        time.sleep(1)
    if code != 0:
        raise CheckFailed(f"{container} exited with code {code}")
    logs = deployment.podman("logs", container)
    say(f"redis cluster formed: {logs.stdout.strip().splitlines()[-1]}")


def wait_until_healthy(deployment: Deployment, containers: dict[str, str]) -> None:
    """Runs each container's health check until it passes (a container that exited fails)."""
    waiting = dict(containers)
    deadline = time.monotonic() + HEALTHY_SECONDS
    while waiting:
        for service, container in list(waiting.items()):
            if deployment.exit_code(container) is not None:
                raise CheckFailed(f"{service} ({container}) exited")
            if deployment.podman("healthcheck", "run", container).returncode == 0:
                say(f"{service} healthy")
                del waiting[service]
        if waiting and time.monotonic() > deadline:
            raise CheckFailed(f"not healthy after {HEALTHY_SECONDS:.0f} s: {', '.join(waiting)}")
        if waiting:
            time.sleep(2)


def check_image_healthchecks(deployment: Deployment, containers: dict[str, str]) -> None:
    """The image's HEALTHCHECK, `shikoku health` with no address, passes in each of ours."""
    for service, container in containers.items():
        if service.rpartition("-")[0] not in REPLICATED and service not in SINGLE:
            continue
        answered = deployment.exec(container, "shikoku", "health")
        if answered.returncode != 0:
            raise CheckFailed(f"{service}: `shikoku health` says {answered.stdout.strip()}")
        say(f"{service}: shikoku health: {answered.stdout.strip()}")


def wait_for_store(deployment: Deployment, gateway: str) -> None:
    """Until the cluster answers a client as the gateway's container sees it: a cluster whose
    nodes all say ok can still time out a first connection on a loaded host, and a key half
    issued is worse than a key issued a few seconds later. `api-key list` reads and writes
    nothing, so it is safe to repeat."""
    deadline = time.monotonic() + CLUSTER_SECONDS
    while (listed := deployment.exec(gateway, "shikoku", "api-key", "list")).returncode != 0:
        if time.monotonic() > deadline:
            raise CheckFailed(f"the store did not answer `shikoku api-key list`: {listed.stderr}")
        said = listed.stderr.strip().splitlines()
        say(f"waiting for the store: {said[-1] if said else listed.returncode}")
        time.sleep(2)


def issue_api_key(deployment: Deployment, gateway: str) -> str:
    wait_for_store(deployment, gateway)
    issued = deployment.exec(
        gateway, "shikoku", "api-key", "create", "deploy-check", "--per-second", "1000",
        "--burst", "1000",
    )  # fmt: skip
    if issued.returncode != 0:
        raise CheckFailed(f"shikoku api-key create: {issued.stdout}{issued.stderr}")
    key_id, key = issued.stdout.strip().splitlines()[-2:]
    say(f"API key issued: {key_id.split()[0]}")
    return key


def play(gateway: str, players: int, seed: int, api_key: str) -> str:
    """A whole bot game through `gateway`; returns its game id."""
    began = time.monotonic()
    played = subprocess.run(
        [
            *(sys.executable, "-m", "shikoku_sdk.bot", gateway, str(players)),
            *("--seed", str(seed), "--api-key", api_key),
        ],
        capture_output=True,
        text=True,
        timeout=GAME_SECONDS,
    )
    ended = ENDED.search(played.stdout)
    if played.returncode != 0 or ended is None:
        raise CheckFailed(f"the bot game through {gateway} failed:\n{played.stdout}{played.stderr}")
    say(f"through {gateway}: {ended.group(0)} ({time.monotonic() - began:.0f} s)")
    return ended.group(1)


def read_through_web(web: str, game_id: str, api_key: str) -> None:
    """GetState over Connect (JSON), through the web entrypoint to a gateway."""
    with urllib.request.urlopen(f"{web}/healthz", timeout=10) as healthz:
        if healthz.status != 200:
            raise CheckFailed(f"{web}/healthz answered {healthz.status}")
    request = urllib.request.Request(
        f"{web}/shikoku.v1.GameService/GetState",
        data=json.dumps({"gameId": game_id}).encode(),
        headers={"Content-Type": "application/json", "x-api-key": api_key},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        state = json.loads(answer.read())
    if state.get("gameId") != game_id or int(state.get("version", 0)) < 1:
        raise CheckFailed(f"the web entrypoint's GetState: {str(state)[:300]}")
    say(f"through the web entrypoint: game {game_id} at version {state['version']}")


def show_failure(deployment: Deployment) -> None:
    listed = deployment.podman(
        *("ps", "--all", "--filter", f"label=io.podman.compose.project={PROJECT}"),
        *("--format", "{{.Names}}\t{{.Status}}"),
    )
    print(listed.stdout, file=sys.stderr)
    for container in deployment.containers().values():
        logs = deployment.podman("logs", "--tail", "15", container)
        print(f"--- {container}\n{logs.stdout}{logs.stderr}", file=sys.stderr)


@contextmanager
def brought_up(deployment: Deployment) -> Iterator[None]:
    """The deployment up for the block, and down (volumes too) after it, whatever happened."""
    try:
        began = time.monotonic()
        up = deployment.compose("up", "--detach")
        if up.returncode != 0:
            raise CheckFailed(f"podman-compose up:\n{up.stdout}{up.stderr}")
        say(f"up ({time.monotonic() - began:.0f} s)")
        yield
    except BaseException:
        show_failure(deployment)
        raise
    finally:
        began = time.monotonic()
        down = deployment.compose("down", "--volumes", "--timeout", "10")
        left = deployment.containers()
        say(f"down ({time.monotonic() - began:.0f} s){f'; left: {left}' if left else ''}")
        if down.returncode != 0:
            print(down.stdout + down.stderr, file=sys.stderr)


def check(image: str, redis_image: str, players: int) -> None:
    ports = {name: free_port() for name in ("gateway", "gateway-2", "web")}
    with tempfile.TemporaryDirectory(prefix="shikoku-check-") as folder:
        env_file = Path(folder) / "shikoku.env"
        env_file.write_text(f"SHIKOKU_INTERNAL_TOKEN={secrets.token_urlsafe(32)}\n")
        env_file.chmod(0o600)
        env = {
            **os.environ,
            "SHIKOKU_IMAGE": image,
            "SHIKOKU_REDIS_IMAGE": redis_image,
            "SHIKOKU_ENV_FILE": str(env_file),
            "SHIKOKU_PUBLISH_ADDRESS": "127.0.0.1",
            "SHIKOKU_GATEWAY_PORT": str(ports["gateway"]),
            "SHIKOKU_GATEWAY_2_PORT": str(ports["gateway-2"]),
            "SHIKOKU_WEB_PORT": str(ports["web"]),
        }
        deployment = Deployment(env)
        if leftover := deployment.containers():
            say(f"taking down an earlier {PROJECT}: {', '.join(leftover)}")
            deployment.compose("down", "--volumes", "--timeout", "10")
        began = time.monotonic()
        with brought_up(deployment):
            containers = deployment.containers()
            wait_for_cluster(deployment, containers.pop("redis-cluster"))
            wait_until_healthy(deployment, containers)
            check_image_healthchecks(deployment, containers)
            say(f"all {len(containers)} containers healthy ({time.monotonic() - began:.0f} s)")
            api_key = issue_api_key(deployment, containers["gateway-1"])
            gateways = [f"127.0.0.1:{ports['gateway']}", f"127.0.0.1:{ports['gateway-2']}"]
            with ThreadPoolExecutor(len(gateways)) as pool:
                games = list(
                    pool.map(
                        play,
                        gateways,
                        [players] * len(gateways),
                        range(1, len(gateways) + 1),
                        [api_key] * len(gateways),
                    )
                )
            read_through_web(f"http://127.0.0.1:{ports['web']}", games[0], api_key)


def _stop(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # so that the deployment is taken down on the way out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default="localhost/shikoku:latest")
    parser.add_argument("--redis-image", default="localhost/shikoku-redis:latest")
    parser.add_argument("--players", type=int, default=4, help="players of each bot game")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _stop)
    began = time.monotonic()
    try:
        check(args.image, args.redis_image, args.players)
    except CheckFailed as failure:
        say(f"FAILED after {time.monotonic() - began:.0f} s: {failure}")
        return 1
    say(f"passed in {time.monotonic() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
