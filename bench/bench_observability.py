"""Benchmark: what observing a call costs (metrics, the access log, tracing), in CPU per call.

One process serves a trivial unary method on grpc.aio servers over loopback and calls it from
grpc.aio clients, one call after another: with no interceptor at all, then with the one call
chain every service has (infra.call_chain: the request decoder and failures as statuses) and,
setting by setting, what observing adds: the call metrics; the access log, JSON into a pipe
that another process reads (as a container runtime or `shikoku run` reads a service's stderr),
written a line at a time or in batches by infra.log_writer (what the services do); two
admissions that let every call through (the gateway's rate limit and access check are two);
tracing (the SDK's spans, the client's and the server's interceptors, exported to nowhere).
The settings take turns, RUNS rounds of CALLS calls each, and the least CPU a setting took in
a round is printed (on a shared machine the others' load only ever adds): CPU microseconds per
call, client and server together (both are this process), and what each adds to the one before
it. A command costs about twice what a call adds (a call to the gateway and one to the rules
service), plus the Redis timing.

  SHIKOKU_OBSERVE_CALLS  calls per round, default 2000
  SHIKOKU_OBSERVE_RUNS   rounds, default 7
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc
from google.protobuf import empty_pb2

from infra.access_log import AccessLog
from infra.call_chain import Admission, CallChain
from infra.calls import Observer
from infra.log_writer import BatchingHandler
from infra.logs import JsonFormatter
from infra.metrics import CallMetrics
from shikoku_dev.redis_server import free_port

CALLS = int(os.environ.get("SHIKOKU_OBSERVE_CALLS", "2000"))
RUNS = int(os.environ.get("SHIKOKU_OBSERVE_RUNS", "7"))
METHOD = "/bench.Echo/Ping"


async def ping(request: empty_pb2.Empty, context: Any) -> empty_pb2.Empty:
    return request


def handler() -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(
        "bench.Echo",
        {
            "Ping": grpc.unary_unary_rpc_method_handler(
                ping,
                request_deserializer=empty_pb2.Empty.FromString,
                response_serializer=empty_pb2.Empty.SerializeToString,
            )
        },
    )


@dataclass
class Setting:
    label: str
    served: tuple[grpc.aio.Server, Any]  # the server (kept: a server let go of stops) and its call
    best: float = float("inf")


class LetThrough(Admission):
    async def admit(self, method: str, request: Any, context: Any) -> None:
        return None


async def started(
    interceptors: Sequence[Any], client_interceptors: Sequence[Any] = ()
) -> tuple[grpc.aio.Server, Any]:
    """A server with `interceptors`, and a client's callable of it."""
    server = grpc.aio.server(interceptors=list(interceptors))
    server.add_generic_rpc_handlers((handler(),))
    address = f"127.0.0.1:{free_port()}"
    server.add_insecure_port(address)
    await server.start()
    channel = grpc.aio.insecure_channel(address, interceptors=list(client_interceptors))
    call = channel.unary_unary(
        METHOD,
        request_serializer=empty_pb2.Empty.SerializeToString,
        response_deserializer=empty_pb2.Empty.FromString,
    )
    for _ in range(200):  # warm up
        await call(empty_pb2.Empty())
    return server, call


def piped_access_log(name: str, batched: bool) -> AccessLog:
    """An access log whose lines go into a pipe that `cat` (another process) empties."""
    reader = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert reader.stdin is not None
    handler: logging.Handler = (
        BatchingHandler(reader.stdin) if batched else logging.StreamHandler(reader.stdin)
    )
    handler.setFormatter(JsonFormatter("bench"))
    logger = logging.getLogger(f"bench.{name}")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    return AccessLog(logger)


def tracing_layers() -> tuple[list[Any], list[Any], Observer]:
    """The server and client interceptors of tracing and its span observer, with the SDK
    exporting to nowhere (the export itself is the batch processor's thread's work)."""
    from opentelemetry import trace
    from opentelemetry.instrumentation.grpc import aio_client_interceptors, aio_server_interceptor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    from infra.tracing import SpanOutcome

    class Nowhere(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Nowhere()))
    trace.set_tracer_provider(provider)
    server = aio_server_interceptor()  # type: ignore[no-untyped-call]
    return [server], aio_client_interceptors(), SpanOutcome()  # type: ignore[no-untyped-call]


async def main() -> None:
    server_tracing, client_tracing, span = tracing_layers()
    batched = piped_access_log("batched", batched=True)
    admissions = [LetThrough(), LetThrough()]
    settings = [
        Setting("no interceptor", await started([])),
        Setting("the chain (decoder, failures as statuses)", await started([CallChain()])),
        Setting("+ call metrics", await started([CallChain([CallMetrics()])])),
        Setting(
            "+ access log, a write per line",
            await started([CallChain([CallMetrics(), piped_access_log("lines", False)])]),
        ),
        Setting(
            "+ access log, batched (as served)",
            await started([CallChain([CallMetrics(), batched])]),
        ),
        Setting(
            "+ two admissions (as the gateway's)",
            await started([CallChain([CallMetrics(), batched], admissions)]),
        ),
        Setting(
            "+ tracing (client and server spans)",
            await started(
                [*server_tracing, CallChain([CallMetrics(), batched, span], admissions)],
                client_tracing,
            ),
        ),
    ]
    for _ in range(RUNS):
        for setting in settings:
            start = time.process_time()
            call = setting.served[1]
            for _ in range(CALLS):
                await call(empty_pb2.Empty())
            setting.best = min(setting.best, (time.process_time() - start) / CALLS * 1e6)
    print(f"{CALLS} calls a round, least of {RUNS} rounds; CPU µs per call (client + server)")
    _none, bare, metrics, lines, served, _admitted, traced = (s.best for s in settings)
    before = {1: _none, 2: bare, 3: metrics, 4: metrics, 5: served, 6: _admitted}
    for n, setting in enumerate(settings):
        added = setting.best - before.get(n, setting.best)
        print(f"  {setting.label:<38} {setting.best:8.1f}   {added:+7.1f}")
    print(
        f"  observing as served, tracing off: {served - bare:+.1f} µs per call "
        f"(a write per line would be {lines - bare:+.1f}); tracing on: {traced - bare:+.1f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
