"""Request header bytes as text: HTTP allows header values of any byte over 0x80 (obs-text,
historically ISO-8859-1), while the Connect server reads them as UTF-8 and would fail the whole
request on one that is not. Such a value is passed on as the ISO-8859-1 text it spells, so the
request is answered (a forwarded credential that is not ASCII then as BAD_HEADER, by
`gateway.web.upstream`) instead of failing as an unknown error."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


def _as_utf8(value: bytes) -> bytes:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1").encode("utf-8")
    return value


class HeaderText:
    """ASGI middleware: every request header value reaches the application as valid UTF-8."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(name, _as_utf8(value)) for name, value in scope.get("headers", ())]
            scope = {**scope, "headers": headers}
        await self._app(scope, receive, send)
