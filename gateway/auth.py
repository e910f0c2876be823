"""Who may call what, checked in one place for every public method.

Each call must carry a valid API key (the client application); then the method's rule says
what the caller's own credential (`authorization: Bearer <token>`) must prove about the table,
game or tournament the request names. The lobby, which holds the credentials, answers that
with the same permission rules its own handlers apply. What the check grants (the caller's seat,
how far behind a spectator watches) is handed to the method through `current_grant()`.

A grant is remembered per credential, permission and resource, so a seat playing at machine
speed costs the lobby one check, not one per call. The lobby announces every change of a table
(a seat taken, left or replaced, the table started or ended) and every revoked credential
(`infra.announcements.GRANTS_CHANGED`), and a gateway following the announcements
(`Authorization.follow_grant_changes`) forgets at once every grant that depended on it: on the
table or its game, or held by a credential of that table or player. While it follows them a
grant is kept up to `SHIKOKU_GRANT_FOLLOWED_SECONDS` (default 300; the backstop for an
announcement missed); while it does not (Redis lost), up to `SHIKOKU_GRANT_SECONDS` (default 5)
after its check, as with no announcements at all. A registered player's grant also ends when
the credential does (`Grant.valid_until_ms`).

A credential the lobby refuses as UNAUTHENTICATED (unknown, expired or revoked: no such
credential can become valid again) is remembered, with the lobby's refusal, for
`SHIKOKU_UNKNOWN_CREDENTIAL_SECONDS` (default 5; at most `SHIKOKU_UNKNOWN_CREDENTIALS_KEPT`,
10,000): a caller repeating an invented token is answered by the gateway, not the lobby. Other
refusals (not the caller's seat, not the host) are never remembered: they may change.
"""

from __future__ import annotations

import hashlib
import math
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import grpc
from cachetools import TTLCache
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from gateway.api_keys import ApiKeys, api_key_from
from infra import calls
from infra.announcements import GRANTS_CHANGED, follow
from infra.call_chain import Admission
from infra.grpc_errors import from_rpc_error
from infra.grpc_types import Context
from infra.metadata import optional_bearer_token
from kernel.rejection import Kind, Rejected, reason_code
from shikoku.internal.v1 import lobby_pb2 as internal_lobby_pb2
from shikoku.internal.v1 import lobby_pb2_grpc as internal_lobby_pb2_grpc
from shikoku.v1 import lobby_pb2

AUTHORIZE_SECONDS = 5.0
# The defaults of the gateway's settings (gateway/settings.py).
GRANT_SECONDS = 5.0
GRANT_FOLLOWED_SECONDS = 300.0
GRANTS_KEPT = 100_000
UNKNOWN_SECONDS = 5.0
UNKNOWN_KEPT = 10_000
#: How long a credential the lobby accepted keeps a rate-limit bucket of its own on this
#: gateway after its last acceptance (at most GRANTS_KEPT of them): longer than its grants, so
#: that a player's call after its grants lapse is not charged to its key's bucket, which
#: someone flooding the key with made-up tokens may have emptied.
PROVEN_SECONDS = 600.0

Permission = internal_lobby_pb2.Permission
SIGNED_IN = internal_lobby_pb2.PERMISSION_SIGNED_IN
REGISTERED_HOST = internal_lobby_pb2.PERMISSION_REGISTERED_HOST
HOST_TABLE = internal_lobby_pb2.PERMISSION_HOST_TABLE
HOLD_SEAT = internal_lobby_pb2.PERMISSION_HOLD_SEAT
ACT_IN_GAME = internal_lobby_pb2.PERMISSION_ACT_IN_GAME
WATCH_GAME = internal_lobby_pb2.PERMISSION_WATCH_GAME
HOST_TOURNAMENT = internal_lobby_pb2.PERMISSION_HOST_TOURNAMENT


@dataclass(frozen=True, slots=True)
class Rule:
    """What a method's caller must prove. `permission` None: only the API key (the method
    may still use a credential the caller offers, e.g. a registered player joining a table).
    `resource` names the request field holding the table, game or tournament id; `optional`
    lets the method run without one, and then without the permission."""

    permission: Permission.ValueType | None = None
    resource: str = ""
    optional: bool = False


ANYONE = Rule()

