"""The services of the public API (`shikoku.v1`), for everything that serves or guards them
all: the gateway's registration, its access rules, the web bridge."""

from __future__ import annotations

from google.protobuf.descriptor import FileDescriptor, ServiceDescriptor

from shikoku.v1 import game_pb2, lobby_pb2, routes_pb2, title_pb2

PUBLIC_FILES: tuple[FileDescriptor, ...] = (
    lobby_pb2.DESCRIPTOR,
    game_pb2.DESCRIPTOR,
    routes_pb2.DESCRIPTOR,
    title_pb2.DESCRIPTOR,
)


def public_services() -> tuple[ServiceDescriptor, ...]:
    return tuple(service for file in PUBLIC_FILES for service in file.services_by_name.values())
