"""The settings every process shares, declared once and composed into each process's own
(`services/*/shell/settings.py`, `gateway/settings.py`, `gateway/web/settings.py`): where the
services are, Redis, the deployment's token, logs, metrics and traces."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

from infra.deployment_token import SETTING as TOKEN_SETTING
from infra.eventstore import NO_REPLICA_POLICIES, NoReplicaPolicy, Replication
from infra.logs import FORMAT_SETTING, LEVEL_SETTING
from infra.metrics import METRICS_SETTING
from infra.settings import (
    HOST_PORT,
    SWITCH,
    Kind,
    block,
    choice,
    from_environment,
    setting,
    text,
    whole,
)

#: One `host:port`, several `ip:port` separated by commas, or a DNS name whose records list
#: every replica (`dns:///rules.shikoku:50053`).
SERVICE = text("host:port, ip:port,ip:port,... or dns:///name:port")
REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster")


def _redis_url(raw: str) -> str:
    if urlsplit(raw).scheme not in REDIS_SCHEMES:
        raise ValueError(raw)
    return raw


REDIS_URL = Kind(
    "a redis://, rediss://, unix://, redis+cluster:// or rediss+cluster:// URL", _redis_url
)


@dataclass(frozen=True, slots=True)
class Addresses:
    """Where each service is reached (every replica of it: calls are balanced over them)."""

    gateway: str = setting(
        "SHIKOKU_GATEWAY_ADDR", "127.0.0.1:50051", SERVICE, "the gateway's replicas"
    )
    lobby: str = setting("SHIKOKU_LOBBY_ADDR", "127.0.0.1:50052", SERVICE, "the lobby's replicas")
    rules: str = setting("SHIKOKU_RULES_ADDR", "127.0.0.1:50053", SERVICE, "the rules' replicas")
    routes: str = setting(
        "SHIKOKU_ROUTES_ADDR", "127.0.0.1:50054", SERVICE, "the routes service's replicas"
    )
    web: str = setting(
        "SHIKOKU_WEB_ADDR", "127.0.0.1:8080", HOST_PORT, "where the web entrypoint listens"
    )

    @classmethod
    def from_env(cls) -> Addresses:
        """For commands (`shikoku`, the supervisor): the addresses this environment sets (a
        bad one stops the command, as it would a process)."""
        return from_environment(cls, "shikoku")


@dataclass(frozen=True, slots=True)
class Tracing:
    """The OpenTelemetry variables that decide whether and how this process exports spans
    (infra.tracing); the SDK reads its other `OTEL_*` settings itself."""

    endpoint: str = setting(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "",
        text("a URL"),
        "where spans are sent by OTLP, e.g. `http://collector:4318`",
        shown="unset: no tracing",
    )
    traces_endpoint: str = setting(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "",
        text("a URL"),
        "the same, for traces alone",
        shown="unset",
    )
    protocol: str = setting(
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "http/protobuf",
        choice("http/protobuf", "grpc"),
        "the OTLP protocol: `grpc` is port 4317",
    )
    traces_protocol: str = setting(
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "",
        choice("http/protobuf", "grpc"),
        "the same, for traces alone",
        shown="`OTEL_EXPORTER_OTLP_PROTOCOL`'s",
    )
    disabled: bool = setting(
        "OTEL_SDK_DISABLED", False, SWITCH, "`true` turns tracing off even with an endpoint"
    )
    service_name: str = setting(
        "OTEL_SERVICE_NAME",
        "",
        text("a name"),
        "the spans' `service.name`",
        shown="`shikoku-<process>`",
    )

    @property
    def wanted(self) -> bool:
        return not self.disabled and bool(self.endpoint or self.traces_endpoint)

    @property
    def chosen_protocol(self) -> str:
        return self.traces_protocol or self.protocol


@dataclass(frozen=True, slots=True)
class Observability:
    """What an operator sees of the process: logs, metrics, traces (infra.observability)."""

    log_format: str = setting(
        FORMAT_SETTING,
        "",
        choice("json", "text"),
        "`json`: one JSON object a line; `text`: for people",
        shown="`text` when stderr is a terminal, else `json`",
    )
    log_level: str = setting(
        LEVEL_SETTING,
        "INFO",
        choice("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
        "the least level logged; the access lines are INFO",
    )
    access_log: bool = setting(
        "SHIKOKU_ACCESS_LOG",
        True,
        SWITCH,
        "`0` leaves the access lines out (the metrics still count every call)",
    )
    metrics: str = setting(
        METRICS_SETTING,
        "",
        HOST_PORT,
        "where the process serves `GET /metrics` (a thread of its own)",
        shown="unset: no metrics server",
    )
    tracing: Tracing = block(Tracing)


@dataclass(frozen=True, slots=True)
class RedisSettings:
    url: str = setting(
        "REDIS_URL",
        "redis://127.0.0.1:6379/0",
        REDIS_URL,
        "one Redis server, or a Redis Cluster by any of its nodes (see Redis Cluster and replicas)",
    )


@dataclass(frozen=True, slots=True)
class ReplicationSettings:
    """What an append of events waits for, in the processes that write them."""

    wait_replicas: int = setting(
        "SHIKOKU_REDIS_WAIT_REPLICAS",
        0,
        whole(least=0),
        "replicas that must confirm an append of events before it is acknowledged",
    )
    wait_ms: int = setting(
        "SHIKOKU_REDIS_WAIT_MS",
        1000,
        whole(least=0),
        "how long an append waits for those replicas, in milliseconds",
    )
    no_replica: str = setting(
        "SHIKOKU_REDIS_NO_REPLICA",
        "degrade",
        choice(*NO_REPLICA_POLICIES),
        "what a shard with fewer good replicas than that does with an append",
    )

    @property
    def policy(self) -> Replication:
        policy = cast(NoReplicaPolicy, self.no_replica)
        return Replication(self.wait_replicas, self.wait_ms, policy)


@dataclass(frozen=True, slots=True)
class ProcessSettings:
    """What every process has: where the services are, the deployment's token, and what it
    shows of itself."""

    addresses: Addresses = block(Addresses)
    token: str = setting(
        TOKEN_SETTING,
        "",
        text("a secret"),
        "the secret every process of the deployment shares: the internal services serve only "
        "callers that send it",
        shown="unset: rules, lobby and routes refuse to start",
    )
    observability: Observability = block(Observability)

    def token_problems(self) -> list[str]:
        """For a process that cannot run without the token."""
        if self.token:
            return []
        return [
            f"{TOKEN_SETTING}: not set (the secret every process of this deployment "
            "shares; shikoku run makes one)"
        ]


@dataclass(frozen=True, slots=True)
class Listening:
    """Where a replica of a gRPC service listens."""

    own: str = setting(
        "SHIKOKU_<NAME>_LISTEN_ADDR",
        "",
        HOST_PORT,
        "where this replica listens, when `SHIKOKU_<NAME>_ADDR` names several",
        shown="its `SHIKOKU_<NAME>_ADDR`",
    )

    def address(self, process: str, addresses: Addresses) -> str:
        """`own`, else the one address the service's setting names."""
        if self.own:
            return self.own
        named = getattr(addresses, process)
        assert isinstance(named, str)
        return named

    def ambiguity(self, process: str, addresses: Addresses) -> list[str]:
        """Why the replica cannot tell where to listen (empty when it can)."""
        named = getattr(addresses, process)
        if self.own or ("," not in named and not named.startswith("dns:")):
            return []
        upper = process.upper()
        return [
            f"SHIKOKU_{upper}_ADDR names several replicas ({named}); "
            f"set SHIKOKU_{upper}_LISTEN_ADDR to this replica's own address"
        ]
