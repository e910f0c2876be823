"""The public API's methods, read from the service descriptors of shikoku.v1: each one's URL
path, message classes and kind, and how to call it on a channel. Nothing here names a method,
so a method added to the protos is served as soon as the code is regenerated."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message

from gateway.public_api import public_services


@dataclass(frozen=True)
class Method:
    path: str  # "/shikoku.v1.LobbyService/CreateTable", as in gRPC
    request: type[Message]
    response: type[Message]
    streaming: bool  # server-streaming; the API has no client-streaming methods

    def unary(self, channel: grpc.aio.Channel) -> Any:
        return channel.unary_unary(
            self.path,
            request_serializer=self.request.SerializeToString,
            response_deserializer=self.response.FromString,
        )

    def stream(self, channel: grpc.aio.Channel) -> Any:
        return channel.unary_stream(
            self.path,
            request_serializer=self.request.SerializeToString,
            response_deserializer=self.response.FromString,
        )


def methods_of(services: Iterable[ServiceDescriptor]) -> dict[str, Method]:
    table: dict[str, Method] = {}
    for service in services:
        for method in service.methods:
            if method.client_streaming:
                continue  # not expressible as one HTTP request
            path = f"/{service.full_name}/{method.name}"
            table[path] = Method(
                path,
                message_factory.GetMessageClass(method.input_type),
                message_factory.GetMessageClass(method.output_type),
                method.server_streaming,
            )
    return table


def public_methods() -> dict[str, Method]:
    return methods_of(public_services())
