"""The webhook guard: https only, every address the host resolves to public, the connection
pinned to the checked address. Each forbidden class is tried with addresses handed in by a
resolver of the test's own, never reached."""

from __future__ import annotations

import pytest

from kernel.rejection import Kind, Rejected
from services.notify.address_guard import (
    FORBIDDEN_WEBHOOK_ADDRESS,
    INVALID_WEBHOOK_URL,
    WebhookGuard,
    forbidden_class,
    parse_webhook_url,
)

PUBLIC_V4 = "93.184.215.14"
PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c"


def resolving(*addresses: str, asked: list[str] | None = None) -> WebhookGuard:
    async def resolve(host: str, port: int) -> list[str]:
        if asked is not None:
            asked.append(f"{host}:{port}")
        return list(addresses)

    return WebhookGuard(resolve=resolve)


FORBIDDEN = [
    ("127.0.0.1", "loopback"),
    ("127.8.9.10", "loopback"),
    ("::1", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("169.254.169.254", "link-local"),  # the cloud metadata service
    ("169.254.0.1", "link-local"),
    ("fe80::1", "link-local"),
    ("fe80::1%eth0", "link-local"),
    ("100.64.0.1", "shared (CGNAT)"),
    ("100.127.255.254", "shared (CGNAT)"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("240.0.0.1", "private"),  # reserved for future use: in the stdlib's private list
    ("255.255.255.255", "private"),
    ("192.0.2.1", "private"),  # documentation
    ("198.18.0.1", "private"),  # benchmarking
    ("::ffff:127.0.0.1", "ipv4-mapped"),
    ("::ffff:93.184.215.14", "ipv4-mapped"),  # refused whatever it maps
    ("::10.0.0.1", "ipv4-compatible"),
    ("2002:7f00:1::", "6to4 of loopback"),
    ("2002:a9fe:a9fe::", "6to4 of link-local"),
    ("2002:c0a8:101::1", "6to4 of private"),
    ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo of private"),  # client 10.0.0.1
    ("64:ff9b::a00:1", "NAT64 of private"),
    ("64:ff9b::7f00:1", "NAT64 of loopback"),
    ("fec0::1", "site-local"),
]


@pytest.mark.parametrize(("address", "kind"), FORBIDDEN)
async def test_every_forbidden_class_is_refused_by_address(address: str, kind: str) -> None:
    with pytest.raises(Rejected) as refused:
        await resolving(address).check("https://hooks.example.com/t")
    assert refused.value.reason == FORBIDDEN_WEBHOOK_ADDRESS
    assert refused.value.kind is Kind.INVALID_ARGUMENT
    assert refused.value.details["class"] == kind


@pytest.mark.parametrize(("address", "kind"), [a for a in FORBIDDEN if "%" not in a[0]])
async def test_a_literal_forbidden_address_in_the_url_is_refused_too(
    address: str, kind: str
) -> None:
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(Rejected) as refused:
        await resolving(PUBLIC_V4).check(f"https://{host}/t")
    assert refused.value.reason == FORBIDDEN_WEBHOOK_ADDRESS
    assert refused.value.details["class"] == kind


async def test_one_private_address_among_public_ones_refuses_the_host() -> None:
    with pytest.raises(Rejected) as refused:
        await resolving(PUBLIC_V4, PUBLIC_V6, "10.0.0.7").check("https://hooks.example.com/")
    assert refused.value.reason == FORBIDDEN_WEBHOOK_ADDRESS
    assert refused.value.details["address"] == "10.0.0.7"


async def test_a_public_host_is_pinned_to_the_address_that_was_checked() -> None:
    asked: list[str] = []
    pinned = await resolving(PUBLIC_V6, PUBLIC_V4, asked=asked).check(
        "https://Hooks.Example.com:8443/services/T0/B0?x=1"
    )
    assert asked == ["hooks.example.com:8443"]
    assert pinned.address == PUBLIC_V6
    assert pinned.webhook.host == "hooks.example.com"
    assert pinned.webhook.port == 8443
    assert pinned.webhook.target == "/services/T0/B0?x=1"
    assert pinned.webhook.tls


def test_public_addresses_are_of_no_forbidden_class() -> None:
    import ipaddress

    for public in (PUBLIC_V4, PUBLIC_V6, "8.8.8.8", "2002:5db8:d70e::1", "100.128.0.1"):
        assert forbidden_class(ipaddress.ip_address(public)) is None, public


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/t",  # not https
        "ftp://hooks.example.com/t",
        "https:///t",  # no host
        "hooks.example.com/t",
        "https://user:pw@hooks.example.com/t",  # credentials
        "https://hooks.example.com:99999/t",  # no such port
        "https://hooks.example.com/a b",
        "https://" + "a" * 64 + ".example.com/",  # a label too long
        "https://hooks.example.com/" + "x" * 2100,
        "http://127.0.0.1:8000/t",  # loopback is not allowed unless switched on
    ],
)
async def test_what_is_not_an_https_url_is_invalid(url: str) -> None:
    with pytest.raises(Rejected) as refused:
        await resolving(PUBLIC_V4).check(url)
    assert refused.value.reason == INVALID_WEBHOOK_URL
    assert refused.value.kind is Kind.INVALID_ARGUMENT


async def test_a_host_that_does_not_resolve_is_invalid() -> None:
    async def nothing(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    with pytest.raises(Rejected) as refused:
        await WebhookGuard(resolve=nothing).check("https://nowhere.example/")
    assert refused.value.reason == INVALID_WEBHOOK_URL


async def test_allow_loopback_lets_http_on_127_0_0_1_through_and_nothing_else() -> None:
    async def never(host: str, port: int) -> list[str]:
        raise AssertionError("a literal address is not resolved")

    guard = WebhookGuard(allow_loopback=True, resolve=never)
    pinned = await guard.check("http://127.0.0.1:8123/hook")
    assert (pinned.address, pinned.webhook.port, pinned.webhook.tls) == ("127.0.0.1", 8123, False)
    for still_refused in ("http://127.0.0.2:8123/", "http://[::1]:8123/", "http://10.0.0.1/"):
        with pytest.raises(Rejected):
            await guard.check(still_refused)
    with pytest.raises(Rejected) as refused:  # a name resolving to loopback: still forbidden
        await WebhookGuard(allow_loopback=True, resolve=resolving("127.0.0.1").resolve).check(
            "https://localhost.example/"
        )
    assert refused.value.reason == FORBIDDEN_WEBHOOK_ADDRESS
    with pytest.raises(Rejected) as refused:
        await WebhookGuard(allow_loopback=True).check("http://hooks.example.com/")
    assert refused.value.reason == INVALID_WEBHOOK_URL


def test_the_url_s_parts() -> None:
    parsed = parse_webhook_url("https://discord.com/api/webhooks/1/abc")
    assert (parsed.host, parsed.port, parsed.target) == ("discord.com", 443, "/api/webhooks/1/abc")
    assert parse_webhook_url("https://bücher.example/").host == "xn--bcher-kva.example"
