"""Rejections as gRPC statuses with google.rpc details, and back: an ErrorInfo always, a
BadRequest naming the field for malformed input, a RetryInfo when the caller should wait.

The status is where a refusal turns into trailing metadata, so its message and metadata are held
to their byte limits here once more (`kernel.rejection.bounded`), whatever built the refusal."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from infra.grpc_types import Context
from kernel.rejection import MAX_DETAIL_BYTES, MAX_MESSAGE_BYTES, Kind, Rejected, bounded

DOMAIN = "shikoku.1889"

Metadata = tuple[tuple[str, str | bytes], ...]

_CODES: dict[Kind, grpc.StatusCode] = {kind: grpc.StatusCode[kind.value] for kind in Kind}


def to_status(rejection: Rejected) -> grpc.Status:
    message = bounded(rejection.message, MAX_MESSAGE_BYTES)
    metadata = {key: bounded(value, MAX_DETAIL_BYTES) for key, value in rejection.details.items()}
    info = error_details_pb2.ErrorInfo(reason=rejection.reason, domain=DOMAIN, metadata=metadata)
    details = [_packed(info)]
    if rejection.kind == Kind.INVALID_ARGUMENT:
        violation = error_details_pb2.BadRequest.FieldViolation(
            field=metadata.get("field", ""),
            description=message,
            reason=rejection.reason,
        )
        details.append(_packed(error_details_pb2.BadRequest(field_violations=[violation])))
    if rejection.retry_after is not None:
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromTimedelta(rejection.retry_after)
        details.append(_packed(retry))
    code = _CODES[rejection.kind]
    status = status_pb2.Status(code=getattr(code_pb2, code.name), message=message, details=details)
    return cast(grpc.Status, rpc_status.to_status(status))


def _packed(message: Message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


async def abort(context: Context, rejection: Rejected) -> None:
    """Ends the call with the rejection's status (raises, as context.abort does)."""
    await context.abort_with_status(to_status(rejection))


def from_rpc_error(error: grpc.aio.AioRpcError | grpc.RpcError) -> Rejected | None:
    """The Rejected carried by an upstream error (its ErrorInfo, and its RetryInfo's delay), so
    that a service can pass it on intact."""
    status = rich_status(error)
    if status is None:
        return None
    info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
    found_info = found_retry = False
    for detail in status.details:
        if not found_info and detail.Unpack(info):
            found_info = True
        elif not found_retry and detail.Unpack(retry):
            found_retry = True
    if not found_info:
        return None
    name = error.code().name
    kind = Kind(name) if name in Kind.__members__ else Kind.FAILED_PRECONDITION
    return Rejected(
        info.reason,
        status.message,
        kind,
        dict(info.metadata),
        retry.retry_delay.ToTimedelta() if found_retry else None,
    )


def rich_status(error: grpc.aio.AioRpcError | grpc.RpcError) -> status_pb2.Status | None:
    """The google.rpc.Status a failed call's trailers carry, if the server sent one."""
    for key, value in cast(Metadata, error.trailing_metadata() or ()):
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            return status_pb2.Status.FromString(value)
    return None


def reason_in(trailing_metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """Our reason code (the ErrorInfo's) in a call's trailers, or "" when they carry none."""
    for key, value in trailing_metadata or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            info = error_details_pb2.ErrorInfo()
            for detail in status_pb2.Status.FromString(value).details:
                if detail.Unpack(info):
                    return str(info.reason)
    return ""
