"""The public API's surface (package shikoku.v1) as plain, JSON-ready data.

`surface(files)` turns file descriptors into a dict of every service with its rpcs (input and
output types, streaming), every message with its fields (number, name, type, label, oneof) and
every enum with its values. `protos/releases/shikoku.v1.json` is that dict for the last release;
tests/api/test_breaking.py compares the current API to it. Writing a new baseline is a release
decision:

    python -m tools.api_surface > protos/releases/shikoku.v1.json    (or: make api-release)
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from collections.abc import Iterable
from typing import NotRequired, TypedDict

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FileDescriptor

PACKAGE = "shikoku.v1"


class FieldSurface(TypedDict):
    number: int
    name: str
    # The scalar type ("string", "int64", ...), or "message" / "enum" with `type_name`.
    type: str
    # "optional", "repeated" or "required", as in descriptor.proto (a map field is repeated).
    label: str
    # The full name of the message or enum type.
    type_name: NotRequired[str]
    # The oneof the field belongs to (not the synthetic oneof of a proto3 `optional` field).
    oneof: NotRequired[str]
    # True for a proto3 field declared `optional` (explicit presence).
    proto3_optional: NotRequired[bool]


class MessageSurface(TypedDict):
    file: str
    fields: list[FieldSurface]
    # True for the entry type the compiler generates for a map field.
    map_entry: NotRequired[bool]


class EnumSurface(TypedDict):
    file: str
    # Value name to number, in number order.
    values: dict[str, int]


class RpcSurface(TypedDict):
    input_type: str
    output_type: str
    client_streaming: bool
    server_streaming: bool


class ServiceSurface(TypedDict):
    file: str
    # Rpc name to its signature, in declaration order.
    rpcs: dict[str, RpcSurface]


class Surface(TypedDict):
    package: str
    # Keyed by full name (nested types too, e.g. "shikoku.v1.GameSummary.NetWorthsEntry").
    services: dict[str, ServiceSurface]
    messages: dict[str, MessageSurface]
    enums: dict[str, EnumSurface]


def surface(files: Iterable[FileDescriptor]) -> Surface:
    """The surface of these files, which must all be of one package."""
    packages: set[str] = set()
    services: dict[str, ServiceSurface] = {}
    messages: dict[str, MessageSurface] = {}
    enums: dict[str, EnumSurface] = {}
    for file in files:
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        packages.add(proto.package)
        prefix = proto.package
        for service in proto.service:
            services[f"{prefix}.{service.name}"] = {
                "file": proto.name,
                "rpcs": {
                    method.name: {
                        "input_type": method.input_type.lstrip("."),
                        "output_type": method.output_type.lstrip("."),
                        "client_streaming": method.client_streaming,
                        "server_streaming": method.server_streaming,
                    }
                    for method in service.method
                },
            }
        for enum in proto.enum_type:
            enums[f"{prefix}.{enum.name}"] = _enum(proto.name, enum)
        for message in proto.message_type:
            _add_message(proto.name, prefix, message, messages, enums)
    if len(packages) != 1:
        raise ValueError(f"expected the files of one package, got {sorted(packages)}")
    return {
        "package": packages.pop(),
        "services": dict(sorted(services.items())),
        "messages": dict(sorted(messages.items())),
        "enums": dict(sorted(enums.items())),
    }


def _add_message(
    file: str,
    scope: str,
    message: descriptor_pb2.DescriptorProto,
    messages: dict[str, MessageSurface],
    enums: dict[str, EnumSurface],
) -> None:
    name = f"{scope}.{message.name}"
    fields: list[FieldSurface] = []
    for field in sorted(message.field, key=lambda f: f.number):
        entry: FieldSurface = {
            "number": field.number,
            "name": field.name,
            "type": descriptor_pb2.FieldDescriptorProto.Type.Name(field.type)
            .removeprefix("TYPE_")
            .lower(),
            "label": descriptor_pb2.FieldDescriptorProto.Label.Name(field.label)
            .removeprefix("LABEL_")
            .lower(),
        }
        if field.type_name:
            entry["type_name"] = field.type_name.lstrip(".")
        if field.proto3_optional:
            entry["proto3_optional"] = True
        elif field.HasField("oneof_index"):
            entry["oneof"] = message.oneof_decl[field.oneof_index].name
        fields.append(entry)
    messages[name] = {"file": file, "fields": fields}
    if message.options.map_entry:
        messages[name]["map_entry"] = True
    for enum in message.enum_type:
        enums[f"{name}.{enum.name}"] = _enum(file, enum)
    for nested in message.nested_type:
        _add_message(file, name, nested, messages, enums)


def _enum(file: str, enum: descriptor_pb2.EnumDescriptorProto) -> EnumSurface:
    values = sorted(enum.value, key=lambda v: (v.number, v.name))
    return {"file": file, "values": {value.name: value.number for value in values}}


def v1_files() -> list[FileDescriptor]:
    """The file descriptors of the generated shikoku.v1 modules (run `make proto` first)."""
    import shikoku.v1

    names = sorted(
        module.name
        for module in pkgutil.iter_modules(shikoku.v1.__path__)
        if module.name.endswith("_pb2")
    )
    files: list[FileDescriptor] = [
        importlib.import_module(f"shikoku.v1.{name}").DESCRIPTOR for name in names
    ]
    return files


def to_json(api: Surface) -> str:
    """Indented JSON with one line per field and per rpc, so that a baseline diffs by line."""
    return _dump(api, 0) + "\n"


def _dump(value: object, depth: int) -> str:
    # Containers of scalars from depth 4 (a field, an rpc) go on one line; the rest is indented.
    if isinstance(value, dict) and value and not _inline(value.values(), depth):
        pad = "  " * (depth + 1)
        items = [f"{pad}{json.dumps(key)}: {_dump(item, depth + 1)}" for key, item in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"
    if isinstance(value, list) and value and not _inline(value, depth):
        pad = "  " * (depth + 1)
        items = [f"{pad}{_dump(item, depth + 1)}" for item in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * depth + "]"
    return json.dumps(value, separators=(", ", ": "))


def _inline(items: Iterable[object], depth: int) -> bool:
    return depth >= 4 and not any(isinstance(item, dict | list) for item in items)


def main() -> None:
    sys.stdout.write(to_json(surface(v1_files())))


if __name__ == "__main__":
    main()
