"""The API follows the usual protobuf and gRPC conventions: `buf lint` checks them (`make lint`),
with the rules and the few exceptions buf.yaml chooses and explains. These tests hold that
setup to what it must catch, and check by hand what buf does not:

- buf reports each convention on a file built to break them all, in the public package; in the
  internal one it lets only the documented exceptions pass;
- list rpcs page (`page_size`, `page_token` -> `next_page_token`; not a buf rule);
- the generated code is that of protos/ (names are checked on the protos, the code is used)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor, FieldDescriptor, FileDescriptor

from tests.api.protos import PROTOS, REPO, compile_public, generated_files, tool


def lint(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str]]:
    """(file, rule) for each finding of `buf lint` on protos/ with `files` added."""
    shutil.copytree(PROTOS, tmp_path / "protos", ignore=shutil.ignore_patterns("releases"))
    shutil.copy(REPO / "buf.yaml", tmp_path / "buf.yaml")
    for name, text in files.items():
        (tmp_path / "protos" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "protos" / name).write_text(text)
    linted = subprocess.run(
        [tool("buf"), "lint", "--error-format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert linted.returncode in (0, 100), linted.stderr  # 100: findings
    findings = [json.loads(line) for line in linted.stdout.splitlines()]
    assert (linted.returncode == 100) == bool(findings), linted.stdout + linted.stderr
    return [(finding["path"], finding["type"]) for finding in findings]


# Breaks every naming rule and has no comment at all.
BAD = """syntax = "proto3";

package shikoku;

service things {
  rpc listThings(bad_message) returns (bad_message);
}

message bad_message {
  string BadField = 1;
  oneof BadOneof {
    int32 x = 2;
  }
}

enum colour {
  COLOUR_NONE = 0;
  Red = 1;
}
"""

# What buf must report of BAD: the conventions tests/api/ used to check by hand, and the
# comments on oneofs, enums and enum values besides.
CONVENTIONS = {
    "PACKAGE_VERSION_SUFFIX",  # the package is shikoku.v1
    "PACKAGE_DIRECTORY_MATCH",  # ... and its files are in protos/shikoku/v1/
    "SERVICE_PASCAL_CASE",
    "SERVICE_SUFFIX",  # FooService
    "RPC_PASCAL_CASE",
    "RPC_REQUEST_STANDARD_NAME",  # rpc Foo takes a FooRequest
    "MESSAGE_PASCAL_CASE",
    "FIELD_LOWER_SNAKE_CASE",
    "ONEOF_LOWER_SNAKE_CASE",
    "ENUM_PASCAL_CASE",
    "ENUM_VALUE_UPPER_SNAKE_CASE",
    "ENUM_VALUE_PREFIX",  # enum FooBar: FOO_BAR_*
    "ENUM_ZERO_VALUE_SUFFIX",  # enum FooBar: FOO_BAR_UNSPECIFIED = 0
    "COMMENT_SERVICE",
    "COMMENT_RPC",
    "COMMENT_MESSAGE",
    "COMMENT_FIELD",
    "COMMENT_ONEOF",
    "COMMENT_ENUM",
    "COMMENT_ENUM_VALUE",
}


def test_protos_as_they_stand_pass_buf_lint(tmp_path: Path) -> None:
    assert lint(tmp_path, {}) == []


def test_buf_lint_reports_every_convention(tmp_path: Path) -> None:
    found = lint(tmp_path, {"elsewhere/bad.proto": BAD})
    assert {path for path, _ in found} == {"protos/elsewhere/bad.proto"}
    missed = CONVENTIONS - {rule for _, rule in found}
    assert not missed, f"buf lint no longer reports {sorted(missed)}"


def test_a_new_public_file_is_excused_no_comment(tmp_path: Path) -> None:
    """Only the internal API is excused comments. (A Get returning its resource is the API's
    style, which buf.yaml allows.)"""
    bare = """syntax = "proto3";

package shikoku.v1;

service BareService {
  rpc GetBare(GetBareRequest) returns (Bare);
}

message GetBareRequest {
  string name = 1;
}

