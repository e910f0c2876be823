"""gRPC server reflection, `grpc.reflection.v1` and `grpc.reflection.v1alpha`, served from a
fixed set of file descriptors.

The stock servicer of grpcio-reflection answers from the process's descriptor pool, which cannot
find a method (`grpcurl describe shikoku.v1.LobbyService.CreateTable` answers "Symbol not
found") and serves descriptors copied from generated code, which carries no comments. This one
is given the files themselves, as `FileDescriptorProto`s: compiled with source info they keep
every comment, so `grpcurl describe` prints the proto's documentation. It knows exactly the
files it is given and their symbols: a process that serves only some of what it imports (the
gateway imports the internal API, and must not show it) reflects only those.

Symbols are the full names of services, methods, messages (nested too), fields, oneofs, enums,
enum values and extensions. An enum value is found by its protobuf name, which is scoped like
its enum (`shikoku.v1.DIVIDEND_KIND_PAYOUT`), and by the enum-qualified name that grpcurl and
other Go tools use (`shikoku.v1.DividendKind.DIVIDEND_KIND_PAYOUT`).

Both versions are one servicer: v1 is v1alpha under a new package, message for message and
field for field, so the same messages read and write both on the wire (grpcio-reflection ships
only v1alpha). Clients try v1 first (buf curl, grpcurl from 1.8.8, grpcui); older ones ask
v1alpha. Reflection describes v1 too, from v1alpha's descriptor renamed (`v1_file`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FileDescriptor
from google.protobuf.message import Message
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from infra.grpc_types import Context

__all__ = [
    "SERVICE_NAME",
    "SERVICE_NAMES",
    "V1_SERVICE_NAME",
    "Catalogue",
    "ServerReflection",
    "add_reflection",
    "files_of",
    "files_of_services",
    "own_files",
    "v1_file",
    "v1_messages",
]

SERVICE_NAME: str = reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"].full_name
_V1ALPHA = reflection_pb2.DESCRIPTOR.package
_V1 = "grpc.reflection.v1"
V1_SERVICE_NAME = f"{_V1}.ServerReflection"
#: The services a server lists for reflection itself: both versions.
SERVICE_NAMES: tuple[str, ...] = (V1_SERVICE_NAME, SERVICE_NAME)
_METHOD = "ServerReflectionInfo"

FileProto = descriptor_pb2.FileDescriptorProto
MessageProto = descriptor_pb2.DescriptorProto
EnumProto = descriptor_pb2.EnumDescriptorProto


class Catalogue:
    """Files by name, and the file that defines each symbol and extension."""

    def __init__(self, files: Iterable[FileProto]) -> None:
        self._files: dict[str, FileProto] = {}
        self._serialized: dict[str, bytes] = {}
        self._symbols: dict[str, str] = {}
        self._extensions: dict[tuple[str, int], str] = {}
        self._messages: set[str] = set()
        for file in files:
            if file.name in self._files:
                if file.SerializeToString() != self._serialized[file.name]:
                    raise ValueError(f"two different files named {file.name}")
                continue
            self._files[file.name] = file
            self._serialized[file.name] = file.SerializeToString()
            self._index(file)
        for file in self._files.values():
            missing = [name for name in file.dependency if name not in self._files]
            if missing:
                raise ValueError(f"{file.name} imports {', '.join(missing)}, which is not given")

    @classmethod
    def from_descriptor_set(cls, data: bytes, *more: FileProto) -> Catalogue:
        """The files of a serialized FileDescriptorSet (`protoc --descriptor_set_out`, which
        must `--include_imports`), and `more`."""
        return cls([*descriptor_pb2.FileDescriptorSet.FromString(data).file, *more])

    def file_names(self) -> list[str]:
        return list(self._files)

    def symbols(self) -> list[str]:
        return list(self._symbols)

    def defines(self, symbol: str) -> bool:
        return symbol.removeprefix(".") in self._symbols

    def file(self, name: str) -> FileProto:
        return self._files[name]

    def file_defining(self, symbol: str) -> str:
        """The name of the file that defines `symbol` (KeyError if none does)."""
        return self._symbols[symbol.removeprefix(".")]

    def file_extending(self, message: str, number: int) -> str:
        """The name of the file that declares extension `number` of `message`."""
        return self._extensions[(message.removeprefix("."), number)]

    def extension_numbers(self, message: str) -> list[int]:
        """The extension numbers declared for `message` (KeyError if it is not a message)."""
        message = message.removeprefix(".")
        if message not in self._messages:
            raise KeyError(message)
        return sorted(number for extendee, number in self._extensions if extendee == message)

    def with_dependencies(self, name: str) -> list[bytes]:
        """The serialized file named `name`, then every file it imports, directly or not."""
        order: list[str] = []

        def visit(file_name: str) -> None:
            if file_name not in order:
                order.append(file_name)
                for dependency in self._files[file_name].dependency:
                    visit(dependency)

        visit(name)
        return [self._serialized[file_name] for file_name in order]

    # Indexing.

    def _define(self, symbol: str, file: FileProto) -> None:
        defined = self._symbols.setdefault(symbol, file.name)
        if defined != file.name:
            raise ValueError(f"{symbol} is defined by both {defined} and {file.name}")

    def _index(self, file: FileProto) -> None:
        scope = file.package
        for message in file.message_type:
            self._index_message(file, scope, message)
        for enum in file.enum_type:
            self._index_enum(file, scope, enum)
        for extension in file.extension:
            self._index_extension(file, scope, extension)
        for service in file.service:
            name = _join(scope, service.name)
            self._define(name, file)
            for method in service.method:
                self._define(f"{name}.{method.name}", file)

    def _index_message(self, file: FileProto, scope: str, message: MessageProto) -> None:
        name = _join(scope, message.name)
        self._define(name, file)
        self._messages.add(name)
        for field in message.field:
            self._define(f"{name}.{field.name}", file)
        for oneof in message.oneof_decl:
            self._define(f"{name}.{oneof.name}", file)
        for nested in message.nested_type:
            self._index_message(file, name, nested)
        for enum in message.enum_type:
            self._index_enum(file, name, enum)
        for extension in message.extension:
            self._index_extension(file, name, extension)

    def _index_enum(self, file: FileProto, scope: str, enum: EnumProto) -> None:
        name = _join(scope, enum.name)
        self._define(name, file)
        for value in enum.value:
            self._define(_join(scope, value.name), file)
            self._define(f"{name}.{value.name}", file)

    def _index_extension(
        self, file: FileProto, scope: str, extension: descriptor_pb2.FieldDescriptorProto
    ) -> None:
        self._define(_join(scope, extension.name), file)
        self._extensions[(extension.extendee.removeprefix("."), extension.number)] = file.name


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def files_of(files: Iterable[FileDescriptor]) -> list[FileProto]:
    """These files of generated code and all they import, as FileDescriptorProtos (without
    comments: generated code has none)."""
    found: dict[str, FileProto] = {}

    def visit(file: FileDescriptor) -> None:
        if file.name not in found:
            found[file.name] = FileProto()
            file.CopyToProto(found[file.name])
            for dependency in file.dependencies:
                visit(dependency)

    for file in files:
        visit(file)
    return list(found.values())


def v1_file() -> FileProto:
    """`grpc/reflection/v1/reflection.proto`: v1alpha's file under v1's name and package."""
    file = FileProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(file)
    file.name = "grpc/reflection/v1/reflection.proto"
    file.package = _V1
    file.options.ClearField("deprecated")
    file.options.java_package = "io.grpc.reflection.v1"
    file.options.go_package = "google.golang.org/grpc/reflection/grpc_reflection_v1"
    old, new = f".{_V1ALPHA}.", f".{_V1}."
    for message in file.message_type:
        for field in message.field:
            if field.type_name.startswith(old):
                field.type_name = new + field.type_name.removeprefix(old)
    for service in file.service:
        for method in service.method:
            method.input_type = new + method.input_type.removeprefix(old)
            method.output_type = new + method.output_type.removeprefix(old)
    return file


def v1_messages() -> dict[str, type[Message]]:
    """v1's message classes by full name (`grpc.reflection.v1.ServerReflectionRequest`), in a
    pool of their own: for clients that want v1's own types."""
    pool = descriptor_pool.DescriptorPool()
    return message_factory.GetMessages([v1_file()], pool=pool)


