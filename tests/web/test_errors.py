"""gRPC statuses as Connect errors (gateway/web/errors.py), in process: every code keeps its
meaning and HTTP status, and every detail its bytes, with its JSON alongside."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import grpc
import pytest
from connectrpc._protocol import ConnectWireError
from connectrpc.code import Code
from google.protobuf import any_pb2, struct_pb2
from google.rpc import error_details_pb2, status_pb2

from gateway.web.errors import connect_error, refusal, retry_after_seconds
from infra.grpc_errors import to_status
from kernel.rejection import Kind, Rejected
from tests.web.wire import error_info

HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    # Connect's own mapping: failures of the server, not of the request.
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.DATA_LOSS: 500,
}


def wire(status: status_pb2.Status) -> tuple[int, dict[str, object]]:
    error = ConnectWireError.from_exception(connect_error(status))
    return error.to_http_status().code, json.loads(error.to_json_bytes())


def test_the_table_names_every_grpc_code() -> None:
    assert set(HTTP_STATUS) == set(grpc.StatusCode) - {grpc.StatusCode.OK}


@pytest.mark.parametrize("code", sorted(HTTP_STATUS, key=str))
def test_every_grpc_code_becomes_the_connect_code_of_the_same_meaning(
    code: grpc.StatusCode,
) -> None:
    http, document = wire(status_pb2.Status(code=code.value[0], message="m"))
    expected = "canceled" if code == grpc.StatusCode.CANCELLED else code.name.lower()
    assert document == {"code": expected, "message": "m"}
    assert Code(expected) == connect_error(status_pb2.Status(code=code.value[0])).code
    assert http == HTTP_STATUS[code]


def test_the_gateways_details_pass_intact_and_readable() -> None:
    rejection = Rejected(
        "RATE_LIMITED",
        "slow down",
        Kind.RESOURCE_EXHAUSTED,
        {"burst": 5},
        retry_after=timedelta(seconds=1.25),
    )
    status = status_pb2.Status.FromString(to_status(rejection).trailing_metadata[0][1])
    http, document = wire(status)
    assert http == 429
    details = document["details"]
    assert isinstance(details, list)
    assert [d["type"] for d in details] == ["google.rpc.ErrorInfo", "google.rpc.RetryInfo"]
    for sent, detail in zip(status.details, details, strict=True):
        assert base64.b64decode(detail["value"] + "==") == sent.value
    assert error_info(document)["metadata"] == {"burst": "5"}
    assert details[1]["debug"] == {"retryDelay": "1.250s"}
    assert retry_after_seconds(status) == 2


def test_a_detail_of_a_type_we_do_not_describe_still_goes_out_as_bytes() -> None:
    packed = any_pb2.Any()
    packed.Pack(struct_pb2.Value(string_value="x"))
    _, document = wire(status_pb2.Status(code=9, message="m", details=[packed]))
    details = document["details"]
    assert isinstance(details, list) and len(details) == 1
    detail = details[0]
    assert detail["type"] == "google.protobuf.Value"
    assert base64.b64decode(detail["value"] + "==") == packed.value
    assert "debug" not in detail


def test_a_detail_that_does_not_decode_as_its_type_still_goes_out_as_bytes() -> None:
    garbled = any_pb2.Any(type_url="type.googleapis.com/google.rpc.ErrorInfo", value=b"\xff\xff")
    _, document = wire(status_pb2.Status(code=9, message="m", details=[garbled]))
    details = document["details"]
    assert isinstance(details, list)
    assert details == [{"type": "google.rpc.ErrorInfo", "value": "//8"}]


def test_our_own_refusal_names_the_field_for_malformed_input() -> None:
    error = refusal(grpc.StatusCode.INVALID_ARGUMENT, "INVALID_JSON", "no", field="")
    assert error.code == Code.INVALID_ARGUMENT
    info, bad = error.details
    assert error_details_pb2.ErrorInfo.FromString(info.message_bytes).reason == "INVALID_JSON"
    violation = error_details_pb2.BadRequest.FromString(bad.message_bytes).field_violations[0]
    assert violation.reason == "INVALID_JSON"
    assert len(refusal(grpc.StatusCode.UNAVAILABLE, "SERVER_BUSY", "m").details) == 1
