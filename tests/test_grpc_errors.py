"""A rejection survives the trip through a gRPC status and back: reason, kind, metadata and the
retry delay, which a service passing an upstream refusal on must not lose."""

from __future__ import annotations

import ast
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from infra.grpc_errors import from_rpc_error, to_status
from kernel.rejection import Kind, Rejected


class ReceivedError(grpc.RpcError):
    """What a client holds after a call ended with `status`."""

    def __init__(self, code: grpc.StatusCode, trailing_metadata: Any) -> None:
        self._code = code
        self._trailing_metadata = trailing_metadata

    def code(self) -> grpc.StatusCode:
        return self._code

    def trailing_metadata(self) -> Any:
        return self._trailing_metadata


def round_trip(rejection: Rejected) -> Rejected | None:
    status = to_status(rejection)
    return from_rpc_error(ReceivedError(status.code, status.trailing_metadata))


def test_reason_kind_metadata_and_retry_delay_come_back() -> None:
    sent = Rejected(
        "RATE_LIMITED",
        "too many calls",
        Kind.RESOURCE_EXHAUSTED,
        {"burst": 5},
        retry_after=timedelta(milliseconds=250),
    )
    received = round_trip(sent)
    assert received is not None
    assert (received.reason, received.kind, received.details, received.message) == (
        "RATE_LIMITED",
        Kind.RESOURCE_EXHAUSTED,
        {"burst": "5"},
        "too many calls",
    )
    assert received.retry_after == timedelta(milliseconds=250)


def test_no_retry_delay_when_none_was_sent() -> None:
    received = round_trip(Rejected("NOT_YOUR_TURN", "wait", details={"seat": 2}))
    assert received is not None and received.retry_after is None
    assert received.kind == Kind.FAILED_PRECONDITION


def test_an_error_without_details_is_not_a_rejection() -> None:
    assert from_rpc_error(ReceivedError(grpc.StatusCode.INTERNAL, ())) is None


def details_of(rejection: Rejected) -> list[Any]:
    status = to_status(rejection)
    packed = status_pb2.Status.FromString(dict(status.trailing_metadata)["grpc-status-details-bin"])
    return list(packed.details)


def test_malformed_input_names_its_field_in_a_bad_request() -> None:
    rejection = Rejected("MISSING_HEX", "no hex", Kind.INVALID_ARGUMENT, {"field": "hex"})
    bad_request = error_details_pb2.BadRequest()
    assert details_of(rejection)[1].Unpack(bad_request)
    (violation,) = bad_request.field_violations
    assert (violation.field, violation.reason, violation.description) == (
        "hex",
        "MISSING_HEX",
        "no hex",
    )
    # A well-formed command refused by the rules is no bad request.
    assert len(details_of(Rejected("NOT_YOUR_TURN", "wait"))) == 1


def test_every_malformed_input_refusal_in_the_code_names_its_field() -> None:
    """Each Rejected(..., Kind.INVALID_ARGUMENT, ...) written in the services carries a
    "field" entry, so its BadRequest says which field to fix."""
    root = Path(__file__).resolve().parents[1]
    unnamed = []
    for package in ("services", "gateway", "shikoku"):
        for path in (root / package).rglob("*.py"):
            if {"v1", "internal"} & set(path.parts):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Rejected"):
                    continue
                arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
                malformed = any(
                    isinstance(a, ast.Attribute) and a.attr == "INVALID_ARGUMENT" for a in arguments
                )
                named = any(
                    isinstance(a, ast.Dict)
                    and any(isinstance(k, ast.Constant) and k.value == "field" for k in a.keys)
                    for a in arguments
                )
                if malformed and not named:
                    unnamed.append(f"{path.relative_to(root)}:{node.lineno}")
    assert unnamed == []