def own_files() -> list[FileProto]:
    """The files of reflection itself, both versions, with what they import."""
    return [*files_of([reflection_pb2.DESCRIPTOR]), v1_file()]


def files_of_services(service_names: Iterable[str]) -> list[FileProto]:
    """The files of generated code that define these services, and all they import."""
    pool = descriptor_pool.Default()
    return files_of(pool.FindServiceByName(name).file for name in service_names)


def _not_found(request: reflection_pb2.ServerReflectionRequest, what: str) -> object:
    return reflection_pb2.ServerReflectionResponse(
        original_request=request,
        error_response=reflection_pb2.ErrorResponse(
            error_code=grpc.StatusCode.NOT_FOUND.value[0], error_message=f"{what} not found"
        ),
    )


class ServerReflection(reflection_pb2_grpc.ServerReflectionServicer):  # type: ignore[misc]
    """Lists `services` and answers every lookup from `catalogue`, for either version."""

    def __init__(self, services: Sequence[str], catalogue: Catalogue) -> None:
        unknown = [name for name in services if not catalogue.defines(name)]
        if unknown:
            raise ValueError(f"no descriptors for the services {', '.join(unknown)}")
        self._services = sorted(services)
        self._catalogue = catalogue

    async def ServerReflectionInfo(
        self,
        request_iterator: AsyncIterator[reflection_pb2.ServerReflectionRequest],
        context: Context,
    ) -> AsyncIterator[reflection_pb2.ServerReflectionResponse]:
        async for request in request_iterator:
            yield self.answer(request)

    def answer(self, request: reflection_pb2.ServerReflectionRequest) -> object:
        """The response to one request of the stream."""
        catalogue = self._catalogue
        response = reflection_pb2.ServerReflectionResponse(original_request=request)
        kind = request.WhichOneof("message_request")
        try:
            if kind == "list_services":
                services = [reflection_pb2.ServiceResponse(name=name) for name in self._services]
                response.list_services_response.service.extend(services)
                return response
            if kind == "all_extension_numbers_of_type":
                message = request.all_extension_numbers_of_type
                numbers = catalogue.extension_numbers(message)
                response.all_extension_numbers_response.base_type_name = message.lstrip(".")
                response.all_extension_numbers_response.extension_number.extend(numbers)
                return response
            if kind == "file_by_filename":
                name = request.file_by_filename
            elif kind == "file_containing_symbol":
                name = catalogue.file_defining(request.file_containing_symbol)
            elif kind == "file_containing_extension":
                wanted = request.file_containing_extension
                name = catalogue.file_extending(wanted.containing_type, wanted.extension_number)
            else:
                return reflection_pb2.ServerReflectionResponse(
                    original_request=request,
                    error_response=reflection_pb2.ErrorResponse(
                        error_code=grpc.StatusCode.INVALID_ARGUMENT.value[0],
                        error_message="no request in the message",
                    ),
                )
            files = catalogue.with_dependencies(name)
        except KeyError:
            what = {
                "file_by_filename": f"file {request.file_by_filename}",
                "file_containing_symbol": f"symbol {request.file_containing_symbol}",
                "file_containing_extension": "extension",
                "all_extension_numbers_of_type": f"type {request.all_extension_numbers_of_type}",
            }[str(kind)]
            return _not_found(request, what)
        response.file_descriptor_response.file_descriptor_proto.extend(files)
        return response


def add_reflection(server: grpc.aio.Server, services: Sequence[str], catalogue: Catalogue) -> None:
    """Serves reflection of `services` (list them all, reflection's SERVICE_NAMES too) from
    `catalogue` (with `own_files`), as v1 and v1alpha."""
    servicer = ServerReflection(services, catalogue)
    info = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    for name in SERVICE_NAMES:
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(name, {_METHOD: info}),)
        )
