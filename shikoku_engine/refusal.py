"""The engine's refusal: the rules' rejection, as the service would send it."""

from __future__ import annotations

from kernel.rejection import Rejected


class Refused(Exception):
    """The rules refused a command (or a game's set-up): nothing was applied.

    `reason` is the machine-readable reason the service puts in its ErrorInfo (NOT_YOUR_TURN,
    ROUTE_NOT_CONNECTED, ...: docs/api.md's reason table), `code` the name of the gRPC status
    it would answer with (FAILED_PRECONDITION, INVALID_ARGUMENT, ...), `details` the
    ErrorInfo's metadata and `message` its sentence."""

    def __init__(self, reason: str, code: str, message: str, details: dict[str, str]) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.code = code
        self.message = message
        self.details = details

    @classmethod
    def of(cls, rejection: Rejected) -> Refused:
        return cls(
            rejection.reason, rejection.kind.value, rejection.message, dict(rejection.details)
        )
