"""Players and hosts: a display name and a credential, event-sourced like tables.

A credential is `<player id>~<secret>`; only its SHA-256 hash is kept. It expires (30 days by
default) and its holder may revoke it. Hosts (tournament directors) are players with the host
role: they create tournaments and administer their tables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce
from typing import Any

from kernel.rejection import Kind, Rejected

CREDENTIAL_DAYS = 30
ROLES = ("player", "host")
MAX_NAME = 40

PlayerEvent = tuple[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Player:
    player_id: str = ""
    display_name: str = ""
    role: str = "player"
    credential_hash: str = ""
    expires_at_ms: int = 0
    revoked: bool = False

    @property
    def exists(self) -> bool:
        return bool(self.player_id)

    def accepts(self, credential_hash: str, now_ms: int) -> bool:
        return (
            self.exists
            and not self.revoked
            and credential_hash == self.credential_hash
            and now_ms < self.expires_at_ms
        )


def evolve(player: Player, event: PlayerEvent) -> Player:
    kind, data = event
    match kind:
        case "PlayerRegistered":
            return Player(
                player_id=data["player_id"],
                display_name=data["display_name"],
                role=data["role"],
                credential_hash=data["credential_hash"],
                expires_at_ms=data["expires_at_ms"],
            )
        case "CredentialRevoked":
            return dataclasses.replace(player, revoked=True)
    raise ValueError(f"unknown player event {kind}")


def fold(events: Iterable[PlayerEvent]) -> Player:
    return reduce(evolve, events, Player())


def register(
    player_id: str, display_name: str, role: str, credential_hash: str, now_ms: int
) -> list[PlayerEvent]:
    name = display_name.strip()
    if not name or len(name) > MAX_NAME:
        raise Rejected(
            "INVALID_DISPLAY_NAME",
            f"a display name has 1 to {MAX_NAME} characters",
            Kind.INVALID_ARGUMENT,
            {"field": "display_name"},
        )
    if role not in ROLES:
        raise Rejected(
            "INVALID_ROLE", f"a role is one of {ROLES}", Kind.INVALID_ARGUMENT, {"field": "role"}
        )
    expires = now_ms + CREDENTIAL_DAYS * 24 * 3600 * 1000
    return [
        (
            "PlayerRegistered",
            {
                "player_id": player_id,
                "display_name": name,
                "role": role,
                "credential_hash": credential_hash,
                "expires_at_ms": expires,
            },
        )
    ]


def revoke(player: Player) -> list[PlayerEvent]:
    if player.revoked:
        raise Rejected("ALREADY_REVOKED", "the credential was already revoked")
    return [("CredentialRevoked", {})]
