"""Bearer credentials and new ids: random, shown once, stored as hashes. A credential names its
table (or player) so the lobby knows which log to check it against.

While a call sent with a `request_id` is answered (`derived_from`), every id and credential it
makes is drawn from a key derived from that request, not from the system's randomness: a retry
of the same request, after a crash or a lost reply, makes the same table, seat or player again,
which the lobby then recognises instead of creating a second one. The key is an HMAC of the
request under the deployment's secret, so nobody without it can predict a credential.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

SEPARATOR = "~"


@dataclass
class _Derivation:
    key: bytes
    drawn: int = 0

    def draw(self, size: int) -> bytes:
        self.drawn += 1
        return hmac.new(self.key, str(self.drawn).encode(), hashlib.sha256).digest()[:size]


_derivation: ContextVar[_Derivation | None] = ContextVar("derivation", default=None)


@contextmanager
def derived_from(key: bytes) -> Iterator[None]:
    """Ids and credentials made inside the block are drawn, in order, from `key`."""
    token = _derivation.set(_Derivation(key))
    try:
        yield
    finally:
        _derivation.reset(token)


def _random(size: int) -> bytes:
    derivation = _derivation.get()
    return derivation.draw(size) if derivation is not None else secrets.token_bytes(size)


def new_id(prefix: str) -> str:
    """`t-3f9a1c2b4d5e`: a new table, player or tournament id."""
    return f"{prefix}{_random(6).hex()}"


def new_credential(table_id: str) -> str:
    secret = base64.urlsafe_b64encode(_random(24)).rstrip(b"=").decode()
    return f"{table_id}{SEPARATOR}{secret}"


def credential_hash(credential: str) -> str:
    return hashlib.sha256(credential.encode()).hexdigest()


def table_of(credential: str) -> str | None:
    table_id, separator, secret = credential.partition(SEPARATOR)
    return table_id if separator and table_id and secret else None
