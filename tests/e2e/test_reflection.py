"""The gateway's server reflection as client developers use it: grpcurl (the real binary) and
buf curl list and describe the public API, every symbol of it resolves, the descriptors carry
the protos' comments, and nothing of the internal API shows; over `grpc.reflection.v1` (buf
curl's) and `grpc.reflection.v1alpha` (grpcurl 1.8.6's) alike."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2

from infra.reflection import SERVICE_NAMES, v1_messages
from tests.api.protos import PROTOS, compile_public, leading_comments, symbols, tool
from tests.e2e.api import System

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def protos(tmp_path_factory: pytest.TempPathFactory) -> list[descriptor_pb2.FileDescriptorProto]:
    """The public protos as protoc compiles them from protos/, comments kept."""
    return list(compile_public(tmp_path_factory.mktemp("api") / "v1.binpb").file)


def grpcurl(system: System, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("grpcurl"), "-plaintext", system.gateway, *args],
        capture_output=True,
        text=True,
        timeout=30,
    )


V1 = v1_messages()


@pytest.fixture(params=SERVICE_NAMES, ids=["v1", "v1alpha"])
def version(request: pytest.FixtureRequest) -> str:
    """The reflection service asked: grpc.reflection.v1 or v1alpha."""
    return str(request.param)


def reflect(
    system: System,
    requests: list[reflection_pb2.ServerReflectionRequest],
    version: str = "grpc.reflection.v1alpha.ServerReflection",
) -> list[Any]:
    """The answers to `requests`, sent on one stream of reflection `version` as that
    version's own messages (v1's are made at run time: no static type)."""
    package = version.rpartition(".")[0]
    if package == "grpc.reflection.v1":
        request_type = V1[f"{package}.ServerReflectionRequest"]
        response_type = V1[f"{package}.ServerReflectionResponse"]
    else:
        request_type = reflection_pb2.ServerReflectionRequest
        response_type = reflection_pb2.ServerReflectionResponse
    with grpc.insecure_channel(system.gateway) as channel:
        info: grpc.StreamStreamMultiCallable[Any, Any] = channel.stream_stream(
            f"/{version}/ServerReflectionInfo",
            request_serializer=lambda message: message.SerializeToString(),
            response_deserializer=response_type.FromString,
        )
        sent = (request_type.FromString(r.SerializeToString()) for r in requests)
        return list(info(sent, timeout=30))


def test_grpcurl_lists_the_public_services_and_no_internal_one(
    system: System, protos: list[descriptor_pb2.FileDescriptorProto]
) -> None:
    public = [f"{file.package}.{service.name}" for file in protos for service in file.service]
    assert "shikoku.v1.GameService" in public
    listed = grpcurl(system, "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == sorted(["grpc.health.v1.Health", *SERVICE_NAMES, *public])


def test_both_versions_list_the_same_services(system: System) -> None:
    listing = reflection_pb2.ServerReflectionRequest(list_services="")
    listed = []
    for version in SERVICE_NAMES:
        (answer,) = reflect(system, [listing], version)
        assert (
            type(answer).DESCRIPTOR.full_name
            == f"{version.rpartition('.')[0]}.ServerReflectionResponse"
        )
        listed.append(sorted(service.name for service in answer.list_services_response.service))
    assert listed[0] == listed[1]
    assert "shikoku.v1.LobbyService" in listed[0]
    assert set(SERVICE_NAMES) <= set(listed[0])


def test_every_public_symbol_resolves_to_its_file(
    system: System, protos: list[descriptor_pb2.FileDescriptorProto], version: str
) -> None:
    wanted = {name: file.name for file in protos for name in symbols(file)}
    kinds = {kind for file in protos for kind in symbols(file).values()}
    assert len(kinds) == 7  # services, methods, messages, fields, oneofs, enums, enum values
    names = sorted(wanted)
    requests = [reflection_pb2.ServerReflectionRequest(file_containing_symbol=n) for n in names]
    answers = reflect(system, requests, version)
    unresolved = [
        name
        for name, answer in zip(names, answers, strict=True)
        if answer.HasField("error_response")
    ]
    assert not unresolved, f"{len(unresolved)} symbols not found, e.g. {unresolved[:5]}"
    for name, answer in zip(names, answers, strict=True):
        first = descriptor_pb2.FileDescriptorProto.FromString(
            answer.file_descriptor_response.file_descriptor_proto[0]
        )
        assert first.name == wanted[name], name


def test_the_served_descriptors_are_the_protos_with_their_comments(
    system: System, protos: list[descriptor_pb2.FileDescriptorProto], version: str
) -> None:
    requests = [reflection_pb2.ServerReflectionRequest(file_by_filename=f.name) for f in protos]
    imports = {f.name: set(f.dependency) for f in protos}

    def imported_by(name: str) -> set[str]:
        """What `name` imports, and what those import in turn (reflection sends them all)."""
        direct = imports.get(name, set())
        return direct.union(*(imported_by(d) for d in direct))

    for file, answer in zip(protos, reflect(system, requests, version), strict=True):
        served = answer.file_descriptor_response.file_descriptor_proto
        assert served, f"{file.name}: {answer.error_response.error_message}"
        got = descriptor_pb2.FileDescriptorProto.FromString(served[0])
        assert leading_comments(got), f"{file.name} is served without comments"
        assert got == file, f"{file.name} is served otherwise than protos/ compiles it"
        imported = {descriptor_pb2.FileDescriptorProto.FromString(d).name for d in served[1:]}
        assert imported == imported_by(file.name), file.name


@pytest.mark.parametrize(
    "symbol",
    [
        "shikoku.v1.LobbyService",
        "shikoku.v1.LobbyService.CreateTable",
        "shikoku.v1.GameService.WatchGame",
        "shikoku.v1.TitleService.GetTitle",
        "shikoku.v1.Command",
        "shikoku.v1.CreateTableRequest.seat_count",
        "shikoku.v1.DividendKind",
        "shikoku.v1.DividendKind.DIVIDEND_KIND_PAYOUT",
    ],
)
def test_grpcurl_describes_a_symbol_with_its_comment(
    system: System, protos: list[descriptor_pb2.FileDescriptorProto], symbol: str
) -> None:
    kinds = {name: kind for file in protos for name, kind in symbols(file).items()}
    comments = {name: text for file in protos for name, text in leading_comments(file).items()}
    described = grpcurl(system, "describe", symbol)
    assert described.returncode == 0, described.stderr
    header, *lines = described.stdout.splitlines()
    assert header == f"{symbol} is {kinds[symbol]}:"
    comment = [line.strip() for line in comments[symbol].splitlines()]
    assert [line.removeprefix("//").strip() for line in lines[: len(comment)]] == comment
    assert all(line.startswith("//") for line in lines[: len(comment)])


def test_grpcurl_describes_the_error_details_the_api_sends(system: System) -> None:
    described = grpcurl(system, "describe", "google.rpc.ErrorInfo")
    assert described.returncode == 0, described.stderr
    assert described.stdout.startswith("google.rpc.ErrorInfo is a message:\n//")
    assert "string reason = 1;" in described.stdout


@pytest.mark.parametrize(
    "symbol",
    ["shikoku.internal.v1.RulesService", "shikoku.internal.v1.CredentialService.Authorize"],
)
def test_grpcurl_finds_nothing_of_the_internal_api(system: System, symbol: str) -> None:
    described = grpcurl(system, "describe", symbol)
    assert described.returncode != 0
    assert f"Symbol not found: {symbol}" in described.stderr


def test_the_internal_files_are_not_served(system: System, version: str) -> None:
    internal = sorted(
        p.relative_to(PROTOS).as_posix() for p in PROTOS.glob("shikoku/internal/**/*.proto")
    )
    assert internal
    requests = [reflection_pb2.ServerReflectionRequest(file_by_filename=name) for name in internal]
    for name, answer in zip(internal, reflect(system, requests, version), strict=True):
        assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0], name


def test_buf_curl_calls_a_method_it_learnt_by_reflection(system: System) -> None:
    called = subprocess.run(
        [
            tool("buf"),
            "curl",
            "--protocol=grpc",
            "--http2-prior-knowledge",
            "--header",
            f"x-api-key: {system.api_key}",
            "--data",
            '{"seat_count": 2, "display_name": "by buf curl"}',
            f"http://{system.gateway}/shikoku.v1.LobbyService/CreateTable",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert called.returncode == 0, called.stderr
    answer = json.loads(called.stdout)
    assert answer["table"]["displayName"] == "by buf curl"
    assert answer["hostToken"].startswith(answer["table"]["tableId"] + "~")
