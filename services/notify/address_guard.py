"""The webhook guard: a player's webhook may reach only the public internet.

A URL is checked when it is set and again before every delivery: https only, a host name (or a
literal address), and every address the name resolves to public (`forbidden_class` says which
class an address belongs to when it is not). A delivery connects to the address that was
checked, never to the name again (`PinnedWebhook`), so a name that resolves to a public address
for the check and a private one for the request (DNS rebinding) reaches nothing.

With `allow_loopback` (development and tests only) `http://127.0.0.1:PORT/...` is allowed as
well; nothing else changes.

The classification and the URL's parsing are pure; resolving a name is the `Resolve` port, which
tests hand a table of addresses.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import SplitResult, urlsplit

from kernel.rejection import Kind, Rejected, quoted

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: The addresses (as text) a host name resolves to for a TCP connection to `port`.
Resolve = Callable[[str, int], Awaitable[list[str]]]

INVALID_WEBHOOK_URL: Final = "INVALID_WEBHOOK_URL"
FORBIDDEN_WEBHOOK_ADDRESS: Final = "FORBIDDEN_WEBHOOK_ADDRESS"
MAX_URL_CHARS = 2048
RESOLVE_SECONDS = 3.0
LOOPBACK = ipaddress.IPv4Address("127.0.0.1")

_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SITE_LOCAL = ipaddress.IPv6Network("fec0::/10")


def forbidden_class(address: IPAddress) -> str | None:
    """Why a webhook may not reach `address` (its class, e.g. "loopback"), or None when it is
    a public address. An IPv6 address that carries an IPv4 one is refused as the IPv4 one
    would be, or outright when it is an IPv4-mapped or -compatible form."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return "ipv4-mapped"
        if address in _IPV4_COMPATIBLE and not (address.is_unspecified or address.is_loopback):
            return "ipv4-compatible"
        for embedded, tunnel in _embedded(address):
            if (inner := forbidden_class(embedded)) is not None:
                return f"{tunnel} of {inner}"
        if address in _SITE_LOCAL:
            return "site-local"
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),  # 169.254.169.254, the cloud metadata service
        ("shared (CGNAT)", isinstance(address, ipaddress.IPv4Address) and address in _CGNAT),
        ("multicast", address.is_multicast),
        ("private", address.is_private),  # fc00::/7 among them
        ("reserved", address.is_reserved),
    )
    for name, found in checks:
        if found:
            return name
    return None if address.is_global else "not global"


def _embedded(address: ipaddress.IPv6Address) -> list[tuple[ipaddress.IPv4Address, str]]:
    """The IPv4 addresses an IPv6 transition address routes to (6to4, Teredo, NAT64)."""
    found: list[tuple[ipaddress.IPv4Address, str]] = []
    if address.sixtofour is not None:
        found.append((address.sixtofour, "6to4"))
    if address.teredo is not None:
        server, client = address.teredo
        found += [(server, "Teredo"), (client, "Teredo")]
    if address in _NAT64:
        found.append((ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF), "NAT64"))
    return found


@dataclass(frozen=True, slots=True)
class WebhookUrl:
    """A webhook URL that parsed: what a connection needs of it."""

    url: str
    scheme: str
    host: str  # the name, IDNA-encoded (or the literal address)
    port: int
    target: str  # path and query, what the request line asks for
    literal: IPAddress | None  # the host, when it is an address

    @property
    def tls(self) -> bool:
        return self.scheme == "https"


@dataclass(frozen=True, slots=True)
class PinnedWebhook:
    """A checked webhook and the address its connection goes to (the host name is still what
    TLS's SNI and certificate check and the Host header name)."""

    webhook: WebhookUrl
    address: str


def _invalid(url: str, why: str) -> Rejected:
    return Rejected(
        INVALID_WEBHOOK_URL,
        f"the webhook URL {quoted(url)!r} {why}",
        Kind.INVALID_ARGUMENT,
        {"field": "url", "url": quoted(url)},
    )


