"""The public API (package shikoku.v1) follows the usual protobuf and gRPC conventions: the rules
of `buf lint`'s DEFAULT set that apply here, plus leading comments on every service, rpc, message
and field. Names are checked on the compiled descriptors of the generated shikoku.v1 modules;
comments, which generated code drops, on a descriptor set compiled with source info from protos/.

Each rule is one test, whose failure lists every element that breaks it. Violations that predate
these checks are listed, with a reason, in KNOWN_EXCEPTIONS: fix the proto, then delete the entry
(an entry that no longer matches a violation fails too)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor, FileDescriptor
from grpc_tools import protoc  # type: ignore[import-untyped]

from tools.api_surface import PACKAGE, v1_files

pytestmark = pytest.mark.client

PROTOS = Path(__file__).resolve().parents[2] / "protos"
PACKAGE_DIRECTORY = PACKAGE.replace(".", "/")

PASCAL_CASE = re.compile(r"[A-Z][a-zA-Z0-9]*")
LOWER_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")
UPPER_SNAKE_CASE = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*")

RULES = (
    "PACKAGE_VERSION",  # the package is shikoku.v1
    "PACKAGE_DIRECTORY_MATCH",  # ... and its files are in protos/shikoku/v1/
    "SERVICE_PASCAL_CASE",
    "SERVICE_SUFFIX",  # FooService
    "RPC_PASCAL_CASE",
    "RPC_REQUEST_STANDARD_NAME",  # rpc Foo takes a FooRequest
    "LIST_PAGINATION",  # rpc ListFoos: page_size, page_token -> next_page_token
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
)

# (rule, element, why it is tolerated for now). Only violations already released belong here;
# new API elements must follow every rule.
KNOWN_EXCEPTIONS: frozenset[tuple[str, str, str]] = frozenset()


class Violation(NamedTuple):
    rule: str
    element: str
    detail: str

    def __str__(self) -> str:
        return f"{self.element}: {self.detail} [{self.rule}]"


def upper_snake(pascal: str) -> str:
    """DividendKind -> DIVIDEND_KIND, HTTPStatus -> HTTP_STATUS."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", pascal).upper()


def check(files: list[FileDescriptor], comments: dict[str, str]) -> list[Violation]:
    """Every violation of RULES in these files; `comments` maps full names to leading comments."""
    found: list[Violation] = []
    for file in files:
        found += _check_file(file, comments)
    return found


def _check_file(file: FileDescriptor, comments: dict[str, str]) -> Iterator[Violation]:
    if file.package != PACKAGE:
        yield Violation("PACKAGE_VERSION", file.name, f"package is {file.package}, not {PACKAGE}")
    directory = file.package.replace(".", "/")
    if file.name.rpartition("/")[0] != directory:
        yield Violation(
            "PACKAGE_DIRECTORY_MATCH", file.name, f"package {file.package} belongs in {directory}/"
        )
    for service in file.services_by_name.values():
        name = service.full_name
        if not PASCAL_CASE.fullmatch(service.name):
            yield Violation("SERVICE_PASCAL_CASE", name, "service name is not PascalCase")
        if not service.name.endswith("Service"):
            yield Violation("SERVICE_SUFFIX", name, "service name does not end in Service")
        if not comments.get(name):
            yield Violation("COMMENT_SERVICE", name, "service has no leading comment")
        for rpc in service.methods:
            rpc_name = rpc.full_name
            if not PASCAL_CASE.fullmatch(rpc.name):
                yield Violation("RPC_PASCAL_CASE", rpc_name, "rpc name is not PascalCase")
            if rpc.input_type.name != f"{rpc.name}Request":
                yield Violation(
                    "RPC_REQUEST_STANDARD_NAME",
                    rpc_name,
                    f"takes {rpc.input_type.name}, not {rpc.name}Request",
                )
            if re.match(r"List[A-Z]", rpc.name):
                yield from _check_pagination(rpc_name, rpc.input_type, rpc.output_type)
            if not comments.get(rpc_name):
                yield Violation("COMMENT_RPC", rpc_name, "rpc has no leading comment")
    for message in file.message_types_by_name.values():
        yield from _check_message(message, comments)
    for enum in file.enum_types_by_name.values():
        yield from _check_enum(enum)


