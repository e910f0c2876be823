"""The services of the public API (`shikoku.v1`), for everything that serves or guards them
all: the gateway's registration, its access rules, the web entrypoint."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf import message_factory
from google.protobuf.descriptor import FileDescriptor, ServiceDescriptor
from google.protobuf.message import Message

from shikoku.v1 import game_pb2, lobby_pb2, routes_pb2, title_pb2

PUBLIC_FILES: tuple[FileDescriptor, ...] = (
    lobby_pb2.DESCRIPTOR,
    game_pb2.DESCRIPTOR,
    routes_pb2.DESCRIPTOR,
    title_pb2.DESCRIPTOR,
)


def public_services() -> tuple[ServiceDescriptor, ...]:
    return tuple(service for file in PUBLIC_FILES for service in file.services_by_name.values())


@dataclass(frozen=True)
class PublicMethod:
    path: str  # "/shikoku.v1.LobbyService/CreateTable", as in gRPC and Connect
    request: type[Message]
    response: type[Message]
    streaming: bool  # server-streaming; the API has no client-streaming methods


def public_methods() -> dict[str, PublicMethod]:
    """Every public method by its URL path, read from the service descriptors."""
    return {
        f"/{service.full_name}/{method.name}": PublicMethod(
            f"/{service.full_name}/{method.name}",
            message_factory.GetMessageClass(method.input_type),
            message_factory.GetMessageClass(method.output_type),
            method.server_streaming,
        )
        for service in public_services()
        for method in service.methods
    }
