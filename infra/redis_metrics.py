"""How long Redis takes to answer, and how often it fails, by command: every command and
pipeline of the asyncio clients (one server or a cluster) in this process, once `instrument()`
has run.

The clients' own methods are wrapped, as OpenTelemetry's Redis instrumentation does, so every
client is measured however it was made. A pipeline counts as one call, `PIPELINE`. A blocking
read (XREAD BLOCK) is timed too: it waits for news by design, so dashboards leave XREAD out
of latencies.

Besides, what the event store (infra/eventstore.py) knows of the masters it writes to when
appends must be confirmed by replicas: how many masters it last found without the replicas
wanted, and the writes it accepted anyway or refused for that (`SHIKOKU_REDIS_NO_REPLICA`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any

from prometheus_client import Counter, Gauge, Histogram
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline

from infra.metrics import LATENCY_BUCKETS

REDIS_SECONDS = Histogram(
    "shikoku_redis_command_seconds",
    "How long Redis took to answer, by command (a pipeline is one PIPELINE)",
    ["command"],
    buckets=LATENCY_BUCKETS,
)
REDIS_ERRORS = Counter(
    "shikoku_redis_errors",
    "Redis commands that failed, by command and error (ConnectionError, TimeoutError, ...)",
    ["command", "error"],
)
SHARDS_WITHOUT_REPLICA = Gauge(
    "shikoku_redis_shards_without_replica",
    "Redis masters (shards) this process last found, within 5 s, with fewer good replicas "
    "than SHIKOKU_REDIS_WAIT_REPLICAS asks an append to reach (0 when no replica is asked for)",
)
WRITES_WITHOUT_REPLICA = Counter(
    "shikoku_redis_writes_without_replica",
    "Event appends to a master with fewer good replicas than wanted: degraded (acknowledged "
    "on the master's write and the replicas it has) or refused (NO_REPLICA)",
    ["outcome"],
)
for _outcome in ("degraded", "refused"):
    WRITES_WITHOUT_REPLICA.labels(_outcome)

Method = Callable[..., Awaitable[Any]]
_WRAPPED = "_shikoku_timed"


def _name(args: tuple[Any, ...]) -> str:
    if not args:
        return ""
    first = args[0]
    name = first.decode() if isinstance(first, bytes) else str(first)
    return name.partition(" ")[0].upper()  # "CLUSTER SLOTS" comes as one argument


def _timed(method: Method, command: Callable[[tuple[Any, ...]], str]) -> Method:
    seconds: dict[str, Histogram] = {}

    @functools.wraps(method)
    async def timed(*args: Any, **options: Any) -> Any:
        name = command(args[1:])  # args[0] is the client
        start = time.perf_counter()
        try:
            return await method(*args, **options)
        except Exception as error:
            REDIS_ERRORS.labels(name, type(error).__name__).inc()
            raise
        finally:
            histogram = seconds.get(name)
            if histogram is None:
                histogram = seconds[name] = REDIS_SECONDS.labels(name)
            histogram.observe(time.perf_counter() - start)

    setattr(timed, _WRAPPED, True)
    return timed


def instrument() -> None:
    """Times every Redis command and pipeline of this process from now on (once)."""
    targets: list[tuple[type, str, Callable[[tuple[Any, ...]], str]]] = [
        (Redis, "execute_command", _name),
        (RedisCluster, "execute_command", _name),
        (Pipeline, "execute", lambda _args: "PIPELINE"),
        (ClusterPipeline, "execute", lambda _args: "PIPELINE"),
    ]
    for cls, attribute, command in targets:
        method = cls.__dict__[attribute]
        if not getattr(method, _WRAPPED, False):
            setattr(cls, attribute, _timed(method, command))
