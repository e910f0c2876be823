"""One webhook request, on a connection to the address the guard checked (never to the host
name again): TLS's SNI and certificate check are against the host name, the whole exchange is
bounded by a short timeout, and a redirect is an answer like any other, not followed."""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass

from services.notify.address_guard import PinnedWebhook

CONNECT_SECONDS = 5.0
EXCHANGE_SECONDS = 10.0
MAX_STATUS_LINE = 1024
USER_AGENT = "shikoku-notifier/1"


@dataclass(frozen=True, slots=True)
class Answer:
    """How a request fared: `error` is empty for a 2xx answer, else in a few words."""

    status: int
    error: str

    @property
    def delivered(self) -> bool:
        return not self.error


def _host_header(pinned: PinnedWebhook) -> str:
    webhook = pinned.webhook
    host = f"[{webhook.host}]" if ":" in webhook.host else webhook.host
    default = 443 if webhook.tls else 80
    return host if webhook.port == default else f"{host}:{webhook.port}"


def request_bytes(pinned: PinnedWebhook, body: bytes, headers: dict[str, str]) -> bytes:
    lines = [
        f"POST {pinned.webhook.target} HTTP/1.1",
        f"Host: {_host_header(pinned)}",
        f"User-Agent: {USER_AGENT}",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def post(
    pinned: PinnedWebhook,
    body: bytes,
    headers: dict[str, str],
    tls: ssl.SSLContext | None = None,
    exchange_seconds: float = EXCHANGE_SECONDS,
) -> Answer:
    """POSTs `body` to the pinned webhook and reads the answer's status line."""
    webhook = pinned.webhook
    context = (tls or ssl.create_default_context()) if webhook.tls else None
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(exchange_seconds):
            async with asyncio.timeout(CONNECT_SECONDS):
                reader, writer = await asyncio.open_connection(
                    pinned.address,
                    webhook.port,
                    ssl=context,
                    server_hostname=webhook.host if context else None,
                )
            writer.write(request_bytes(pinned, body, headers))
            await writer.drain()
            status_line = await reader.readuntil(b"\n")
    except TimeoutError:
        return Answer(0, "timed out")
    except ssl.SSLError as error:
        return Answer(0, f"TLS: {error.reason or error}")
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
        return Answer(0, f"connection failed: {type(error).__name__}")
    finally:
        if writer is not None:
            writer.close()
    return _answer(status_line[:MAX_STATUS_LINE])


def _answer(status_line: bytes) -> Answer:
    parts = status_line.decode("latin-1").split()
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        return Answer(0, "not an HTTP answer")
    status = int(parts[1])
    if 200 <= status < 300:
        return Answer(status, "")
    if 300 <= status < 400:
        return Answer(status, f"HTTP {status} (redirects are not followed)")
    return Answer(status, f"HTTP {status}")
