"""Prometheus metrics: the HTTP endpoint every process serves them on, the call metrics every
server records, and the gauges of bounded caches.

A process serves `/metrics` on `SHIKOKU_<NAME>_METRICS_ADDR` (`host:port`; off when unset).
Metrics are prometheus-client's, in its default registry (which also carries the process's
CPU, memory and file descriptors, and Python's garbage collector). Counting is done on the
call's path and costs a dict lookup and a lock; gauges of sizes are read only when scraped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from prometheus_client import (
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    start_http_server,
)

from infra.calls import Call

log = logging.getLogger(__name__)

# A `_created` series beside every counter and histogram doubles what is stored for nothing
# Prometheus uses.
disable_created_metrics()  # type: ignore[no-untyped-call]

#: Seconds: from well under a millisecond (a cached read) to the 10 s every call is bounded by.
LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip

CALLS = Counter(
    "shikoku_rpc_calls",
    "Calls served, by service, method, status code and our reason code (empty when none)",
    ["service", "method", "code", "reason"],
)
CALL_SECONDS = Histogram(
    "shikoku_rpc_call_seconds",
    "How long unary calls took to answer, by service and method",
    ["service", "method"],
    buckets=LATENCY_BUCKETS,
)
STREAMS_OPEN = Gauge(
    "shikoku_rpc_streams_open",
    "Streaming calls open now (game event streams, watches, health watches)",
    ["service", "method"],
)
CACHE_ENTRIES = Gauge("shikoku_cache_entries", "Entries held by an in-process cache", ["cache"])
CACHE_CAPACITY = Gauge("shikoku_cache_capacity", "Most entries a cache holds", ["cache"])


#: The variable naming a process's metrics address (`<NAME>`: the process's, infra.settings).
METRICS_SETTING = "SHIKOKU_<NAME>_METRICS_ADDR"


def metrics_setting(process: str) -> str:
    return METRICS_SETTING.replace("<NAME>", process.upper())


def serve_metrics(process: str, address: str) -> str | None:
    """Serves /metrics on `address` (the process's metrics address), in a thread of its own;
    the address it listens on, or None when none is set."""
    if not address:
        return None
    host, _, port = address.rpartition(":")
    try:
        server, _thread = start_http_server(int(port), addr=host.strip("[]") or "0.0.0.0")
    except (OSError, ValueError) as error:
        raise SystemExit(f"{process}: cannot serve metrics on {address}: {error}") from None
    bound = f"{host}:{server.server_port}"
    log.info("metrics on http://%s/metrics", bound)
    return bound


def watch_cache(name: str, size: Callable[[], int], capacity: int | None = None) -> None:
    """Reports `size()` as the cache's entries whenever metrics are scraped."""
    CACHE_ENTRIES.labels(name).set_function(size)
    if capacity is not None:
        CACHE_CAPACITY.labels(name).set(capacity)


class CallMetrics:
    """Counts every call by outcome, times unary ones, and counts the streams open."""

    def __init__(self) -> None:
        # Labelled children, looked up once: labels() takes a lock and builds a key each time.
        self._seconds: dict[str, Histogram] = {}
        self._streams: dict[str, Gauge] = {}
        self._calls: dict[tuple[str, str, str], Counter] = {}

    def started(self, call: Call) -> None:
        if call.streaming:
            self._open(call).inc()

    def ended(self, call: Call) -> None:
        key = (call.method, call.code, call.reason)
        counter = self._calls.get(key)
        if counter is None:
            counter = self._calls[key] = CALLS.labels(
                call.service, call.name, call.code, call.reason
            )
        counter.inc()
        if call.streaming:
            self._open(call).dec()
            return
        histogram = self._seconds.get(call.method)
        if histogram is None:
            histogram = self._seconds[call.method] = CALL_SECONDS.labels(call.service, call.name)
        histogram.observe(call.seconds)

    def _open(self, call: Call) -> Gauge:
        gauge = self._streams.get(call.method)
        if gauge is None:
            gauge = self._streams[call.method] = STREAMS_OPEN.labels(call.service, call.name)
        return gauge
