"""What an operator sees of a process: its logs, metrics and traces, set up once at its start.

Each process's `main` calls `observe_process(NAME, settings)` first thing (before it makes its
Redis client and its channels, so that tracing sees them); `infra.grpc_server.serve` calls it
too, so a gRPC process gets all of it even if it forgets, and puts `call_observers()` on every
call.
"""

from __future__ import annotations

from infra import redis_metrics, tracing
from infra.access_log import AccessLog
from infra.calls import Observer
from infra.logs import configure_logging
from infra.metrics import CallMetrics, serve_metrics
from infra.process_settings import Observability

_observed: str | None = None
#: Whether calls get an access line: the process's setting, once observed.
_access_log = Observability().access_log


def observe_process(process: str, settings: Observability) -> None:
    """JSON or text logs on stderr, /metrics on the process's metrics address (when set),
    Redis timed, and traces exported (when configured). Once per process."""
    global _observed, _access_log
    if _observed is not None:
        return
    _observed = process
    _access_log = settings.access_log
    configure_logging(process, settings.log_format, settings.log_level)
    # Timing first: tracing wraps the clients' methods the way they are then (wrapt binds to the
    # client), where a plain wrapper over its wrapper would hand it the client as the command.
    redis_metrics.instrument()
    tracing.configure_tracing(process, settings.tracing)
    serve_metrics(process, settings.metrics)


def call_observers() -> list[Observer]:
    """Who sees every call served: its metrics, its access line, its span."""
    observers: list[Observer] = [CallMetrics()]
    if _access_log:
        observers.append(AccessLog())
    if tracing.enabled():
        observers.append(tracing.SpanOutcome())
    return observers
