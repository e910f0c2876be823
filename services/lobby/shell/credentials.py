"""Bearer credentials: random, shown once, stored as hashes. A credential names its table so
the lobby knows which table's log to check it against."""

from __future__ import annotations

import hashlib
import secrets

SEPARATOR = "~"


def new_credential(table_id: str) -> str:
    return f"{table_id}{SEPARATOR}{secrets.token_urlsafe(24)}"


def credential_hash(credential: str) -> str:
    return hashlib.sha256(credential.encode()).hexdigest()


def table_of(credential: str) -> str | None:
    table_id, separator, secret = credential.partition(SEPARATOR)
    return table_id if separator and table_id and secret else None
