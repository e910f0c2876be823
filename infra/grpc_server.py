"""Running one service process: a grpc.aio server with health, reflection and clean shutdown."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence

import grpc
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection_pb2

from infra import reflection, tracing
from infra.call_observer import ObservesCalls
from infra.grpc_types import Context
from infra.interceptors import FailuresAsStatus
from infra.observability import call_observers, observe_process
from infra.process_settings import Observability
from infra.requests import DecodesRequests
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
    interceptors: Sequence[grpc.aio.ServerInterceptor] = (),  # type: ignore[type-arg]
    descriptors: Sequence[descriptor_pb2.FileDescriptorProto] = (),
    options: Sequence[tuple[str, int | str]] = (),
) -> None:
    """Serves until SIGTERM or SIGINT, then stops taking calls, lets running ones finish for
    `grace_seconds`, and runs `on_stop`. `register` adds the servicers and returns their full
    service names (for health and reflection). `interceptors` run before FailuresAsStatus,
    the first outermost. Reflection serves `descriptors` (with the files they import), or else
    the generated code's descriptors of the registered services; with those of health and
    reflection themselves, and nothing else. Every call is observed (metrics, access log, its
    span when tracing is on) before any of them runs, as `observability` says. `options` are
    gRPC server options (channel arguments) of this process, after the ones every service has."""
    observe_process(name, observability)
    observed = [*tracing.server_interceptors(), ObservesCalls(call_observers())]
    server = grpc.aio.server(
        interceptors=[*observed, DecodesRequests(), *interceptors, FailuresAsStatus()],
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
    own = reflection.files_of([health_pb2.DESCRIPTOR, reflection_pb2.DESCRIPTOR])
    files = list(descriptors) or reflection.files_of_services(service_names)
    reflection.add_reflection(
        server,
        [*service_names, HEALTH_SERVICE, reflection.SERVICE_NAME],
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
    print(f"{name} listening on {host}:{port}", flush=True)

    await stop_requested()
    log.info("%s stopping", name)
    await health.enter_graceful_shutdown()
    await server.stop(grace_seconds)
    if on_stop:
        await on_stop()
    print(f"{name} stopped", flush=True)