RULES: dict[str, Rule] = {
    "/shikoku.v1.LobbyService/RegisterPlayer": ANYONE,
    "/shikoku.v1.LobbyService/RevokeCredential": Rule(SIGNED_IN),
    "/shikoku.v1.LobbyService/ReplaceSeat": Rule(HOST_TABLE, "table_id"),
    "/shikoku.v1.LobbyService/CreateTournament": Rule(REGISTERED_HOST),
    "/shikoku.v1.LobbyService/StartRound": Rule(HOST_TOURNAMENT, "tournament_id"),
    "/shikoku.v1.LobbyService/GetTournament": ANYONE,
    "/shikoku.v1.LobbyService/ExportStandings": ANYONE,
    "/shikoku.v1.LobbyService/CreateTable": ANYONE,
    "/shikoku.v1.LobbyService/GetTable": ANYONE,
    "/shikoku.v1.LobbyService/ListTables": ANYONE,
    "/shikoku.v1.LobbyService/JoinTable": ANYONE,
    "/shikoku.v1.LobbyService/LeaveTable": Rule(HOLD_SEAT, "table_id"),
    "/shikoku.v1.LobbyService/SetReady": Rule(HOLD_SEAT, "table_id"),
    "/shikoku.v1.LobbyService/AbandonTable": Rule(HOST_TABLE, "table_id"),
    "/shikoku.v1.LobbyService/StartTable": Rule(HOST_TABLE, "table_id"),
    "/shikoku.v1.LobbyService/EndGame": Rule(HOST_TABLE, "table_id"),
    "/shikoku.v1.LobbyService/ForfeitSeat": Rule(HOST_TABLE, "table_id"),
    "/shikoku.v1.LobbyService/WatchTournament": ANYONE,
    "/shikoku.v1.LobbyService/WatchPlayer": Rule(SIGNED_IN),
    "/shikoku.v1.LobbyService/SetNotificationTarget": Rule(SIGNED_IN),
    "/shikoku.v1.LobbyService/GetNotificationHealth": Rule(HOST_TOURNAMENT, "tournament_id"),
    # A table's seats (their tokens, or the registered players holding them) and host speak:
    # the lobby tells them from anyone else signed in (NOT_AT_TABLE).
    "/shikoku.v1.LobbyService/PostMessage": Rule(SIGNED_IN),
    # Its chat is read by whoever may watch its game (a table's game has the table's id).
    "/shikoku.v1.LobbyService/WatchChat": Rule(WATCH_GAME, "table_id"),
    "/shikoku.v1.LobbyService/HideMessage": Rule(HOST_TABLE, "table_id"),
    "/shikoku.v1.GameService/SubmitCommand": Rule(ACT_IN_GAME, "game_id"),
    "/shikoku.v1.GameService/GetState": Rule(WATCH_GAME, "game_id"),
    "/shikoku.v1.GameService/ListLegalActions": Rule(WATCH_GAME, "game_id"),
    "/shikoku.v1.GameService/StreamEvents": Rule(WATCH_GAME, "game_id"),
    "/shikoku.v1.GameService/WatchGame": Rule(WATCH_GAME, "game_id"),
    # Routes of a game show its present board; routes of a position sent whole show nothing.
    "/shikoku.v1.RoutesService/Optimize": Rule(WATCH_GAME, "game_id", optional=True),
    "/shikoku.v1.RoutesService/CheckRoutes": Rule(WATCH_GAME, "game_id"),
    # The printed map, tiles and market: the same for every game of the title.
    "/shikoku.v1.TitleService/GetTitle": ANYONE,
}


REGISTER_PLAYER = "/shikoku.v1.LobbyService/RegisterPlayer"
HOSTS_NOT_ALLOWED = Rejected(
    "HOSTS_NOT_ALLOWED",
    "this application's API key does not let its users register as hosts; the operator "
    "issues such keys (shikoku api-key create NAME --hosts)",
    Kind.PERMISSION_DENIED,
)
NO_RULE = Rejected(
    "NO_ACCESS_RULE", "this method has no access rule, so no one may call it", Kind.UNIMPLEMENTED
)


@dataclass(frozen=True, slots=True)
class Grant:
    """What the caller proved: the seat it acts for (ACT_IN_GAME), how many actions behind it
    watches (WATCH_GAME; 0 sees the game as it stands)."""

    seat: int = 0
    delay_actions: int = 0


NOTHING_GRANTED = Grant()
_current: ContextVar[Grant] = ContextVar("grant")


def current_grant() -> Grant:
    """What this call's caller was granted (each call runs in its own task and context)."""
    return _current.get(NOTHING_GRANTED)


