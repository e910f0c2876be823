"""The server's rejections as one exception type, read from the gRPC status details."""

from __future__ import annotations

from typing import cast

import grpc
from google.rpc import error_details_pb2, status_pb2

STATUS_DETAILS = "grpc-status-details-bin"


class ShikokuError(Exception):
    """A call the server refused (or that could not reach it).

    `code` is the gRPC status code, `reason` the stable google.rpc.ErrorInfo reason (e.g.
    "NOT_YOUR_TURN"; empty when the status carried none), `metadata` the ErrorInfo's details
    (what was wrong), `retry_delay` the seconds a RetryInfo asked to wait (None without one),
    `field_violations` the malformed request fields (a BadRequest's field → description).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: str = "",
        metadata: dict[str, str] | None = None,
        retry_delay: float | None = None,
        field_violations: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{code.name} {reason or '-'}: {message}")
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.retry_delay = retry_delay
        self.field_violations = dict(field_violations or {})

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> ShikokuError:
        call = cast(grpc.Call, error)
        code = call.code() if hasattr(call, "code") else grpc.StatusCode.UNKNOWN
        message = (call.details() if hasattr(call, "details") else None) or str(error)
        reason, metadata, retry_delay, violations = "", {}, None, {}
        trailing = call.trailing_metadata() if hasattr(call, "trailing_metadata") else None
        for key, value in trailing or ():
            if key != STATUS_DETAILS or not isinstance(value, bytes):
                continue
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                retry = error_details_pb2.RetryInfo()
                bad_request = error_details_pb2.BadRequest()
                if detail.Unpack(info):
                    reason, metadata = str(info.reason), dict(info.metadata)
                elif detail.Unpack(retry):
                    retry_delay = float(retry.retry_delay.ToTimedelta().total_seconds())
                elif detail.Unpack(bad_request):
                    violations = {v.field: v.description for v in bad_request.field_violations}
        return cls(code, message, reason, metadata, retry_delay, violations)