message Bare {
  string name = 1;
}
"""
    found = lint(tmp_path, {"shikoku/v1/bare.proto": bare})
    rules = ["COMMENT_SERVICE", "COMMENT_RPC", *2 * ["COMMENT_MESSAGE", "COMMENT_FIELD"]]
    assert sorted(found) == sorted(("protos/shikoku/v1/bare.proto", rule) for rule in rules)


def test_the_internal_api_is_excused_comments_and_nothing_else(tmp_path: Path) -> None:
    internal = 'syntax = "proto3";\n\npackage shikoku.internal.v1;\n\n'
    fine = internal + "message Thing {\n  string name = 1;\n}\n"
    assert lint(tmp_path / "fine", {"shikoku/internal/v1/thing.proto": fine}) == []
    badly_named = internal + "message Thing {\n  string Name = 1;\n}\n"
    found = lint(tmp_path / "bad", {"shikoku/internal/v1/thing.proto": badly_named})
    assert found == [("protos/shikoku/internal/v1/thing.proto", "FIELD_LOWER_SNAKE_CASE")]


# List rpcs page: buf has no such rule.


def pagination_violations(files: list[FileDescriptor]) -> Iterator[str]:
    """Every rpc `ListFoos` whose request lacks `int32 page_size` or `string page_token`, or
    whose response lacks `string next_page_token`."""
    for file in files:
        for service in file.services_by_name.values():
            for rpc in service.methods:
                if re.match(r"List[A-Z]", rpc.name):
                    yield from _missing_page_fields(rpc.full_name, rpc.input_type, rpc.output_type)


def _missing_page_fields(rpc: str, request: Descriptor, response: Descriptor) -> Iterator[str]:
    wanted = (
        (request, "page_size", FieldDescriptor.TYPE_INT32, "int32"),
        (request, "page_token", FieldDescriptor.TYPE_STRING, "string"),
        (response, "next_page_token", FieldDescriptor.TYPE_STRING, "string"),
    )
    for message, field_name, field_type, type_name in wanted:
        field = message.fields_by_name.get(field_name)
        if field is None or field.type != field_type or field.is_repeated:
            yield f"{rpc}: {message.name} lacks a `{type_name} {field_name}` field"


def test_list_rpcs_page() -> None:
    broken = list(pagination_violations(generated_files()))
    assert not broken, "\n".join(broken)
    listing = [
        rpc.name
        for file in generated_files()
        for service in file.services_by_name.values()
        for rpc in service.methods
        if rpc.name.startswith("List")
    ]
    assert {"ListTables", "ListLegalActions"} <= set(listing)


def test_the_pagination_check_can_fail() -> None:
    proto = descriptor_pb2.FileDescriptorProto(name="bad.proto", package="bad.v1")
    T = descriptor_pb2.FieldDescriptorProto
    request = proto.message_type.add(name="ListThingsRequest")
    request.field.add(name="page_size", number=1, type=T.TYPE_INT64, label=T.LABEL_OPTIONAL)
    proto.message_type.add(name="ListThingsResponse")
    service = proto.service.add(name="ThingService")
    service.method.add(
        name="ListThings",
        input_type=".bad.v1.ListThingsRequest",
        output_type=".bad.v1.ListThingsResponse",
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    assert list(pagination_violations([pool.FindFileByName("bad.proto")])) == [
        "bad.v1.ThingService.ListThings: ListThingsRequest lacks a `int32 page_size` field",
        "bad.v1.ThingService.ListThings: ListThingsRequest lacks a `string page_token` field",
        "bad.v1.ThingService.ListThings: ListThingsResponse lacks a `string next_page_token` field",
    ]


# The generated code is that of protos/.


def _structure(file: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """The file without what generated code leaves out (source info, JSON names)."""
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(file)
    copy.ClearField("source_code_info")

    def clear(message: descriptor_pb2.DescriptorProto) -> None:
        for field in message.field:
            field.ClearField("json_name")
        for nested in message.nested_type:
            clear(nested)

    for message in copy.message_type:
        clear(message)
    for extension in copy.extension:  # the catalogue of reasons' options
        extension.ClearField("json_name")
    return copy


def test_the_generated_code_is_that_of_the_protos(tmp_path: Path) -> None:
    generated: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for file in generated_files():
        generated[file.name] = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(generated[file.name])
    sources = {file.name: _structure(file) for file in compile_public(tmp_path / "v1").file}
    assert sorted(generated) == sorted(sources), "shikoku/v1 is stale: run `make proto`"
    stale = sorted(name for name, file in sources.items() if _structure(generated[name]) != file)
    assert not stale, f"shikoku/v1 is stale for {', '.join(stale)}: run `make proto`"