def _forbidden(url: str, address: str, kind: str) -> Rejected:
    return Rejected(
        FORBIDDEN_WEBHOOK_ADDRESS,
        f"the webhook's host resolves to {address}, which is {kind}: only public addresses "
        "may be reached",
        Kind.INVALID_ARGUMENT,
        {"field": "url", "url": quoted(url), "address": address, "class": kind},
    )


def parse_webhook_url(url: str, allow_loopback: bool = False) -> WebhookUrl:
    """The parts of `url`, or Rejected INVALID_WEBHOOK_URL: an https URL with a host and no
    credentials (http too for the host 127.0.0.1 under `allow_loopback`)."""
    if len(url) > MAX_URL_CHARS or not url.isprintable() or any(c.isspace() for c in url):
        raise _invalid(url, f"is not a URL of at most {MAX_URL_CHARS} printable characters")
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname or ""
    except ValueError:
        raise _invalid(url, "is not a URL") from None
    if parts.username is not None or parts.password is not None:
        raise _invalid(url, "carries credentials")
    if not host:
        raise _invalid(url, "has no host")
    literal = _literal(host)
    loopback_allowed = allow_loopback and literal == LOOPBACK
    if parts.scheme != "https" and not (loopback_allowed and parts.scheme == "http"):
        raise _invalid(url, "is not https")
    if literal is None:
        host = _idna(url, host)
    return WebhookUrl(
        url,
        parts.scheme,
        host,
        port or (443 if parts.scheme == "https" else 80),
        _request_target(parts),
        literal,
    )


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _idna(url: str, host: str) -> str:
    try:
        encoded = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise _invalid(url, "has a host name that is not valid") from None
    if not all(label and len(label) <= 63 for label in encoded.rstrip(".").split(".")):
        raise _invalid(url, "has a host name that is not valid")
    return encoded


def _request_target(parts: SplitResult) -> str:
    path = parts.path or "/"
    return f"{path}?{parts.query}" if parts.query else path


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system's resolver gives `host`, for TCP."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True, slots=True)
class WebhookGuard:
    """Checks webhook URLs: `allow_loopback` (SHIKOKU_WEBHOOK_ALLOW_LOOPBACK, off by default)
    lets `http://127.0.0.1:PORT/...` through too; `resolve` turns host names into addresses."""

    allow_loopback: bool = False
    resolve: Resolve = system_resolver
    resolve_seconds: float = RESOLVE_SECONDS

    async def check(self, url: str) -> PinnedWebhook:
        """The webhook and the public address to connect to, or Rejected
        (INVALID_WEBHOOK_URL, FORBIDDEN_WEBHOOK_ADDRESS)."""
        webhook = parse_webhook_url(url, self.allow_loopback)
        if webhook.literal is not None:
            addresses: list[str] = [str(webhook.literal)]
        else:
            addresses = await self._resolved(webhook)
        checked = [_address(url, text) for text in addresses]
        for address in checked:
            if self.allow_loopback and address == LOOPBACK and webhook.literal == LOOPBACK:
                continue
            if (kind := forbidden_class(address)) is not None:
                raise _forbidden(url, str(address), kind)
        return PinnedWebhook(webhook, str(checked[0]))

    async def _resolved(self, webhook: WebhookUrl) -> list[str]:
        try:
            async with asyncio.timeout(self.resolve_seconds):
                addresses = await self.resolve(webhook.host, webhook.port)
        except (OSError, TimeoutError, UnicodeError):
            addresses = []
        if not addresses:
            raise _invalid(webhook.url, "has a host name that does not resolve")
        return addresses


def _address(url: str, text: str) -> IPAddress:
    try:
        # A scoped IPv6 address (fe80::1%eth0) is link-local whatever its scope.
        return ipaddress.ip_address(text.partition("%")[0])
    except ValueError:
        raise _invalid(
            url, f"resolves to something that is not an address: {quoted(text)}"
        ) from None
