"""The whole system as `shikoku run` starts it (web bridge included, each process on a free
loopback port) and Debian's headless Chromium driven by Playwright."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, sync_playwright

from shikoku.redis_server import free_port

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium reaches for Google's hosts at start, which
# this machine's closed network refuses.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
START_TIMEOUT_SECONDS = 60
READY_LINE = "all services running"


@dataclass
class WebSystem:
    gateway: str
    web: str
    redis_url: str
    api_key: str

    @property
    def page_url(self) -> str:
        query = f"?api_key={self.api_key}" if self.api_key else ""
        return f"http://{self.web}/{query}"


def issue_api_key(redis_url: str) -> str:
    """The API key the gateway wants in `x-api-key`; none is required yet, so none is made."""
    # wired to `shikoku api-key create` at merge
    return ""


@pytest.fixture(scope="session")
def web_system(redis_url: str) -> Iterator[WebSystem]:
    # The test acts for three seats at machine speed, beyond the per-caller default limits.
    env = dict(
        os.environ, REDIS_URL=redis_url, SHIKOKU_RATE_PER_SECOND="10000", SHIKOKU_RATE_BURST="10000"
    )
    for name in ("GATEWAY", "LOBBY", "RULES", "ROUTES", "WEB"):
        env[f"SHIKOKU_{name}_ADDR"] = f"127.0.0.1:{free_port()}"
    shikoku = Path(sys.executable).parent / "shikoku"
    process = subprocess.Popen(
        [str(shikoku), "run"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
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
    while True:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            if process.poll() is None and time.monotonic() < deadline:
                continue
            process.kill()
            pytest.fail("shikoku run did not start: " + "".join(output))
        if line.startswith(READY_LINE):
            break
    yield WebSystem(
        env["SHIKOKU_GATEWAY_ADDR"], env["SHIKOKU_WEB_ADDR"], redis_url, issue_api_key(redis_url)
    )
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


# Module scope, not session: while Playwright's sync API is running, its event loop counts as
# running in this thread, and the asyncio tests after this module could not run theirs.
@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserContext]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"no Chromium at {CHROMIUM}: the browser tests need Debian's chromium package "
            "(`make browser` installs it; `make test` does so itself)"
        )
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS
        )
        yield context
        context.close()


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    page = browser.new_page()
    page.set_default_timeout(30_000)
    yield page
    page.close()
