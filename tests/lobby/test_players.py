"""Registered players' credentials: they expire, can be revoked, and are checked by hash."""

from __future__ import annotations

import pytest
import redis.asyncio

from infra.eventstore import EventStore
from kernel.rejection import Rejected
from services.lobby.domain import players
from services.lobby.shell import accounts
from services.lobby.shell.accounts import PlayerRepository, identify
from services.lobby.shell.credentials import credential_hash

DAY_MS = 24 * 3600 * 1000


def registered(now_ms: int = 0) -> players.Player:
    return players.fold(players.register("p-1", "Alice", "player", "hash", now_ms))


def test_a_credential_lasts_its_term_and_no_longer() -> None:
    alice = registered(now_ms=1_000)
    last_moment = 1_000 + players.CREDENTIAL_DAYS * DAY_MS - 1
    assert alice.accepts("hash", last_moment)
    assert not alice.accepts("hash", last_moment + 1)
    assert not alice.accepts("other hash", 1_000)


def test_a_revoked_credential_is_refused_and_cannot_be_revoked_twice() -> None:
    alice = registered()
    revoked = players.fold(
        [*players.register("p-1", "Alice", "player", "hash", 0), *players.revoke(alice)]
    )
    assert not revoked.accepts("hash", 1)
    with pytest.raises(Rejected) as refused:
        players.revoke(revoked)
    assert refused.value.reason == "ALREADY_REVOKED"


@pytest.mark.parametrize(("name", "role"), [("", "player"), ("x" * 41, "player"), ("Bo", "admin")])
def test_bad_registrations_are_refused(name: str, role: str) -> None:
    with pytest.raises(Rejected) as refused:
        players.register("p-1", name, role, "hash", 0)
    assert refused.value.reason in ("INVALID_DISPLAY_NAME", "INVALID_ROLE")


class NoTables:
    async def load(self, table_id: str) -> object:
        raise AssertionError("a player's credential needs no table here")


async def test_an_expired_credential_is_refused_by_the_lobby(
    redis_client: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = PlayerRepository(EventStore(redis_client, "player"))
    player, credential = await repo.register("Alice", "player")
    assert player.credential_hash == credential_hash(credential)
    caller = await identify(credential, NoTables(), repo)  # type: ignore[arg-type]
    assert caller.player == player
    later = player.expires_at_ms
    monkeypatch.setattr(accounts, "now_ms", lambda: later)
    with pytest.raises(Rejected) as refused:
        await identify(credential, NoTables(), repo)  # type: ignore[arg-type]
    assert refused.value.reason == "CREDENTIAL_EXPIRED_OR_REVOKED"
    with pytest.raises(Rejected) as forged:
        await identify(f"{player.player_id}~not-the-secret", NoTables(), repo)  # type: ignore[arg-type]
    assert forged.value.reason == "INVALID_CREDENTIAL"
