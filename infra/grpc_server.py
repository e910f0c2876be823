"""Running one service process: a grpc.aio server with health, reflection and clean shutdown."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence

import grpc
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer

from infra import garbage, reflection, tracing
from infra.call_chain import Admission, CallChain
from infra.grpc_types import Context
from infra.logs import announce
from infra.observability import call_observers, observe_process
from infra.process_settings import Observability
from infra.stopping import stop_requested

__all__ = ["Context", "Register", "serve"]

log = logging.getLogger(__name__)

Register = Callable[[grpc.aio.Server], Iterable[str]]

# Requests are small (gRPC's default allows 4 MiB); a bigger one is refused with
# RESOURCE_EXHAUSTED before any handler sees it.
MAX_RECEIVE_MESSAGE_BYTES = 1024 * 1024

HEALTH_SERVICE: str = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name


async def serve(
    name: str,
    address: str,
    register: Register,
    on_stop: Callable[[], Awaitable[None]] | None = None,
    grace_seconds: float = 5.0,
    *,
    observability: Observability,
    admissions: Sequence[Admission] = (),
    descriptors: Sequence[descriptor_pb2.FileDescriptorProto] = (),
    options: Sequence[tuple[str, int | str]] = (),
) -> None:
    """Serves until SIGTERM or SIGINT, then stops taking calls, lets running ones finish for
    `grace_seconds`, and runs `on_stop`. `register` adds the servicers and returns their full
    service names (for health and reflection). Reflection serves `descriptors` (with the files
    they import), or else the generated code's descriptors of the registered services; with
    those of health and reflection themselves, and nothing else. `options` are gRPC server
    options (channel arguments) of this process, after the ones every service has.
    Every call goes through one `CallChain`: observed (metrics, access log, as `observability`
    says), decoded, admitted by `admissions` in order, failures as statuses; and, when tracing
    is on, through the tracer's own interceptor before it (its span)."""
    observe_process(name, observability)
    chain = CallChain(call_observers(), admissions)
    server = grpc.aio.server(
        interceptors=[*tracing.server_interceptors(), chain],
        options=[
            ("grpc.max_receive_message_length", MAX_RECEIVE_MESSAGE_BYTES),
            # A second process on the same port is an error, not a silent share of its calls.
            ("grpc.so_reuseport", 0),
            *options,
        ],
    )
    service_names = list(register(server))
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    own = [*reflection.files_of([health_pb2.DESCRIPTOR]), *reflection.own_files()]
    files = list(descriptors) or reflection.files_of_services(service_names)
    reflection.add_reflection(
        server,
        [*service_names, HEALTH_SERVICE, *reflection.SERVICE_NAMES],
        reflection.Catalogue([*files, *own]),
    )
    try:
        port = server.add_insecure_port(address)
    except RuntimeError:
        port = 0
    if port == 0:
        raise SystemExit(f"{name}: cannot listen on {address} (in use, or not an address here)")
    await server.start()
    for service in ["", *service_names]:
        await health.set(service, health_pb2.HealthCheckResponse.SERVING)
    host = address.rsplit(":", 1)[0]
    announce(f"{name} listening on {host}:{port}")
    garbage.settle()

    await stop_requested()
    log.info("%s stopping", name)
    await health.enter_graceful_shutdown()
    await server.stop(grace_seconds)
    if on_stop:
        await on_stop()
    announce(f"{name} stopped")
