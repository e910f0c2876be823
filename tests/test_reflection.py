"""infra.reflection on small hand-built files: what it finds, what it refuses, how it answers,
and that v1 and v1alpha are both served, comments kept, by one servicer on a real server.
(The gateway's reflection of the real API, through grpcurl: tests/e2e/test_reflection.py.)"""

from __future__ import annotations

import re
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2

from infra.reflection import (
    SERVICE_NAMES,
    Catalogue,
    ServerReflection,
    add_reflection,
    own_files,
    v1_file,
    v1_messages,
)
from shikoku_dev.redis_server import free_port

Field = descriptor_pb2.FieldDescriptorProto
File = descriptor_pb2.FileDescriptorProto


def _files() -> list[File]:
    base = File(name="a/base.proto", package="a")
    base.message_type.add(name="Base").extension_range.add(start=100, end=200)
    thing = File(name="a/thing.proto", package="a.b", dependency=["a/base.proto"])
    message = thing.message_type.add(name="Thing")
    message.field.add(name="id", number=1, type=Field.TYPE_STRING)
    message.oneof_decl.add(name="choice")
    message.nested_type.add(name="Inner")
    message.enum_type.add(name="Kind").value.add(name="KIND_UNSPECIFIED", number=0)
    thing.extension.add(name="note", number=150, type=Field.TYPE_STRING, extendee=".a.Base")
    service = thing.service.add(name="ThingService")
    service.method.add(name="Get", input_type=".a.b.Thing", output_type=".a.b.Thing")
    return [base, thing]


def _answer(catalogue: Catalogue, **request: object) -> reflection_pb2.ServerReflectionResponse:
    servicer = ServerReflection(["a.b.ThingService"], catalogue)
    return servicer.answer(reflection_pb2.ServerReflectionRequest(**request))


@pytest.mark.parametrize(
    "symbol",
    [
        "a.b.ThingService",
        "a.b.ThingService.Get",
        "a.b.Thing",
        ".a.b.Thing",
        "a.b.Thing.id",
        "a.b.Thing.choice",
        "a.b.Thing.Inner",
        "a.b.Thing.Kind",
        "a.b.Thing.KIND_UNSPECIFIED",  # protobuf's scope: beside its enum
        "a.b.Thing.Kind.KIND_UNSPECIFIED",  # grpcurl's name
        "a.b.note",
    ],
)
def test_every_kind_of_symbol_is_found(symbol: str) -> None:
    answer = _answer(Catalogue(_files()), file_containing_symbol=symbol)
    served = [
        File.FromString(data).name for data in answer.file_descriptor_response.file_descriptor_proto
    ]
    assert served == ["a/thing.proto", "a/base.proto"]  # the file first, then what it imports


def test_an_unknown_symbol_or_file_is_not_found() -> None:
    catalogue = Catalogue(_files())
    for request in ({"file_containing_symbol": "a.b.Nothing"}, {"file_by_filename": "b.proto"}):
        answer = _answer(catalogue, **request)
        assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
        assert answer.original_request == reflection_pb2.ServerReflectionRequest(**request)


def test_extensions_are_found_by_their_message_and_number() -> None:
    catalogue = Catalogue(_files())
    containing = reflection_pb2.ExtensionRequest(containing_type="a.Base", extension_number=150)
    answer = _answer(catalogue, file_containing_extension=containing)
    first = answer.file_descriptor_response.file_descriptor_proto[0]
    assert File.FromString(first).name == "a/thing.proto"
    numbers = _answer(catalogue, all_extension_numbers_of_type="a.Base")
    assert list(numbers.all_extension_numbers_response.extension_number) == [150]
    assert numbers.all_extension_numbers_response.base_type_name == "a.Base"
    assert _answer(catalogue, all_extension_numbers_of_type="a.b.Thing.id").HasField(
        "error_response"
    )


def test_only_the_given_services_are_listed() -> None:
    answer = _answer(Catalogue(_files()), list_services="")
    assert [s.name for s in answer.list_services_response.service] == ["a.b.ThingService"]


def test_a_listed_service_must_have_descriptors() -> None:
    with pytest.raises(ValueError, match=re.escape("a.b.Other")):
        ServerReflection(["a.b.ThingService", "a.b.Other"], Catalogue(_files()))


def test_a_file_without_its_imports_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("imports a/base.proto")):
        Catalogue(_files()[1:])


