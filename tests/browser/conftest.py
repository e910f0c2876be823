"""The whole system as `shikoku run` starts it (web entrypoint included, each process on a free
loopback port) and Debian's headless Chromium driven by Playwright."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.e2e.launch import start_system, stop_system

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

# What a page shows follows the services' projections (table summaries, the legal actions),
# which a loaded machine running three test workers on two cores may take seconds to bring:
# assertions wait as long as the pages' own actions do.
expect.set_options(timeout=30_000)


@dataclass
class WebSystem:
    gateway: str
    web: str
    redis_url: str
    api_key: str

    @property
    def page_url(self) -> str:
        return f"http://{self.web}/?api_key={self.api_key}"


@pytest.fixture(scope="session")
def web_system(redis_url: str) -> Iterator[WebSystem]:
    # The test acts for three seats at machine speed, beyond the per-caller default limits.
    system = start_system(redis_url, SHIKOKU_RATE_PER_SECOND="10000", SHIKOKU_RATE_BURST="10000")
    yield WebSystem(system.gateway, system.web, system.redis_url, system.api_key)
    stop_system(system)


# Module scope, not session: while Playwright's sync API is running, its event loop counts as
# running in this thread, and the asyncio tests after this module could not run theirs.
def _require_chromium() -> None:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"no Chromium at {CHROMIUM}: the browser tests need Debian's chromium package "
            "(`make browser` installs it; `make test` does so itself)"
        )


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserContext]:
    _require_chromium()
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS
        )
        yield context
        context.close()


def collect_script_errors(page: Page, errors: list[str]) -> None:
    """Adds to `errors` each script error on `page` and anything its security policy blocks."""
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            errors.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    """A page of the test's own; a script error on it fails the test."""
    page = browser.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    collect_script_errors(page, errors)
    yield page
    page.close()
    assert errors == [], "script errors on the page"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """One Chromium for several browser contexts: each context is a player of its own (its own
    localStorage, cookies and connections), as two people at two computers would be."""
    _require_chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS
        )
        yield launched
        launched.close()


@pytest.fixture
def player_pages(chromium: Browser) -> Iterator[list[Page]]:
    """Three pages, each in a browser context of its own (three players' browsers); a script
    error on any of them fails the test."""
    contexts = [chromium.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
    pages = [context.new_page() for context in contexts]
    errors: list[str] = []
    for page in pages:
        page.set_default_timeout(30_000)
        collect_script_errors(page, errors)
    yield pages
    for context in contexts:
        context.close()
    assert errors == [], "script errors on a player's page"


@dataclass
class Screenshots:
    directory: Path
    taken: list[str] = field(default_factory=list)

    def take(self, page: Page, name: str) -> None:
        if name in self.taken:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(self.directory / f"board-{name}.png"), full_page=True)
        self.taken.append(name)


@pytest.fixture
def screenshots(tmp_path: Path) -> Screenshots:
    """Where a test's pictures go: $SHIKOKU_SCREENSHOTS (docs/images refreshes the docs'), else
    its temporary directory."""
    return Screenshots(Path(os.environ.get("SHIKOKU_SCREENSHOTS") or tmp_path))