def _check_pagination(rpc: str, request: Descriptor, response: Descriptor) -> Iterator[Violation]:
    wanted = (
        (request, "page_size", FieldDescriptor.TYPE_INT32, "int32"),
        (request, "page_token", FieldDescriptor.TYPE_STRING, "string"),
        (response, "next_page_token", FieldDescriptor.TYPE_STRING, "string"),
    )
    for message, field_name, field_type, type_name in wanted:
        field = message.fields_by_name.get(field_name)
        if field is None or field.type != field_type or field.is_repeated:
            yield Violation(
                "LIST_PAGINATION",
                rpc,
                f"list rpc: {message.name} lacks a `{type_name} {field_name}` field",
            )


def _check_message(message: Descriptor, comments: dict[str, str]) -> Iterator[Violation]:
    if message.GetOptions().map_entry:  # generated for a map field: not written by anyone
        return
    name = message.full_name
    if not PASCAL_CASE.fullmatch(message.name):
        yield Violation("MESSAGE_PASCAL_CASE", name, "message name is not PascalCase")
    if not comments.get(name):
        yield Violation("COMMENT_MESSAGE", name, "message has no leading comment")
    for field in message.fields:
        if not LOWER_SNAKE_CASE.fullmatch(field.name):
            yield Violation(
                "FIELD_LOWER_SNAKE_CASE", field.full_name, "field name is not lower_snake_case"
            )
        if not comments.get(field.full_name):
            yield Violation("COMMENT_FIELD", field.full_name, "field has no leading comment")
    proto = descriptor_pb2.DescriptorProto()
    message.CopyToProto(proto)
    synthetic = {field.oneof_index for field in proto.field if field.proto3_optional}
    for oneof in message.oneofs:
        if oneof.index not in synthetic and not LOWER_SNAKE_CASE.fullmatch(oneof.name):
            yield Violation(
                "ONEOF_LOWER_SNAKE_CASE", oneof.full_name, "oneof name is not lower_snake_case"
            )
    for nested in message.nested_types:
        yield from _check_message(nested, comments)
    for enum in message.enum_types:
        yield from _check_enum(enum)


def _check_enum(enum: EnumDescriptor) -> Iterator[Violation]:
    name = enum.full_name
    if not PASCAL_CASE.fullmatch(enum.name):
        yield Violation("ENUM_PASCAL_CASE", name, "enum name is not PascalCase")
    prefix = upper_snake(enum.name) + "_"
    zero = enum.values_by_number.get(0)
    if zero is None or zero.name != f"{prefix}UNSPECIFIED":
        actual = "none" if zero is None else zero.name
        yield Violation(
            "ENUM_ZERO_VALUE_SUFFIX", name, f"zero value is {actual}, not {prefix}UNSPECIFIED"
        )
    for value in enum.values:
        value_name = f"{name}.{value.name}"
        if not UPPER_SNAKE_CASE.fullmatch(value.name):
            yield Violation(
                "ENUM_VALUE_UPPER_SNAKE_CASE", value_name, "enum value is not UPPER_SNAKE_CASE"
            )
        if not value.name.startswith(prefix):
            yield Violation("ENUM_VALUE_PREFIX", value_name, f"enum value lacks prefix {prefix}")


def leading_comments(file: descriptor_pb2.FileDescriptorProto) -> dict[str, str]:
    """Full name -> leading comment, for every element of a file compiled with source info."""
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


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> descriptor_pb2.FileDescriptorSet:
    """protos/shikoku/v1/*.proto compiled with source info (comments kept)."""
    out = tmp_path_factory.mktemp("api") / "v1.binpb"
    sources = sorted(
        p.relative_to(PROTOS).as_posix() for p in PROTOS.glob(f"{PACKAGE_DIRECTORY}/*.proto")
    )
    well_known = Path(protoc.__file__).parent / "_proto"  # google/protobuf/*.proto
    args = ["protoc", f"-I{PROTOS}", f"-I{well_known}", "--include_source_info"]
    assert protoc.main([*args, f"--descriptor_set_out={out}", *sources]) == 0, "protoc failed"
    return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


