"""The long-characters tier of the fuzzing through the web entrypoint (tests/e2e/long_strings.py):
every string field of every public request at its length limits in 1- to 4-byte characters, as
Connect JSON (streams enveloped, as fetch sends them), and the fields once found failing as
gRPC-Web too. Never an HTTP 5xx; every refusal a Connect error with our reason and a message of
at most 1 KiB."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format
from google.rpc import error_details_pb2

from tests.e2e import long_strings
from tests.e2e.api import Client, System
from tests.web.wire import (
    END_STREAM,
    api_headers,
    connect_json,
    connection,
    envelope,
    error_info,
    grpc_web,
    read_frame,
)

pytestmark = pytest.mark.e2e

FIELDS = long_strings.every_string_field()
GRPC_OK = 0
GRPC_UNKNOWN, GRPC_INTERNAL = 2, 13


@pytest.fixture(scope="module")
def world(web_api: System) -> Iterator[long_strings.World]:
    client = Client(web_api)
    yield long_strings.make_world(client)
    client.channel.close()
    client.redis.close()


def connect_problem(error: dict[str, Any], status: int) -> str | None:
    """What is wrong with a Connect error document, or None."""
    if status >= 500:
        return f"HTTP {status}: {json.dumps(error)[:200]}"
    message = str(error.get("message", ""))
    try:
        reason = error_info(error)["reason"]
    except (StopIteration, KeyError):
        reason = ""
    if not reason:
        return f"HTTP {status} {error.get('code')} without an ErrorInfo reason: {message[:200]}"
    if len(message.encode()) > long_strings.MAX_ERROR_MESSAGE_BYTES:
        return f"HTTP {status} {reason} with a message of {len(message.encode())} bytes"
    return None


def connect_json_problem(
    web_api: System, world: long_strings.World, case: long_strings.Case
) -> str | None:
    method = case.field.method
    where = f"{method.containing_service.name}/{method.name}"
    document = json_format.MessageToDict(world.request(case))
    headers = api_headers(web_api.api_key, world.credential(method))
    conn = connection(web_api.web)
    try:
        if not method.server_streaming:
            answer = connect_json(conn, where, document, headers)
            if answer.status == 200:
                return None
            return connect_problem(answer.json(), answer.status)
        sent = {**headers, "content-type": "application/connect+json"}
        conn.request(
            "POST",
            f"/shikoku.v1.{where}",
            body=envelope(json.dumps(document).encode()),
            headers=sent,
        )
        response = conn.getresponse()
        if response.status != 200:
            return connect_problem(json.loads(response.read() or b"{}"), response.status)
        flags, payload = read_frame(response)
        end = json.loads(payload)
        if not flags & END_STREAM or "error" not in end:
            return None  # a message of the stream, or its end without an error
        return connect_problem(end["error"], 200)
    finally:
        conn.close()


def grpc_web_problem(
    web_api: System, world: long_strings.World, case: long_strings.Case
) -> str | None:
    method = case.field.method
    where = f"{method.containing_service.name}/{method.name}"
    headers = api_headers(web_api.api_key, world.credential(method))
    answer = grpc_web(connection(web_api.web), where, world.request(case), headers)
    if answer.status >= 500:
        return f"HTTP {answer.status}"
    code = answer.grpc_status
    if code == GRPC_OK:
        return None
    if code in (GRPC_UNKNOWN, GRPC_INTERNAL):
        return f"grpc-status {code}"
    status = answer.rich_status()
    info = error_details_pb2.ErrorInfo()
    if not any(detail.Unpack(info) for detail in status.details) or not info.reason:
        return f"grpc-status {code} without an ErrorInfo reason"
    if len(status.message.encode()) > long_strings.MAX_ERROR_MESSAGE_BYTES:
        return f"grpc-status {code} with a message of {len(status.message.encode())} bytes"
    return None


@pytest.mark.parametrize("field", FIELDS, ids=[f"{f.method.name}.{f.name}" for f in FIELDS])
def test_long_characters_are_refused_as_connect_errors(
    web_api: System, world: long_strings.World, field: long_strings.StringField
) -> None:
    problems = {
        case.id: problem
        for case in long_strings.cases_of(field)
        if (problem := connect_json_problem(web_api, world, case)) is not None
    }
    assert not [line for line in web_api.output if " exited (" in line], "a process died"
    assert not problems, problems


NAMED = [f for f in FIELDS if (f.method.name, f.name) in long_strings.ALWAYS_FULL]


@pytest.mark.parametrize("field", NAMED, ids=[f"{f.method.name}.{f.name}" for f in NAMED])
def test_long_characters_are_refused_over_grpc_web(
    web_api: System, world: long_strings.World, field: long_strings.StringField
) -> None:
    assert len(NAMED) == len(long_strings.ALWAYS_FULL)
    problems = {
        case.id: problem
        for case in long_strings.cases_of(field)
        if (problem := grpc_web_problem(web_api, world, case)) is not None
    }
    assert not problems, problems
