"""Fuzzing the public surface: hypothesis-made messages and raw bytes against every public RPC of
the gateway, and raw requests against the browser endpoint. Whatever comes in, the answer is a
specific status (never UNKNOWN or INTERNAL; never an HTTP 5xx), no process dies, and no game's
stream grows from a call that was refused.

A deterministic tier besides (tests/e2e/long_strings.py): every string field of every public
request at its length limits in 1- to 4-byte characters, each refusal a specific status with our
reason and a short message (tests/web/test_long_characters.py sends the same through the web
entrypoint).

`SHIKOKU_FUZZ_EXAMPLES` sets the examples per method (`make soak` runs many more, and the long
strings' full product).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from typing import Any, cast

import grpc
import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.public_api import public_services
from infra.grpc_errors import Metadata, reason_in
from tests.e2e import long_strings
from tests.e2e.api import Client, System

pytestmark = pytest.mark.e2e

EXAMPLES = int(os.environ.get("SHIKOKU_FUZZ_EXAMPLES", "40"))
FORBIDDEN = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}
METHODS: list[MethodDescriptor] = [m for s in public_services() for m in s.methods]
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SCALARS: dict[int, st.SearchStrategy[Any]] = {
    FieldDescriptor.TYPE_STRING: st.one_of(
        st.text(max_size=40), st.text(min_size=100, max_size=5_000), st.sampled_from(["", "t-1"])
    ),
    FieldDescriptor.TYPE_BYTES: st.binary(max_size=64),
    FieldDescriptor.TYPE_BOOL: st.booleans(),
    FieldDescriptor.TYPE_INT32: st.integers(-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: st.integers(-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: st.integers(0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: st.integers(0, 2**64 - 1),
    FieldDescriptor.TYPE_DOUBLE: st.floats(allow_nan=True),
    FieldDescriptor.TYPE_FLOAT: st.floats(allow_nan=True, width=32),
}


def messages(descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Message]:
    """Messages of `descriptor`'s type with some fields set to anything their types allow."""
    cls = GetMessageClass(descriptor)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for field in descriptor.fields:
        nested, enum = field.message_type, field.enum_type
        if nested is not None:
            if depth >= 2 or nested.GetOptions().map_entry:
                continue
            value: st.SearchStrategy[Any] = messages(nested, depth + 1)
        elif enum is not None:
            value = st.integers(-3, len(enum.values) + 3)
        elif field.type in SCALARS:
            value = SCALARS[field.type]
        else:
            continue
        fields[field.name] = st.lists(value, max_size=3) if field.is_repeated else value

    @st.composite
    def build(draw: st.DrawFn) -> Message:
        message = cls()
        for name, strategy in fields.items():
            if draw(st.booleans()):
                value = draw(strategy)
                target = getattr(message, name)
                if isinstance(value, list):
                    for item in value:
                        if isinstance(item, Message):
                            target.add().CopyFrom(item)
                        else:
                            target.append(item)
                elif isinstance(value, Message):
                    target.CopyFrom(value)
                else:
                    setattr(message, name, value)
        return message

    return build()


def _raw(data: bytes) -> bytes:
    return data


def call(system: System, method: MethodDescriptor, payload: bytes, token: str) -> grpc.StatusCode:
    path = f"/{method.containing_service.full_name}/{method.name}"
    metadata: tuple[tuple[str, str | bytes], ...] = (("x-api-key", system.api_key),)
    if token:
        metadata += (("authorization", f"Bearer {token}"),)
    with grpc.insecure_channel(system.gateway) as channel:
        try:
            if method.server_streaming:
                stream = channel.unary_stream(path, _raw, _raw)(
                    payload, metadata=metadata, timeout=1.5
                )
                for _ in stream:
                    break
                stream.cancel()
            else:
                channel.unary_unary(path, _raw, _raw)(payload, metadata=metadata, timeout=5)
        except grpc.RpcError as error:
            code = error.code()
            return code if code != grpc.StatusCode.CANCELLED else grpc.StatusCode.OK
    return grpc.StatusCode.OK


def game_stream_lengths(client: Client) -> dict[bytes, int]:
    keys = list(client.redis.scan_iter(match="game:*:events", count=1_000))
    return {key: int(client.redis.xlen(key)) for key in keys}


