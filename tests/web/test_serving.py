"""What the web entrypoint serves besides single calls: every public method, the demo page's
files and `/healthz`, and CORS for pages of other origins, by default any and, on a server
started with `SHIKOKU_WEB_ORIGINS` (`shikoku serve web`, a real process), only those named."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.public_api import public_methods, public_services
from gateway.web.app import connect_applications
from infra.config import service_channel
from shikoku_dev.redis_server import free_port
from tests.e2e.api import System
from tests.e2e.launch import SHIKOKU
from tests.web.wire import END_STREAM, api_headers, connection, envelope, frames, post

pytestmark = pytest.mark.e2e

STATIC = Path(__file__).parents[2] / "gateway" / "web" / "static"
ALLOWED = "https://play.example"


async def test_every_service_of_the_public_api_has_a_connect_application() -> None:
    channel = service_channel("127.0.0.1:1", "")
    try:
        paths = {app.path for app in connect_applications(channel)}
    finally:
        await channel.close(None)
    assert paths == {f"/{service.full_name}" for service in public_services()}


def test_every_public_method_reaches_the_gateway(web_api: System) -> None:
    """Without a key, the gateway refuses every method: an answer that says so shows the call
    went through (an unserved method would be 404)."""
    conn = connection(web_api.web)
    for path, method in sorted(public_methods().items()):
        if method.streaming:
            headers = {"content-type": "application/connect+json"}
            answer = post(conn, path, envelope(b"{}"), headers)
            [(flags, payload)] = frames(answer.body)
            assert flags & END_STREAM
            error = json.loads(payload)["error"]
        else:
            answer = post(conn, path, b"{}", {"content-type": "application/json"})
            error = answer.json()
        assert answer.status == (200 if method.streaming else 401), path
        assert error["code"] == "unauthenticated", path
        assert error["details"][0]["debug"]["reason"] == "MISSING_API_KEY", path


def test_the_demo_page_and_its_files_are_served_with_their_policy(web_api: System) -> None:
    conn = connection(web_api.web)
    conn.request("GET", "/")
    page = conn.getresponse()
    assert page.status == 200
    assert page.read() == (STATIC / "index.html").read_bytes()
    assert (page.getheader("content-type") or "").startswith("text/html")
    assert "default-src 'self'" in (page.getheader("content-security-policy") or "")
    assert page.getheader("x-content-type-options") == "nosniff"

    for name in sorted(p.name for p in STATIC.iterdir() if p.suffix == ".js"):
        conn.request("GET", f"/{name}")
        script = conn.getresponse()
        assert script.status == 200, name
        assert script.read() == (STATIC / name).read_bytes()
        assert "javascript" in (script.getheader("content-type") or ""), name


@pytest.mark.parametrize("path", ["/missing.js", "/../pyproject.toml", "/%2e%2e/pyproject.toml"])
def test_nothing_else_on_disk_is_served(web_api: System, path: str) -> None:
    conn = connection(web_api.web)
    conn.request("GET", path)
    answer = conn.getresponse()
    assert answer.status == 404
    assert b"[project]" not in answer.read()


def test_healthz_answers_ok(web_api: System) -> None:
    conn = connection(web_api.web)
    conn.request("GET", "/healthz")
    answer = conn.getresponse()
    assert (answer.status, answer.read()) == (200, b"ok\n")


def preflight(address: str, origin: str, path: str) -> tuple[int, dict[str, str]]:
    conn = connection(address)
    headers = {
        "origin": origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": (
            "authorization,connect-protocol-version,content-type,x-api-key"
        ),
    }
    conn.request("OPTIONS", path, headers=headers)
    answer = conn.getresponse()
    answer.read()
    return answer.status, {k.lower(): v for k, v in answer.getheaders()}


def test_a_preflight_allows_what_connect_and_our_credentials_need(web_api: System) -> None:
    status, headers = preflight(
        web_api.web, "http://localhost:1234", "/shikoku.v1.GameService/WatchGame"
    )
    assert status == 200
    assert headers["access-control-allow-origin"] == "*"
    assert "POST" in headers["access-control-allow-methods"]
    allowed = {h.strip().lower() for h in headers["access-control-allow-headers"].split(",")}
    assert {"authorization", "x-api-key", "connect-protocol-version", "content-type"} <= allowed
    assert {"grpc-timeout", "x-grpc-web", "connect-timeout-ms"} <= allowed
    assert int(headers["access-control-max-age"]) > 0

    conn = connection(web_api.web)
    answer = post(
        conn,
        "/shikoku.v1.LobbyService/ListTables",
        b"{}",
        {**api_headers(web_api.api_key), "content-type": "application/json", "origin": ALLOWED},
    )
    assert answer.status == 200
    assert answer.headers["access-control-allow-origin"] == "*"
    exposed = {h.strip() for h in answer.headers["access-control-expose-headers"].split(",")}
    assert {"grpc-status", "grpc-message", "grpc-status-details-bin", "retry-after"} <= exposed


@pytest.fixture(scope="module")
def restricted_web(web_api: System) -> Iterator[str]:
    """`shikoku serve web` on its own port, before the same gateway, open to one origin."""
    address = f"127.0.0.1:{free_port()}"
    env = dict(
        os.environ,
        SHIKOKU_WEB_ADDR=address,
        SHIKOKU_GATEWAY_ADDR=web_api.gateway,
        SHIKOKU_WEB_ORIGINS=f"{ALLOWED}, https://admin.example/",
    )
    process = subprocess.Popen(
        [str(SHIKOKU), "serve", "web"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def relay() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=relay, daemon=True).start()
    try:
        while not (line := lines.get(timeout=30)).startswith("web listening on "):
            pass
        assert line.split()[-1] == address
        yield address
    finally:
        process.terminate()
        assert process.wait(timeout=15) == 0
        output = []
        while not lines.empty():
            output.append(lines.get())
        assert "web stopped\n" in output


def test_only_the_configured_origins_may_call(restricted_web: str, web_api: System) -> None:
    path = "/shikoku.v1.LobbyService/ListTables"
    status, headers = preflight(restricted_web, ALLOWED, path)
    assert status == 200 and headers["access-control-allow-origin"] == ALLOWED
    # A trailing slash in the setting names the same origin.
    status, headers = preflight(restricted_web, "https://admin.example", path)
    assert status == 200 and headers["access-control-allow-origin"] == "https://admin.example"
    status, headers = preflight(restricted_web, "https://evil.example", path)
    assert status == 400 and "access-control-allow-origin" not in headers

    for origin, allowed in ((ALLOWED, True), ("https://evil.example", False)):
        answer = post(
            connection(restricted_web),
            path,
            b"{}",
            {**api_headers(web_api.api_key), "content-type": "application/json", "origin": origin},
        )
        assert answer.status == 200  # answered; only a browser withholds it from the page
        assert (answer.headers.get("access-control-allow-origin") == origin) is allowed
        assert "origin" in answer.headers.get("vary", "").lower()
