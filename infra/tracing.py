"""Traces, with OpenTelemetry: a span for every gRPC call served and made (gateway, lobby,
rules, routes) and for every Redis command, carried from process to process in the calls'
metadata (W3C `traceparent`), exported by OTLP.

On when the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
is set, unless `OTEL_SDK_DISABLED=true`; the protocol is `OTEL_EXPORTER_OTLP_PROTOCOL`'s,
`http/protobuf` (the default, port 4318) or `grpc` (port 4317); every other `OTEL_*` setting
(sampler, batch delays, headers, resource attributes) is the SDK's own. A process's
`service.name` is `shikoku-<process>` unless `OTEL_SERVICE_NAME` says otherwise. Off, nothing
of the SDK is imported, no interceptor is added and nothing is patched: the cost is the check.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from infra import logs
from infra.calls import OK, Call

if TYPE_CHECKING:
    from infra.process_settings import Tracing

REASON_ATTRIBUTE = "shikoku.reason"

_on = False


def enabled() -> bool:
    return _on


def _exporter(protocol: str) -> Any:
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
        OTLPSpanExporter as HttpSpanExporter,
    )

    return HttpSpanExporter()


def configure_tracing(process: str, settings: Tracing) -> bool:
    """Starts tracing this process when `settings` want it (once); whether it is on."""
    global _on
    if _on or not settings.wanted:
        return _on
    from opentelemetry import trace
    from opentelemetry.instrumentation.grpc import GrpcAioInstrumentorClient
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # The SDK reads OTEL_SERVICE_NAME itself; without it, the process's own name.
    attributes = {} if settings.service_name else {SERVICE_NAME: f"shikoku-{process}"}
    provider = TracerProvider(resource=Resource.create(attributes))  # flushes at exit
    provider.add_span_processor(BatchSpanProcessor(_exporter(settings.chosen_protocol)))
    trace.set_tracer_provider(provider)
    # Every Redis command, and every call on a channel made from now on (service_channel's).
    RedisInstrumentor().instrument(tracer_provider=provider)
    GrpcAioInstrumentorClient().instrument(tracer_provider=provider)  # type: ignore[no-untyped-call]
    logs.use_trace_ids(_current_ids)
    _on = True
    return True


def _current_ids() -> tuple[str, str] | None:
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return trace.format_trace_id(context.trace_id), trace.format_span_id(context.span_id)


def server_interceptors() -> list[Any]:
    """The interceptor that makes each call's server span (and takes the caller's trace from
    its metadata), when tracing is on."""
    if not _on:
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor
    from opentelemetry.instrumentation.grpc.filters import health_check, negate

    # Health watches last as long as their caller's channel: a span each would say nothing.
    return [aio_server_interceptor(filter_=negate(health_check()))]  # type: ignore[no-untyped-call]


@contextlib.contextmanager
def server_span(name: str, headers: Mapping[str, str]) -> Iterator[None]:
    """A server span for a call that came by HTTP (the web entrypoint), in the trace its
    `traceparent` header names, if any; nothing when tracing is off."""
    if not _on:
        yield
        return
    from opentelemetry import propagate, trace

    tracer = trace.get_tracer("shikoku.web")
    parent = propagate.extract(headers)
    with tracer.start_as_current_span(name, context=parent, kind=trace.SpanKind.SERVER):
        yield


class SpanOutcome:
    """Writes how the call ended on its server span: the status code, our reason, and an error
    status for what is the server's fault or a refusal."""

    def started(self, call: Call) -> None:
        pass

    def ended(self, call: Call) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import Status, StatusCode

        span = trace.get_current_span()
        if not span.is_recording():
            return
        span.set_attribute("rpc.status", call.code)
        if call.reason:
            span.set_attribute(REASON_ATTRIBUTE, call.reason)
        if call.code != OK:
            span.set_status(Status(StatusCode.ERROR, f"{call.code} {call.reason}".strip()))
