"""The Compose deployment (deploy/compose.yaml), without running it (`make deploy-check` does).

The file is held, offline, to the Compose specification's schema (the one check-jsonschema
ships), after YAML's merges, so that a key misspelt in a shared block fails too; podman-compose
must render it; and our own checks hold it to what deploy/README.md says of it: a Redis Cluster
of six nodes that one init container joins, two replicas of each service that share one DNS
name, the web entrypoint, one notifier, health checks on every container through `shikoku
health` at the port the image listens on, the deployment token from the env file only, ports
published for the gateways and the web entrypoint alone. Broken copies are shown to fail each
kind of check.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tools import health
from tools.cli import SERVE_MODULES

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose.yaml"
CONTAINERFILE = ROOT / "deploy" / "Containerfile"
BIN = Path(sys.executable).parent
REPLICATED = ("rules", "routes", "lobby", "gateway")
PUBLISHED = {"gateway-1", "gateway-2", "web"}
REDIS_NODES = [f"redis-{n}" for n in range(1, 7)]

pytestmark = pytest.mark.slow  # podman-compose renders the file, check-jsonschema holds it


def image_ports() -> dict[str, int]:
    """Each service's port in the image, from the Containerfile's listen settings."""
    text = CONTAINERFILE.read_text()
    found = re.findall(r"SHIKOKU_([A-Z]+)_(?:LISTEN_)?ADDR=0\.0\.0\.0:(\d+)", text)
    return {name.lower(): int(port) for name, port in found}


def schema_errors(path: Path) -> list[str]:
    checked = subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.compose-spec", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return [] if checked.returncode == 0 else [checked.stdout + checked.stderr]


def render_errors(path: Path) -> list[str]:
    rendered = subprocess.run(
        [sys.executable, "-m", "podman_compose", "--file", str(path), "config"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return [] if rendered.returncode == 0 else [rendered.stdout + rendered.stderr]


def shape_errors(compose: dict[str, Any]) -> list[str]:
    """What the file says against what the deployment is meant to be."""
    errors: list[str] = []
    services: dict[str, dict[str, Any]] = compose["services"]
    ports = image_ports()

    def expect(condition: bool, problem: str) -> None:
        if not condition:
            errors.append(problem)

    ours = {name: s for name, s in services.items() if not name.startswith("redis")}
    for name in REDIS_NODES:
        node = services.get(name, {})
        expect(node.get("command") == ["cluster-node"], f"{name}: not a cluster node")
        expect(node.get("hostname") == name, f"{name}: announces another host name")
        expect("healthcheck" in node, f"{name}: no health check")
    init = services.get("redis-cluster", {})
    expect(
        init.get("command") == ["create-cluster", *(f"{n}:6379" for n in REDIS_NODES)],
        "redis-cluster does not join the six nodes",
    )
    expect(init.get("environment", {}).get("REPLICAS") == "1", "not one replica to a master")
    expect(init.get("restart") == "no", "redis-cluster is not a one-shot")

    for name in REPLICATED:
        replicas = sorted(s for s in ours if s.rpartition("-")[0] == name)
        expect(replicas == [f"{name}-1", f"{name}-2"], f"{name}: replicas {replicas}")
        for replica in replicas:
            service = ours[replica]
            aliases = service.get("networks", {}).get("default", {}).get("aliases", [])
            expect(aliases == [name], f"{replica}: not reachable as {name}")
            expect(service.get("command") == [name], f"{replica}: does not serve {name}")
            health = ["CMD", "shikoku", "health", f"127.0.0.1:{ports[name]}"]
            expect(service.get("healthcheck", {}).get("test") == health, f"{replica}: health")
    web = ours.get("web", {})
    expect(web.get("command") == ["web"], "web: does not serve web")
    healthz = ["CMD", "shikoku", "health", f"http://127.0.0.1:{ports['web']}/healthz"]
    expect(web.get("healthcheck", {}).get("test") == healthz, "web: health")
    # One notifier, called by nobody (so no alias), healthy on its own port.
    notify = ours.get("notify", {})
    expect(notify.get("command") == ["notify"], "notify: does not serve notify")
    health = ["CMD", "shikoku", "health", f"127.0.0.1:{ports['notify']}"]
    expect(notify.get("healthcheck", {}).get("test") == health, "notify: health")
    expect("networks" not in notify, "notify: has a network alias")
    expect(
        set(ours) == {f"{n}-{i}" for n in REPLICATED for i in (1, 2)} | {"web", "notify"},
        f"services {sorted(ours)}",
    )

    redis_url = "redis+cluster://" + ",".join(f"{n}:6379" for n in REDIS_NODES)
    for name, service in ours.items():
        environment = service.get("environment", {})
        expect(environment.get("REDIS_URL") == redis_url, f"{name}: REDIS_URL")
        for other in REPLICATED:
            address = f"dns:///{other}:{ports[other]}"
            setting = f"SHIKOKU_{other.upper()}_ADDR"
            expect(environment.get(setting) == address, f"{name}: {setting}")
        expect("SHIKOKU_INTERNAL_TOKEN" not in environment, f"{name}: the token in the file")
        expect(bool(service.get("env_file")), f"{name}: no env file (the token)")
        condition = service.get("depends_on", {}).get("redis-cluster", {}).get("condition")
        expect(condition == "service_completed_successfully", f"{name}: before the cluster")

    for name, service in services.items():
        published = service.get("ports", [])
        if name not in PUBLISHED:
            expect(not published, f"{name}: publishes {published}")
            continue
        target = ports[name.rpartition("-")[0] or name] if name != "web" else ports["web"]
        expect(
            len(published) == 1 and str(published[0]).endswith(f":{target}"),
            f"{name}: publishes {published}",
        )
    return errors


def problems(path: Path) -> list[str]:
    found = schema_errors(path) + render_errors(path)
    if not found:
        found = shape_errors(yaml.safe_load(path.read_text()))
    return found


def test_the_compose_file_is_valid_and_the_deployment_it_says() -> None:
    assert problems(COMPOSE) == []


def test_the_image_listens_where_compose_looks() -> None:
    assert image_ports() == {
        "gateway": 50051,
        "lobby": 50052,
        "rules": 50053,
        "routes": 50054,
        "web": 8080,
        "notify": 50055,
    }


@pytest.mark.parametrize("service", sorted(SERVE_MODULES))
def test_the_images_own_health_check_finds_every_service_it_serves(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The image's HEALTHCHECK is `shikoku health` with no address: in each service's container
    # it must ask where the image makes that service listen.
    for setting, value in re.findall(r"(SHIKOKU_[A-Z_]+)=(\S+)", CONTAINERFILE.read_text()):
        monkeypatch.setenv(setting, value)
    port = image_ports()[service]
    expected = f"http://127.0.0.1:{port}/healthz" if service == "web" else f"127.0.0.1:{port}"
    assert service in health.SERVICES
    assert health.own_address(service) == expected


def _replace(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert text.count(old) >= 1, old
        return text.replace(old, new, 1)

    return edit


BROKEN: dict[str, tuple[Callable[[str], str], str]] = {
    # A key the specification does not have, in the block every service of ours merges.
    "unknown key in a shared block": (
        _replace("  restart: unless-stopped\n", "  restart: unless-stopped\n  replicas: 2\n"),
        "'replicas' was unexpected",
    ),
    "a volume list as a mapping": (
        _replace('    volumes: ["redis-1:/data"]\n', "    volumes: {redis-1: /data}\n"),
        "volumes",
    ),
    "not YAML": (_replace("services:\n", "services:\n  - [\n"), "yaml"),
    "the rules port published": (
        _replace(
            '    command: ["rules"]\n', '    command: ["rules"]\n    ports: ["50053:50053"]\n'
        ),
        "rules-1: publishes",
    ),
    "one lobby replica": (_replace("  lobby-2: *lobby\n", ""), "lobby: replicas"),
    "a second notifier": (
        _replace(
            "  notify:\n", "  notify-2:\n    <<: *service\n    command: [notify]\n  notify:\n"
        ),
        "services",
    ),
    "the notifier's health at the lobby's port": (
        _replace('"127.0.0.1:50055"]', '"127.0.0.1:50052"]'),
        "notify: health",
    ),
    "the notifier's port published": (
        _replace(
            '    command: ["notify"]\n', '    command: ["notify"]\n    ports: ["50055:50055"]\n'
        ),
        "notify: publishes",
    ),
    "a health check at the wrong port": (
        _replace('"127.0.0.1:50054"]', '"127.0.0.1:50053"]'),
        "routes-1: health",
    ),
    "the token written into the file": (
        _replace(
            '    SHIKOKU_REDIS_WAIT_REPLICAS: "1"\n',
            '    SHIKOKU_REDIS_WAIT_REPLICAS: "1"\n    SHIKOKU_INTERNAL_TOKEN: secret\n',
        ),
        "the token in the file",
    ),
    "a cluster of five": (
        _replace("      - redis-6:6379\n", ""),
        "redis-cluster does not join the six nodes",
    ),
}


@pytest.mark.parametrize("breakage", sorted(BROKEN))
def test_a_broken_copy_fails(breakage: str, tmp_path: Path) -> None:
    edit, expected = BROKEN[breakage]
    copy = tmp_path / "compose.yaml"
    shutil.copy(COMPOSE, copy)
    copy.write_text(edit(copy.read_text()))
    found = problems(copy)
    assert any(expected.lower() in problem.lower() for problem in found), found
