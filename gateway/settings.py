"""The gateway process's settings, read once at its start (infra.settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gateway import auth
from gateway.rate_limit import DEFAULT_BURST, DEFAULT_PER_SECOND, Limits
from gateway.stream_quota import DEFAULT_STREAMS_PER_CALLER
from infra.process_settings import Listening, ProcessSettings, RedisSettings
from infra.settings import LIST, block, number, seconds, setting, whole

#: At least the web entrypoint's SHIKOKU_WEB_MAX_REQUESTS_IN_FLIGHT: its calls share one
#: connection to each gateway process.
DEFAULT_MAX_CONCURRENT_STREAMS = 4_000


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    NAME: ClassVar[str] = "gateway"

    process: ProcessSettings = block(ProcessSettings)
    listening: Listening = block(Listening)
    redis: RedisSettings = block(RedisSettings)
    rate_per_second: float = setting(
        "SHIKOKU_RATE_PER_SECOND",
        DEFAULT_PER_SECOND,
        number(least=0),
        "tokens added to each rate-limit bucket a second; `0` turns the limits off",
    )
    rate_burst: int = setting(
        "SHIKOKU_RATE_BURST",
        DEFAULT_BURST,
        whole(least=0),
        "most tokens a bucket holds: calls a caller may make at once (at least 1 with limits on)",
    )
    trusted_proxies: tuple[str, ...] = setting(
        "SHIKOKU_TRUSTED_PROXIES",
        (),
        LIST,
        "hosts (IP addresses) whose X-Forwarded-For names the caller, besides the web bridge",
        shown="none",
    )
    streams_per_caller: int = setting(
        "SHIKOKU_STREAMS_PER_CALLER",
        DEFAULT_STREAMS_PER_CALLER,
        whole(least=0),
        "game streams one caller may hold open at once on one gateway process; `0`: no cap",
    )
    grant_seconds: float = setting(
        "SHIKOKU_GRANT_SECONDS",
        auth.GRANT_SECONDS,
        seconds(above_zero=False),
        "how long a gateway remembers what the lobby granted a credential while it does not "
        "follow the lobby's announcements of changed tables (Redis lost); `0`: not at all",
    )
    grant_followed_seconds: float = setting(
        "SHIKOKU_GRANT_FOLLOWED_SECONDS",
        auth.GRANT_FOLLOWED_SECONDS,
        seconds(above_zero=False),
        "how long a gateway remembers a grant while it follows the lobby's announcements (each "
        "change of a table or revocation forgets the grants on it at once): the backstop for "
        "an announcement missed",
    )
    grants_kept: int = setting(
        "SHIKOKU_GRANTS_KEPT",
        auth.GRANTS_KEPT,
        whole(least=1),
        "most credentials whose grants a gateway remembers",
    )
    unknown_seconds: float = setting(
        "SHIKOKU_UNKNOWN_CREDENTIAL_SECONDS",
        auth.UNKNOWN_SECONDS,
        seconds(above_zero=False),
        "how long a gateway answers a credential the lobby refused as UNAUTHENTICATED itself; "
        "`0` turns the negative cache off",
    )
    unknown_kept: int = setting(
        "SHIKOKU_UNKNOWN_CREDENTIALS_KEPT",
        auth.UNKNOWN_KEPT,
        whole(least=0),
        "most such credentials a gateway remembers (SHA-256 digests; the least recently used "
        "go first)",
    )
    max_connection_idle_seconds: float = setting(
        "SHIKOKU_GATEWAY_MAX_CONNECTION_IDLE_SECONDS",
        120.0,
        seconds(),
        "a connection without a call this long is sent away (GOAWAY)",
    )
    handshake_timeout_seconds: float = setting(
        "SHIKOKU_GATEWAY_HANDSHAKE_TIMEOUT_SECONDS",
        10.0,
        seconds(),
        "a connection that has not sent the HTTP/2 preface within this is closed",
    )
    max_concurrent_streams: int = setting(
        "SHIKOKU_GATEWAY_MAX_CONCURRENT_STREAMS",
        DEFAULT_MAX_CONCURRENT_STREAMS,
        whole(least=1),
        "calls at once on one connection; more wait in the client",
    )
    keepalive_min_ping_seconds: float = setting(
        "SHIKOKU_GATEWAY_KEEPALIVE_MIN_PING_SECONDS",
        10.0,
        seconds(),
        "clients may send keep-alive pings this often; one pinging more often is sent away",
    )

    @property
    def limits(self) -> Limits:
        """The rate limits, trusting X-Forwarded-For from the named proxies and from callers
        with the deployment's token (the web bridge)."""
        return Limits(
            self.rate_per_second,
            self.rate_burst,
            frozenset(self.trusted_proxies),
            self.process.token,
        )

    @property
    def listen_address(self) -> str:
        return self.listening.address(self.NAME, self.process.addresses)

    def problems(self) -> list[str]:
        problems = self.listening.ambiguity(self.NAME, self.process.addresses)
        if self.rate_per_second > 0 and self.rate_burst < 1:
            problems.append(
                f"SHIKOKU_RATE_BURST: expected at least 1 while SHIKOKU_RATE_PER_SECOND is "
                f"{self.rate_per_second:g}, got '{self.rate_burst}'"
            )
        return problems