@pytest.fixture
def watched(system: System, client: Client) -> Any:
    """Checks, after the test, that every process still runs and no game stream changed."""
    before = game_stream_lengths(client)
    yield
    assert system.process.poll() is None, "shikoku run died"
    # shikoku run restarts a process that dies, saying so: `rules exited (signal 11); restarting…`
    dead = [line for line in system.output if " exited (" in line]
    assert not dead, dead
    assert game_stream_lengths(client) == before


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
@FUZZ
@given(data=st.data())
def test_fuzzed_messages_get_specific_statuses(
    system: System, client: Client, watched: None, method: MethodDescriptor, data: st.DataObject
) -> None:
    message = data.draw(messages(method.input_type))
    token = data.draw(st.sampled_from(["", "t-nothing~forged", "x" * 300]))
    code = call(system, method, message.SerializeToString(), token)
    assert code not in FORBIDDEN, f"{method.name}({message}) answered {code}"


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
@FUZZ
@given(payload=st.binary(max_size=200))
def test_raw_bytes_get_specific_statuses(
    system: System, client: Client, watched: None, method: MethodDescriptor, payload: bytes
) -> None:
    code = call(system, method, payload, "")
    assert code not in FORBIDDEN, f"{method.name}({payload!r}) answered {code}"


def http_status(address: str, request: bytes) -> int | None:
    """The status of the answer to raw `request`; None when the bridge closed without one."""
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        try:
            while len(answer) < 64 and (chunk := conn.recv(4096)):
                answer += chunk
        except TimeoutError:
            return None
    first = answer.split(b"\r\n", 1)[0].split(b" ")
    return int(first[1]) if len(first) > 1 and first[1].isdigit() else None


PATHS = ["/", "/healthz", "/shikoku.v1.LobbyService/ListTables", "/shikoku.v1.GameService/GetState"]


@FUZZ
@given(
    method=st.sampled_from([b"GET", b"POST", b"OPTIONS", b"PUT", b"\x00\xff"]),
    path=st.one_of(st.sampled_from([p.encode() for p in PATHS]), st.binary(max_size=60)),
    headers=st.lists(st.binary(max_size=80), max_size=4),
    body=st.binary(max_size=300),
)
def test_raw_http_gets_no_server_error(
    system: System, watched: None, method: bytes, path: bytes, headers: list[bytes], body: bytes
) -> None:
    request = b"%s %s HTTP/1.1\r\nHost: x\r\n%s\r\n\r\n%s" % (
        method,
        path,
        b"\r\n".join(headers),
        body,
    )
    status = http_status(system.web, request)
    assert status is None or status < 500, f"{request[:120]!r} answered {status}"


@pytest.fixture(scope="module")
def world(system: System) -> Iterator[long_strings.World]:
    client = Client(system)
    yield long_strings.make_world(client)
    client.channel.close()
    client.redis.close()


def refusal_problem(
    channel: grpc.Channel, system: System, world: long_strings.World, case: long_strings.Case
) -> str | None:
    """What is wrong with the gateway's answer to the case, or None."""
    method = case.field.method
    path = f"/{method.containing_service.full_name}/{method.name}"
    metadata: tuple[tuple[str, str], ...] = (("x-api-key", system.api_key),)
    if token := world.credential(method):
        metadata += (("authorization", f"Bearer {token}"),)
    payload = world.request(case).SerializeToString()
    try:
        if method.server_streaming:
            stream = channel.unary_stream(path, _raw, _raw)(payload, metadata=metadata, timeout=5)
            for _ in stream:
                break
            stream.cancel()
        else:
            channel.unary_unary(path, _raw, _raw)(payload, metadata=metadata, timeout=10)
    except grpc.RpcError as error:
        code, message = error.code(), error.details() or ""
        if code == grpc.StatusCode.CANCELLED:
            return None  # ours, after the stream's first message
        if code in FORBIDDEN:
            return f"{code.name}: {message[:200]}"
        if not reason_in(cast(Metadata, error.trailing_metadata())):
            return f"{code.name} without an ErrorInfo reason: {message[:200]}"
        if len(message.encode()) > long_strings.MAX_ERROR_MESSAGE_BYTES:
            return f"{code.name} with a message of {len(message.encode())} bytes"
    return None


LONG_FIELDS = long_strings.every_string_field()


@pytest.mark.parametrize(
    "field", LONG_FIELDS, ids=[f"{f.method.name}.{f.name}" for f in LONG_FIELDS]
)
def test_long_characters_get_specific_short_refusals(
    system: System, world: long_strings.World, field: long_strings.StringField
) -> None:
    """The field at its limits in characters of every UTF-8 width: never UNKNOWN or INTERNAL,
    every refusal with our reason and a message of at most 1 KiB."""
    problems: dict[str, str] = {}
    with grpc.insecure_channel(system.gateway) as channel:
        for case in long_strings.cases_of(field):
            if (problem := refusal_problem(channel, system, world, case)) is not None:
                problems[case.id] = problem
    assert system.process.poll() is None, "shikoku run died"
    assert not [line for line in system.output if " exited (" in line], "a process died"
    assert not problems, problems