# Calls after which the caller's own credential may no longer hold what it held: its grants
# are forgotten on this gateway at once (other gateways forget them within GRANT_SECONDS).
FORGETS_GRANTS = {
    "/shikoku.v1.LobbyService/RevokeCredential",
    "/shikoku.v1.LobbyService/LeaveTable",
}


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True, slots=True)
class _Held:
    """A grant as remembered: when it was checked, until when its credential lasts (both
    monotonic), and the ids whose announced change forgets it."""

    grant: internal_lobby_pb2.Grant
    checked_at: float
    until: float
    depends_on: frozenset[str]


class _Announced(TTLCache[str, int]):
    """When each id was last announced; `overflowed`: the count when one had to be dropped for
    room before its time (then no check under way knows what it missed)."""

    overflowed = 0

    def popitem(self) -> tuple[str, int]:
        key, heard = super().popitem()
        self.overflowed = max(self.overflowed, heard)
        return key, heard


def _held(grant: internal_lobby_pb2.Grant, resource: str) -> _Held:
    now = time.monotonic()
    until = math.inf
    if grant.valid_until_ms:
        until = now + (grant.valid_until_ms - time.time() * 1000) / 1000
    principal = grant.principal
    ids = {resource, principal.table_id, principal.game_id, principal.player_id} - {""}
    return _Held(grant, now, until, frozenset(ids))


