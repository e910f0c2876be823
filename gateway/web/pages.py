"""The demo page and its script, served from gateway/web/static/ by fixed URL (nothing else on
disk is reachable)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

STATIC = Path(__file__).parent / "static"

# The page loads only its own script and talks only to the bridge that served it.
_PAGE_POLICY = "default-src 'self'; style-src 'self' 'unsafe-inline'; object-src 'none'"


@dataclass(frozen=True)
class Page:
    body: bytes
    headers: tuple[tuple[str, str], ...]


def _page(name: str, content_type: str, *extra: tuple[str, str]) -> Page:
    headers = (
        ("Content-Type", content_type),
        ("Cache-Control", "no-cache"),
        ("X-Content-Type-Options", "nosniff"),
        *extra,
    )
    return Page((STATIC / name).read_bytes(), headers)


def demo_pages() -> dict[str, Page]:
    return {
        "/": _page(
            "index.html", "text/html; charset=utf-8", ("Content-Security-Policy", _PAGE_POLICY)
        ),
        "/app.js": _page("app.js", "text/javascript; charset=utf-8"),
    }