@pytest.fixture(scope="module")
def violations(compiled: descriptor_pb2.FileDescriptorSet) -> list[Violation]:
    comments: dict[str, str] = {}
    for file in compiled.file:
        comments |= leading_comments(file)
    return check(v1_files(), comments)


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
    return copy


def test_the_generated_code_is_that_of_the_protos(
    compiled: descriptor_pb2.FileDescriptorSet,
) -> None:
    """Names are checked on the generated code and comments on protos/: they must agree."""
    generated: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for file in v1_files():
        generated[file.name] = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(generated[file.name])
    sources = {file.name: _structure(file) for file in compiled.file}
    assert sorted(generated) == sorted(sources), "shikoku/v1 is stale: run `make proto`"
    stale = sorted(name for name, file in sources.items() if _structure(generated[name]) != file)
    assert not stale, f"shikoku/v1 is stale for {', '.join(stale)}: run `make proto`"


@pytest.mark.parametrize("rule", RULES)
def test_rule(rule: str, violations: list[Violation]) -> None:
    tolerated = {(r, element) for r, element, _ in KNOWN_EXCEPTIONS}
    broken = [v for v in violations if v.rule == rule and (v.rule, v.element) not in tolerated]
    if broken:
        lines = "\n".join(f"  {v}" for v in broken)
        pytest.fail(f"{len(broken)} element(s) break {rule}:\n{lines}", pytrace=False)


def test_every_known_exception_is_still_a_violation(violations: list[Violation]) -> None:
    found = {(v.rule, v.element) for v in violations}
    fixed = sorted((r, e) for r, e, _ in KNOWN_EXCEPTIONS if (r, e) not in found)
    if fixed:
        lines = "\n".join(f"  ({r!r}, {e!r})" for r, e in fixed)
        pytest.fail(f"fixed, so delete from KNOWN_EXCEPTIONS:\n{lines}", pytrace=False)


def test_every_known_exception_names_a_rule_and_a_reason() -> None:
    for rule, element, reason in KNOWN_EXCEPTIONS:
        assert rule in RULES, f"{element}: unknown rule {rule}"
        assert reason.strip(), f"{element}: {rule} is excepted without a reason"


@pytest.mark.parametrize(
    ("pascal", "upper"),
    [("DividendKind", "DIVIDEND_KIND"), ("Role", "ROLE"), ("HTTPStatus", "HTTP_STATUS")],
)
def test_upper_snake(pascal: str, upper: str) -> None:
    assert upper_snake(pascal) == upper


def test_the_rules_can_fail() -> None:
    """The checks themselves, on a file built to break each rule once."""
    proto = descriptor_pb2.FileDescriptorProto(name="elsewhere/bad.proto", package="shikoku")
    proto.syntax = "proto3"
    T = descriptor_pb2.FieldDescriptorProto
    bad = proto.message_type.add(name="bad_message")
    bad.field.add(name="BadField", number=1, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    bad.oneof_decl.add(name="BadOneof")
    bad.field.add(name="x", number=2, type=T.TYPE_INT32, label=T.LABEL_OPTIONAL, oneof_index=0)
    proto.message_type.add(name="ListThingsResponse")
    enum = proto.enum_type.add(name="colour")
    enum.value.add(name="COLOUR_NONE", number=0)
    enum.value.add(name="Red", number=1)
    service = proto.service.add(name="things")
    service.method.add(
        name="listThings", input_type=".shikoku.bad_message", output_type=".shikoku.bad_message"
    )
    service.method.add(
        name="ListThings",
        input_type=".shikoku.bad_message",
        output_type=".shikoku.ListThingsResponse",
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    found = check([pool.FindFileByName(proto.name)], comments={})
    assert {v.rule for v in found} == set(RULES)
    assert (
        Violation(
            "LIST_PAGINATION",
            "shikoku.things.ListThings",
            "list rpc: bad_message lacks a `int32 page_size` field",
        )
        in found
    )