def test_one_symbol_defined_twice_is_refused() -> None:
    twin = File(name="a/twin.proto", package="a.b")
    twin.message_type.add(name="Thing")
    with pytest.raises(ValueError, match=re.escape("a.b.Thing is defined by both")):
        Catalogue([*_files(), twin])


def _fields(file: File) -> list[tuple[str, list[tuple[str, int, int, str, int]]]]:
    """Each message with its fields (name, number, type, type name less the package, oneof)."""
    package = f".{file.package}."
    return [
        (
            message.name,
            [
                (f.name, f.number, int(f.type), f.type_name.removeprefix(package), f.oneof_index)
                for f in message.field
            ],
        )
        for message in file.message_type
    ]


def test_v1_is_v1alpha_under_its_own_package() -> None:
    v1alpha = File()
    reflection_pb2.DESCRIPTOR.CopyToProto(v1alpha)
    v1 = v1_file()
    assert (v1.name, v1.package) == ("grpc/reflection/v1/reflection.proto", "grpc.reflection.v1")
    assert _fields(v1) == _fields(v1alpha)
    names = [f.type_name for m in v1.message_type for f in m.field if f.type_name]
    assert names and all(name.startswith(".grpc.reflection.v1.") for name in names)
    (method,) = v1.service[0].method
    assert (method.input_type, method.output_type) == (
        ".grpc.reflection.v1.ServerReflectionRequest",
        ".grpc.reflection.v1.ServerReflectionResponse",
    )
    assert not v1.options.deprecated
    request = v1_messages()["grpc.reflection.v1.ServerReflectionRequest"](file_by_filename="x")
    same = reflection_pb2.ServerReflectionRequest.FromString(request.SerializeToString())
    assert same.file_by_filename == "x"


def _commented() -> list[File]:
    files = _files()
    location = files[1].source_code_info.location.add(path=[6, 0])  # service 0 of a/thing
    location.leading_comments = " Things, got.\n"
    return files


async def _reflect(address: str, service: str, request: Any) -> Any:
    """One answer of `service` (v1 or v1alpha) to `request`, in that version's own types."""
    if service.startswith("grpc.reflection.v1."):
        messages = v1_messages()
        request_type = messages["grpc.reflection.v1.ServerReflectionRequest"]
        response_type = messages["grpc.reflection.v1.ServerReflectionResponse"]
    else:
        request_type = reflection_pb2.ServerReflectionRequest
        response_type = reflection_pb2.ServerReflectionResponse
    async with grpc.aio.insecure_channel(address) as channel:
        info: grpc.aio.StreamStreamMultiCallable[Any, Any] = channel.stream_stream(
            f"/{service}/ServerReflectionInfo",
            request_serializer=lambda message: message.SerializeToString(),
            response_deserializer=response_type.FromString,
        )
        call = info(iter([request_type.FromString(request.SerializeToString())]), timeout=10)
        answers = [answer async for answer in call]
    (answer,) = answers
    assert type(answer).DESCRIPTOR.full_name == response_type.DESCRIPTOR.full_name
    return answer


@pytest.mark.io
@pytest.mark.parametrize("service", SERVICE_NAMES)
async def test_both_versions_are_served_with_the_comments(service: str) -> None:
    server = grpc.aio.server()
    listed = ["a.b.ThingService", *SERVICE_NAMES]
    add_reflection(server, listed, Catalogue([*_commented(), *own_files()]))
    address = f"127.0.0.1:{free_port()}"
    server.add_insecure_port(address)
    await server.start()
    try:
        listing = reflection_pb2.ServerReflectionRequest(list_services="")
        answer = await _reflect(address, service, listing)
        assert [s.name for s in answer.list_services_response.service] == sorted(listed)

        asked = reflection_pb2.ServerReflectionRequest(file_containing_symbol="a.b.ThingService")
        answer = await _reflect(address, service, asked)
        served = File.FromString(answer.file_descriptor_response.file_descriptor_proto[0])
        assert served.source_code_info.location[0].leading_comments == " Things, got.\n"

        # Each version describes itself, and the other.
        for name in SERVICE_NAMES:
            asked = reflection_pb2.ServerReflectionRequest(file_containing_symbol=name)
            answer = await _reflect(address, service, asked)
            first = answer.file_descriptor_response.file_descriptor_proto[0]
            assert File.FromString(first).package == name.rpartition(".")[0]
    finally:
        await server.stop(0)
