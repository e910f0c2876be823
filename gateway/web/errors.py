"""gRPC statuses as Connect errors, their google.rpc details intact, and the web entrypoint's own
refusals in the same shape (an ErrorInfo with our reason, a BadRequest for malformed input).

Each detail also goes out with its JSON form (the Connect error's `debug` field), so that a page
using plain `fetch` reads `details[i].debug.reason` without decoding protobuf; Connect clients
decode `value` as usual.

Messages are held to `kernel.rejection.MAX_MESSAGE_BYTES` here as on gRPC, the entrypoint's own
and those passed on alike: an error never repeats a request at any length.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import timedelta

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from google.protobuf import descriptor_pb2, duration_pb2
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from protobuf import Registry
from protobuf.wkt import Any, FileDescriptorSet

from infra.grpc_errors import DOMAIN, rich_status
from kernel.reasons import ReasonCode
from kernel.rejection import MAX_DETAIL_BYTES, MAX_MESSAGE_BYTES, bounded

# gRPC's names, but for the one Connect spells with a single L.
_CODES: dict[grpc.StatusCode, Code] = {
    status: Code.CANCELED if status == grpc.StatusCode.CANCELLED else Code[status.name]
    for status in grpc.StatusCode
    if status != grpc.StatusCode.OK
}
_CODES_BY_NUMBER: dict[int, Code] = {status.value[0]: code for status, code in _CODES.items()}


def _detail_registry() -> Registry:
    """The google.rpc detail types in the Connect library's own protobuf runtime, built from
    the descriptors of the ones we send, so that their JSON can be written."""
    files = descriptor_pb2.FileDescriptorSet()
    for module in (duration_pb2, error_details_pb2):
        proto = files.file.add()
        module.DESCRIPTOR.CopyToProto(proto)
        _copy_json_names(proto.message_type, module.DESCRIPTOR.message_types_by_name)
    return FileDescriptorSet.from_binary(files.SerializeToString()).to_registry()


def _copy_json_names(
    protos: Iterable[descriptor_pb2.DescriptorProto], messages: Mapping[str, Descriptor]
) -> None:
    """CopyToProto leaves out the fields' JSON names, which the JSON writer needs."""
    for proto in protos:
        message = messages[proto.name]
        for field in proto.field:
            field.json_name = message.fields_by_name[field.name].json_name
        _copy_json_names(proto.nested_type, message.nested_types_by_name)


_REGISTRY = _detail_registry()


def _detail(packed_type_url: str, value: bytes) -> ErrorDetail:
    any_message = Any(type_url=packed_type_url, value=value)
    name = packed_type_url.rpartition("/")[2]
    descriptor = _REGISTRY.message(name)
    try:
        message = any_message.unpack(descriptor) if descriptor is not None else None
    except ValueError:  # not a message of its type: passed on as the bytes it is
        message = None
    return ErrorDetail(any_message if message is None else message)


def connect_error(status: status_pb2.Status) -> ConnectError:
    """The status as a Connect error with the same code, message and details."""
    code = _CODES_BY_NUMBER.get(status.code, Code.UNKNOWN)
    details = [_detail(detail.type_url, detail.value) for detail in status.details]
    return ConnectError(code, bounded(status.message, MAX_MESSAGE_BYTES), details)


def status_of(error: grpc.aio.AioRpcError) -> status_pb2.Status:
    """The rich status of a failed call: from `grpc-status-details-bin` when the server sent
    one, else just its code and message."""
    if (status := rich_status(error)) is not None:
        return status
    return status_pb2.Status(code=error.code().value[0], message=error.details() or "")


def refusal(
    code: grpc.StatusCode,
    reason: ReasonCode,
    message: str,
    metadata: dict[str, str] | None = None,
    field: str | None = None,
) -> ConnectError:
    """A refusal of the web entrypoint's own, shaped like the gateway's: an ErrorInfo, and a
    BadRequest naming `field` for malformed input."""
    message = bounded(message, MAX_MESSAGE_BYTES)
    metadata = {key: bounded(value, MAX_DETAIL_BYTES) for key, value in (metadata or {}).items()}
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata)
    details: list[Message] = [info]
    if field is not None:
        violation = error_details_pb2.BadRequest.FieldViolation(
            field=field, description=message, reason=reason
        )
        details.append(error_details_pb2.BadRequest(field_violations=[violation]))
    status = status_pb2.Status(code=code.value[0], message=message)
    for detail in details:
        status.details.add().Pack(detail)
    return connect_error(status)


def retry_after_seconds(status: status_pb2.Status) -> int | None:
    """Whole seconds from the RetryInfo detail, rounded up (Retry-After has no fractions)."""
    for detail in status.details:
        info = error_details_pb2.RetryInfo()
        if detail.Is(info.DESCRIPTOR) and detail.Unpack(info):
            delay: timedelta = info.retry_delay.ToTimedelta()
            return max(1, math.ceil(delay.total_seconds()))
    return None
