"""gRPC statuses as HTTP responses: the HTTP status, and the google.rpc.Status as JSON."""

from __future__ import annotations

import json
import math
from typing import Any

import grpc
from google.protobuf import any_pb2, json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2

from infra.grpc_errors import DOMAIN, rich_status

_HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.CANCELLED: 499,  # not in http.HTTPStatus: nginx's "client closed request"
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


def http_status(code: grpc.StatusCode) -> int:
    return _HTTP_STATUS.get(code, 500)


def status_of(error: grpc.aio.AioRpcError) -> status_pb2.Status:
    """The rich status of a failed call: from `grpc-status-details-bin` when the server sent
    one, else just its code and message."""
    if (status := rich_status(error)) is not None:
        return status
    return status_pb2.Status(code=error.code().value[0], message=error.details() or "")


def bridge_status(
    code: grpc.StatusCode, message: str, reason: str, metadata: dict[str, str] | None = None
) -> status_pb2.Status:
    """A refusal of the bridge's own, shaped like the gateway's (ErrorInfo in the details)."""
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata or {})
    packed = any_pb2.Any()
    packed.Pack(info)
    return status_pb2.Status(code=getattr(code_pb2, code.name), message=message, details=[packed])


def status_document(status: status_pb2.Status) -> dict[str, Any]:
    """The Status in the JSON mapping; a detail of a type this process does not know is
    left out rather than failing the whole answer."""
    details: list[Any] = []
    for detail in status.details:
        try:
            details.append(json_format.MessageToDict(detail))
        except TypeError:
            continue
    document: dict[str, Any] = {"code": status.code, "message": status.message}
    if details:
        document["details"] = details
    return document


def status_json(status: status_pb2.Status) -> bytes:
    return json.dumps(status_document(status), separators=(",", ":")).encode()


def retry_after_seconds(status: status_pb2.Status) -> int | None:
    """Whole seconds from the RetryInfo detail, rounded up (Retry-After has no fractions)."""
    for detail in status.details:
        info = error_details_pb2.RetryInfo()
        if detail.Is(info.DESCRIPTOR) and detail.Unpack(info):
            delay: float = info.retry_delay.ToTimedelta().total_seconds()
            return max(1, math.ceil(delay))
    return None


def code_of(status: status_pb2.Status) -> grpc.StatusCode:
    return next((c for c in grpc.StatusCode if c.value[0] == status.code), grpc.StatusCode.UNKNOWN)
