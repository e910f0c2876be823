"""`shikoku health`, run as a real process against a gRPC server's standard health service and
an HTTP `/healthz`, and how it finds the service of its container when given no address."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from shikoku_dev.redis_server import free_port
from tools.health import main as health_main
from tools.health import own_address, process_commands, served_service

SHIKOKU = str(Path(sys.executable).parent / "shikoku")
RULES = "shikoku.internal.v1.RulesService"


def shikoku_health(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SHIKOKU, "health", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **env},
    )


@pytest.fixture
def health_server() -> Iterator[tuple[str, health.HealthServicer]]:
    """A gRPC server with only the standard health service, on a free loopback port."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}", servicer
    server.stop(None)


class _Healthz(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/healthz" else 503)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def web() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Healthz)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_serving_server_passes_and_one_that_is_not_fails(
    health_server: tuple[str, health.HealthServicer],
) -> None:
    address, servicer = health_server
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    servicer.set(RULES, health_pb2.HealthCheckResponse.NOT_SERVING)
    serving = shikoku_health(address)
    assert serving.returncode == 0, serving.stdout + serving.stderr
    assert serving.stdout.strip() == f"{address}: SERVING"

    not_serving = shikoku_health(address, "--service", RULES)
    assert not_serving.returncode == 1
    assert not_serving.stdout.strip() == f"{address} ({RULES}): NOT_SERVING"

    unknown = shikoku_health(address, "--service", "shikoku.v1.Nothing")
    assert unknown.returncode == 1 and "NOT_FOUND" in unknown.stdout

    servicer.set(RULES, health_pb2.HealthCheckResponse.SERVING)
    assert shikoku_health(address, "--service", RULES).returncode == 0


def test_nothing_listening_fails_within_the_timeout() -> None:
    address = f"127.0.0.1:{free_port()}"
    refused = shikoku_health(address, "--timeout", "1")
    assert refused.returncode == 1
    assert refused.stdout.startswith(f"{address}: UNAVAILABLE") or "DEADLINE" in refused.stdout
    assert "Traceback" not in refused.stderr


def test_an_http_address_is_a_get_answered_200(web: str) -> None:
    assert shikoku_health(f"{web}/healthz").returncode == 0
    elsewhere = shikoku_health(f"{web}/other")
    assert elsewhere.returncode == 1 and elsewhere.stdout.strip().endswith("HTTP 503")
    nobody = shikoku_health(f"http://127.0.0.1:{free_port()}/healthz", "--timeout", "1")
    assert nobody.returncode == 1 and "UNAVAILABLE" in nobody.stdout


def _fake_proc(root: Path, commands: dict[int, list[str]]) -> Path:
    for pid, argv in commands.items():
        (root / str(pid)).mkdir(parents=True)
        (root / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    (root / "self").mkdir()  # not a process: skipped
    return root


def test_the_served_service_is_that_of_the_oldest_shikoku_serve(tmp_path: Path) -> None:
    proc = _fake_proc(
        tmp_path,
        {
            12: ["/bin/sh", "-c", "serve rules"],
            40: ["/opt/shikoku/bin/python3", "/opt/shikoku/bin/shikoku", "serve", "lobby"],
            7: ["/usr/bin/catatonit", "--", "shikoku", "serve", "--redis-url", "r", "routes"],
        },
    )
    commands = process_commands(proc)
    assert commands[0][0] == "/usr/bin/catatonit"
    assert served_service(commands) == "routes"
    assert served_service(commands[1:]) == "lobby"
    assert served_service([["/bin/sh", "-c", "serve rules"], ["shikoku", "run"]]) is None


def test_its_address_is_where_that_service_listens_by_the_same_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SHIKOKU_RULES_ADDR", "dns:///rules:50053")
    monkeypatch.setenv("SHIKOKU_RULES_LISTEN_ADDR", "0.0.0.0:50053")
    monkeypatch.setenv("SHIKOKU_LOBBY_ADDR", "lobby.internal:6000")
    monkeypatch.setenv("SHIKOKU_WEB_ADDR", "0.0.0.0:8081")
    monkeypatch.setenv("SHIKOKU_ROUTES_LISTEN_ADDR", "[::]:50054")
    assert own_address("rules") == "127.0.0.1:50053"
    assert own_address("lobby") == "lobby.internal:6000"
    assert own_address("routes") == "[::1]:50054"
    assert own_address("web") == "http://127.0.0.1:8081/healthz"


def test_without_an_address_it_checks_the_service_running_here(
    health_server: tuple[str, health.HealthServicer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    address, servicer = health_server
    monkeypatch.setenv("SHIKOKU_ROUTES_LISTEN_ADDR", f"0.0.0.0:{address.rpartition(':')[2]}")
    proc = _fake_proc(tmp_path / "routes", {1: ["/opt/shikoku/bin/shikoku", "serve", "routes"]})
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    assert health_main(None, proc=proc) == 0
    servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    assert health_main(None, proc=proc) == 1
    assert health_main(None, proc=_fake_proc(tmp_path / "none", {2: ["sleep", "9"]})) == 1
