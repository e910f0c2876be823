"""The server's rejections as exceptions, read from the gRPC status details: `ShikokuError`, raised
as the class of its reason's family (`AccessError`, `LobbyError`, `RequestError`, `RuleError`,
`SpectatingError`, `ServiceError`), so a client may catch a whole family or match `.reason`."""

from __future__ import annotations

from typing import cast

import grpc
from google.rpc import error_details_pb2, status_pb2

from shikoku_sdk.reasons import FAMILY, Family, Reason

STATUS_DETAILS = "grpc-status-details-bin"


class ShikokuError(Exception):
    """A call the server refused (or that could not reach it).

    `code` is the gRPC status code, `reason` the stable google.rpc.ErrorInfo reason as a
    `Reason` (equal to its string: `Reason.NOT_YOUR_TURN == "NOT_YOUR_TURN"`; a reason newer
    than this SDK stays a plain string, and it is "" when the status carried none), `metadata`
    the ErrorInfo's details (what was wrong), `retry_delay` the seconds a RetryInfo asked to
    wait (None without one), `field_violations` the malformed request fields (a BadRequest's
    field → description).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: Reason | str = "",
        metadata: dict[str, str] | None = None,
        retry_delay: float | None = None,
        field_violations: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{code.name} {reason or '-'}: {message}")
        self.code = code
        self.message = message
        self.reason: Reason | str = Reason(reason) if reason in _REASONS else reason
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
        raised = _CLASSES.get(FAMILY[Reason(reason)], cls) if reason in _REASONS else cls
        return raised(code, message, reason, metadata, retry_delay, violations)


class AccessError(ShikokuError):
    """Authentication and permission: who the caller is, and what it may do."""


class LobbyError(ShikokuError):
    """Tables, seats, tournaments and chat."""


class RequestError(ShikokuError):
    """A malformed command or request, whatever the state of the game."""


class RuleError(ShikokuError):
    """The rules of the game refuse the command in this position."""


class SpectatingError(ShikokuError):
    """What a spectator may see."""


class ServiceError(ShikokuError):
    """Limits and infrastructure: the call may be retried (after `retry_delay`, when given)."""


_REASONS = frozenset(Reason)
_CLASSES: dict[Family, type[ShikokuError]] = {
    Family.ACCESS: AccessError,
    Family.LOBBY: LobbyError,
    Family.REQUEST: RequestError,
    Family.RULES: RuleError,
    Family.SPECTATING: SpectatingError,
    Family.SERVICE: ServiceError,
}
