"""Reading the bearer credential from call metadata."""

from __future__ import annotations

from collections.abc import Iterable

from kernel.rejection import Kind, Rejected

AUTHORIZATION = "authorization"


def optional_bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The bearer credential, or "" when the call carries none."""
    for key, value in metadata or ():
        if key.lower() == AUTHORIZATION and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return ""


MISSING_CREDENTIAL = Rejected(
    "MISSING_CREDENTIAL",
    "this call needs `authorization: Bearer <token>` metadata",
    Kind.UNAUTHENTICATED,
)


def bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    if token := optional_bearer_token(metadata):
        return token
    raise MISSING_CREDENTIAL
