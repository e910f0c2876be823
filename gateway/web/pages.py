"""The pages: the files of gateway/web/static/, served at `/` (`index.html`, the board page, for
`/`; `host.html`, the host console, for `/host`), and nothing else on disk. Every answer says
how to treat it: not sniffed, revalidated each time (the page changes with the server), and the
page itself held to its own origin."""

from __future__ import annotations

from pathlib import Path

from starlette.datastructures import MutableHeaders
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC = Path(__file__).parent / "static"

# The page loads only its own scripts and talks only to the server that served it.
PAGE_POLICY = "default-src 'self'; style-src 'self' 'unsafe-inline'; object-src 'none'"
# Pages at an address of their own rather than their file's name.
PAGE_FILES = {"/host": "/host.html"}


class _Pages:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (file := PAGE_FILES.get(scope.get("path", ""))) is not None:
            scope = {**scope, "path": file}

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["x-content-type-options"] = "nosniff"
                headers["cache-control"] = "no-cache"
                if headers.get("content-type", "").startswith("text/html"):
                    headers["content-security-policy"] = PAGE_POLICY
            await send(message)

        await self._app(scope, receive, with_headers)


def static_files(directory: Path = STATIC) -> ASGIApp:
    return _Pages(StaticFiles(directory=directory, html=True))