class Authorization(Admission):
    def __init__(
        self,
        api_keys: ApiKeys,
        credentials: internal_lobby_pb2_grpc.CredentialServiceAsyncStub,
        grant_seconds: float = GRANT_SECONDS,
        grants_kept: int = GRANTS_KEPT,
        unknown_seconds: float = UNKNOWN_SECONDS,
        unknown_kept: int = UNKNOWN_KEPT,
        grant_followed_seconds: float = GRANT_FOLLOWED_SECONDS,
        redis: Redis | RedisCluster | None = None,
    ) -> None:
        self._api_keys = api_keys
        self._credentials = credentials
        self._redis = redis
        self._grant_seconds = grant_seconds
        self._followed_seconds = max(grant_followed_seconds, grant_seconds)
        self._grants_kept = grants_kept
        # Per credential digest (no credential is kept in the clear), what it was granted on
        # what; a credential's grants are kept at most the followed time after its first check.
        self._grants: TTLCache[bytes, dict[tuple[int, str], _Held]] | None = (
            TTLCache(grants_kept, self._followed_seconds) if grant_seconds > 0 else None
        )
        # Per id (a table, game or player), the credentials holding grants that depend on it.
        self._depending: dict[str, set[bytes]] = {}
        # The announcements heard, counted, and when each id was last announced (by that
        # count): a check does not remember its answer when an id it depends on was announced
        # while it was under way, or everything was forgotten meanwhile (it may be from before
        # the change). Kept for longer than a check can last.
        self._heard = 0
        self._announced: _Announced = _Announced(max(grants_kept, 1), 2 * AUTHORIZE_SECONDS)
        self._all_forgotten = 0
        #: Whether a subscription to the lobby's announcements is in place now.
        self.following = False
        # Digests of the credentials the lobby accepted lately (for `vouches_for`).
        self._proven: TTLCache[bytes, bool] = TTLCache(max(grants_kept, 1), PROVEN_SECONDS)
        # Per credential digest, the lobby's UNAUTHENTICATED refusal of it.
        self._unknown: TTLCache[bytes, Rejected] | None = (
            TTLCache(unknown_kept, unknown_seconds)
            if unknown_seconds > 0 and unknown_kept > 0
            else None
        )

    async def follow_grant_changes(self) -> None:
        """Forgets the grants each announced change concerns, for as long as it runs (until
        cancelled; `infra.announcements.follow`)."""
        if self._redis is None:
            raise RuntimeError("an Authorization without Redis has nothing to follow")
        await follow(self._redis, GRANTS_CHANGED, self, "the lobby's grant changes")

    def heard(self, changed: str) -> None:
        """`changed` (a table's, a game's or a player's id) changed: every grant depending on
        it is forgotten, with the other grants of the credentials holding one."""
        self._heard += 1
        self._announced[changed] = self._heard
        for digest in self._depending.pop(changed, ()):
            if self._grants is not None:
                self._grants.pop(digest, None)

    def missed(self) -> None:
        """A (re)subscription: changes announced while there was none were missed."""
        self._heard += 1
        self._all_forgotten = self._heard
        self._depending.clear()
        if self._grants is not None:
            self._grants.clear()

    @property
    def credentials_remembered(self) -> int:
        return len(self._grants) if self._grants is not None else 0

    @property
    def unknown_remembered(self) -> int:
        return len(self._unknown) if self._unknown is not None else 0

    def vouches_for(self, token: str) -> bool:
        """Whether the lobby accepted `token` on this gateway within PROVEN_SECONDS and has not
        refused it since: a real credential, which has a rate-limit bucket of its own."""
        return bool(token) and _digest(token) in self._proven

    async def admit(self, method: str, request: Any, context: Context) -> None:
        metadata = context.invocation_metadata()
        application = await self._api_keys.check(api_key_from(metadata))
        calls.note_api_key(application.key_id)
        rule = RULES.get(method)
        if rule is None:
            raise NO_RULE
        if (
            method == REGISTER_PLAYER
            and request.role == lobby_pb2.ROLE_HOST
            and not application.hosts
        ):
            raise HOSTS_NOT_ALLOWED
        resource = getattr(request, rule.resource) if rule.resource else ""
        token = optional_bearer_token(metadata)
        forgets = method in FORGETS_GRANTS
        if forgets and self._grants is not None:
            self._grants.pop(_digest(token), None)
        if rule.permission is None or (rule.optional and not resource):
            if token:  # a credential sent is checked even where none is needed
                await self._authorize(token, SIGNED_IN, "", remember=not forgets)
            return
        if rule.resource and not resource:
            raise Rejected(
                reason_code(f"MISSING_{rule.resource.upper()}"),
                f"{rule.resource} is required",
                Kind.INVALID_ARGUMENT,
                {"field": rule.resource},
            )
        grant = await self._authorize(token, rule.permission, resource, remember=not forgets)
        _current.set(
            Grant(
                seat=grant.principal.seat if rule.permission == ACT_IN_GAME else 0,
                delay_actions=grant.delay_actions,
            )
        )

    async def _authorize(
        self, token: str, permission: Permission.ValueType, resource: str, remember: bool = True
    ) -> internal_lobby_pb2.Grant:
        if self._grants is None or not remember:
            return await self._ask_lobby(token, permission, resource)
        digest, what = _digest(token), (int(permission), resource)
        known = self._grants.get(digest)
        if known is not None and (held := known.get(what)) is not None and self._fresh(held):
            return held.grant
        asked_at = self._heard
        grant = await self._ask_lobby(token, permission, resource)
        held = _held(grant, resource)
        if self._changed_since(asked_at, held.depends_on):
            return grant  # it changed meanwhile: this answer may be from before the change
        known = self._grants.get(digest)
        if known is None:
            self._grants[digest] = known = {}
        known[what] = held
        for changed in held.depends_on:
            self._depending.setdefault(changed, set()).add(digest)
        if len(self._depending) > 4 * self._grants_kept:
            self._index_again()
        return grant

    def _changed_since(self, asked_at: int, depends_on: frozenset[str]) -> bool:
        if self._all_forgotten > asked_at or self._announced.overflowed > asked_at:
            return True
        return any(self._announced.get(changed, 0) > asked_at for changed in depends_on)

    def _fresh(self, held: _Held) -> bool:
        now = time.monotonic()
        kept = self._followed_seconds if self.following else self._grant_seconds
        return now < held.until and now - held.checked_at < kept

    def _index_again(self) -> None:
        """`_depending` rebuilt from the grants still kept (those lapsed leave entries)."""
        self._depending = {}
        for digest, known in (self._grants or {}).items():
            for held in known.values():
                for changed in held.depends_on:
                    self._depending.setdefault(changed, set()).add(digest)

    async def _ask_lobby(
        self, token: str, permission: Permission.ValueType, resource: str
    ) -> internal_lobby_pb2.Grant:
        digest = _digest(token)
        if token and self._unknown is not None and (known := self._unknown.get(digest)):
            raise Rejected(known.reason, known.message, known.kind, known.details)
        request = internal_lobby_pb2.AuthorizeRequest(
            token=token, permission=permission, resource_id=resource
        )
        try:
            grant: internal_lobby_pb2.Grant = await self._credentials.Authorize(
                request, timeout=AUTHORIZE_SECONDS
            )
        except grpc.aio.AioRpcError as error:
            refused = from_rpc_error(error)
            if refused is None:
                raise Rejected(
                    "LOBBY_UNAVAILABLE",
                    f"credentials cannot be checked now: {error.details()}",
                    Kind.UNAVAILABLE,
                ) from error
            # Only a credential sent: for no credential, the answer depends on the permission.
            if token and refused.kind is Kind.UNAUTHENTICATED:
                self._proven.pop(digest, None)
                if self._unknown is not None:
                    self._unknown[digest] = refused
            raise refused from error
        if token:
            self._proven[digest] = True
        return grant
