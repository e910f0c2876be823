"""The web entrypoint's settings, read once at its start (infra.settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gateway.web.connections import (
    DEFAULT_BODY_TIMEOUT_SECONDS,
    DEFAULT_HEADER_TIMEOUT_SECONDS,
    DEFAULT_KEEP_ALIVE_SECONDS,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
    DEFAULT_MAX_REQUESTS_IN_FLIGHT,
    ConnectionLimits,
)
from gateway.web.cors import DEFAULT_ORIGINS, allowed_origins
from infra.process_settings import ProcessSettings
from infra.settings import LIST, block, seconds, setting, whole


@dataclass(frozen=True, slots=True)
class WebSettings:
    NAME: ClassVar[str] = "web"

    process: ProcessSettings = block(ProcessSettings)
    origins: tuple[str, ...] = setting(
        "SHIKOKU_WEB_ORIGINS",
        DEFAULT_ORIGINS,
        LIST,
        "the web origins whose pages may call the API (`https://play.example`); `*`: any",
    )
    header_timeout: float = setting(
        "SHIKOKU_WEB_HEADER_TIMEOUT_SECONDS",
        DEFAULT_HEADER_TIMEOUT_SECONDS,
        seconds(),
        "a request's line and headers must all come within this of its first byte",
    )
    body_timeout: float = setting(
        "SHIKOKU_WEB_BODY_TIMEOUT_SECONDS",
        DEFAULT_BODY_TIMEOUT_SECONDS,
        seconds(),
        "a request's body must all come within this of its headers",
    )
    keep_alive: int = setting(
        "SHIKOKU_WEB_KEEP_ALIVE_SECONDS",
        DEFAULT_KEEP_ALIVE_SECONDS,
        whole(least=1),
        "how long a connection is kept open between requests (whole seconds)",
    )
    per_address: int = setting(
        "SHIKOKU_WEB_MAX_CONNECTIONS_PER_ADDRESS",
        DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
        whole(least=0),
        "connections open at once from one client address, and requests it has in flight "
        "(HTTP/2 streams each count; one more is answered 429 ADDRESS_BUSY); `0`: no cap",
    )
    connections: int = setting(
        "SHIKOKU_WEB_MAX_CONNECTIONS",
        DEFAULT_MAX_CONNECTIONS,
        whole(least=0),
        "connections open at once in the process (never more than the open-files limit "
        "allows, less 100); `0`: that limit's",
    )
    in_flight: int = setting(
        "SHIKOKU_WEB_MAX_REQUESTS_IN_FLIGHT",
        DEFAULT_MAX_REQUESTS_IN_FLIGHT,
        whole(least=0),
        "requests being served at once, streams included; one more is answered 503 "
        "SERVER_BUSY; `0`: no cap",
    )

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        return allowed_origins(self.origins)

    @property
    def connection_limits(self) -> ConnectionLimits:
        return ConnectionLimits(
            self.header_timeout,
            self.body_timeout,
            self.keep_alive,
            self.per_address,
            self.connections,
            self.in_flight,
        )
