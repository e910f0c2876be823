"""Traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, one command is one trace across the processes
it touches (the gateway, the lobby checking the seat's credential, the rules service and its
Redis commands), exported by OTLP to a collector, here a small one in the test; and the
access lines of that call carry the trace's id."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from shikoku.v1 import game_pb2
from tests.e2e.api import Client, System, auth, started_table
from tests.e2e.launch import start_system, stop_system
from tests.e2e.observing import access_lines

pytestmark = [pytest.mark.e2e]

SUBMIT = "/shikoku.v1.GameService/SubmitCommand"
AUTHORIZE = "/shikoku.internal.v1.CredentialService/Authorize"
RULES_SUBMIT = "/shikoku.internal.v1.RulesService/Submit"


class Collector:
    """An OTLP/HTTP trace receiver: keeps every span it is sent, with its service's name."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, trace_pb2.Span]] = []
        self._lock = threading.Lock()
        collector = self

        class Receive(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
                collector.received(request)
                answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Receive)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def received(self, request: trace_service_pb2.ExportTraceServiceRequest) -> None:
        with self._lock:
            for resource_spans in request.resource_spans:
                service = next(
                    a.value.string_value
                    for a in resource_spans.resource.attributes
                    if a.key == "service.name"
                )
                for scope_spans in resource_spans.scope_spans:
                    self.spans += [(service, span) for span in scope_spans.spans]

    def of_trace(self, trace_id: bytes) -> list[tuple[str, trace_pb2.Span]]:
        with self._lock:
            return [(service, span) for service, span in self.spans if span.trace_id == trace_id]

    def server_span(self, service: str, name: str) -> trace_pb2.Span | None:
        with self._lock:
            return next(
                (
                    span
                    for who, span in self.spans
                    if who == service and span.name == name and span.kind == span.SPAN_KIND_SERVER
                ),
                None,
            )


@pytest.fixture(scope="module")
def collector() -> Iterator[Collector]:
    collector = Collector()
    yield collector
    collector.server.shutdown()


@pytest.fixture(scope="module")
def traced(redis_url: str, collector: Collector) -> Iterator[System]:
    system = start_system(
        redis_url,
        OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint,
        OTEL_BSP_SCHEDULE_DELAY="100",  # ms: spans reach the collector at once
        SHIKOKU_RATE_PER_SECOND="0",
    )
    yield system
    stop_system(system)


def attributes(span: trace_pb2.Span) -> dict[str, str]:
    return {a.key: a.value.string_value or str(a.value.int_value) for a in span.attributes}


def test_one_command_is_one_trace_through_every_hop(traced: System, collector: Collector) -> None:
    client = Client(traced)
    game_id, tokens, _host = started_table(client)
    state = client.game.GetState(game_pb2.GetStateRequest(game_id=game_id))
    command = game_pb2.Command(buy_private=game_pb2.BuyPrivate(company="TR"))
    request = game_pb2.SubmitCommandRequest(game_id=game_id, command=command)
    # The seat's first command: the gateway asks the lobby whether its credential may act.
    client.game.SubmitCommand(request, metadata=auth(tokens[state.acting_seats[0] - 1]))

    deadline = time.monotonic() + 20
    while (root := collector.server_span("shikoku-gateway", SUBMIT)) is None:
        assert time.monotonic() < deadline, "no span of the gateway's SubmitCommand"
        time.sleep(0.1)

    def hops() -> dict[tuple[str, str], trace_pb2.Span]:
        return {(service, span.name): span for service, span in collector.of_trace(root.trace_id)}

    wanted = {("shikoku-lobby", AUTHORIZE), ("shikoku-rules", RULES_SUBMIT)}
    while not wanted <= set(hops()) or not any(
        service == "shikoku-rules" and "redis" in attributes(span).values()
        for (service, _name), span in hops().items()
    ):
        assert time.monotonic() < deadline, f"hops missing from the trace: {sorted(hops())}"
        time.sleep(0.1)

    spans = collector.of_trace(root.trace_id)
    assert root.parent_span_id == b""  # the client is not traced: the gateway starts it
    ids = {span.span_id for _service, span in spans}
    for service, span in spans:
        assert span is root or span.parent_span_id in ids, (service, span.name)
    services = {service for service, _span in spans}
    assert {"shikoku-gateway", "shikoku-lobby", "shikoku-rules"} <= services
    at_rules = hops()[("shikoku-rules", RULES_SUBMIT)]
    assert attributes(at_rules).get("rpc.status") == "OK"
    redis_at_rules = [
        span.name
        for service, span in spans
        if service == "shikoku-rules" and "redis" in attributes(span).values()
    ]
    assert "EVALSHA" in redis_at_rules  # the append script

    # The access lines of the call carry its trace id (they reach the output within 0.2 s).
    trace_id, wanted_lines = root.trace_id.hex(), {("gateway", SUBMIT), ("rules", RULES_SUBMIT)}
    while not wanted_lines <= (in_trace := lines_of_trace(traced, trace_id)):
        assert time.monotonic() < deadline, f"access lines of the trace: {sorted(in_trace)}"
        time.sleep(0.1)


def lines_of_trace(system: System, trace_id: str) -> set[tuple[str, str]]:
    return {
        (line["process"], line["method"])
        for line in access_lines(list(system.output))
        if line.get("trace_id") == trace_id
    }


def test_a_refusal_is_an_error_span_with_its_reason(traced: System, collector: Collector) -> None:
    client = Client(traced)
    game_id, tokens, _host = started_table(client)
    state = client.game.GetState(game_pb2.GetStateRequest(game_id=game_id))
    waiting = next(seat for seat in (1, 2, 3) if seat not in state.acting_seats)
    request = game_pb2.SubmitCommandRequest(
        game_id=game_id, command=game_pb2.Command(pass_turn=game_pb2.Pass())
    )
    with pytest.raises(Exception):  # noqa: B017 (the refusal itself is another test's)
        client.game.SubmitCommand(request, metadata=auth(tokens[waiting - 1]))
    deadline = time.monotonic() + 20
    while True:
        refused = [
            span
            for service, span in collector.spans
            if service == "shikoku-rules"
            and span.name == RULES_SUBMIT
            and attributes(span).get("shikoku.reason") == "NOT_YOUR_TURN"
        ]
        if refused:
            break
        assert time.monotonic() < deadline, "no error span of the refused command"
        time.sleep(0.1)
    assert refused[0].status.code == trace_pb2.Status.STATUS_CODE_ERROR
