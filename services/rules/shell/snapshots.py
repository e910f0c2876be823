"""Snapshots of game states: a cache that makes loading a long game fast.

Every `every` events the state is stored under the game's hash tag with the version it is at.
Loading takes the snapshot and folds the events after it. A snapshot is trusted only if it was
written by this very code (a fingerprint of the rules' sources and data) and its signature
checks; anything else (missing, corrupted, older code) is ignored and the game is folded from
its first event. Deleting every snapshot changes nothing but speed.
"""

from __future__ import annotations

import copyreg
import hashlib
import hmac
import os
import pickle
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import msgpack
from redis.asyncio import Redis

from services.rules import board
from services.rules.domain.state import GameState

RULES_DIR = Path(__file__).resolve().parent
DEFAULT_EVERY = 100


def _mapping(items: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(items)


def _position(
    title: str, tiles: Any, tokens: Any, supply: Any
) -> board.Position:  # the title by name: loaded once per process and shared
    return board.Position(title=board.load_title(title), tiles=tiles, tokens=tokens, supply=supply)


copyreg.pickle(MappingProxyType, lambda m: (_mapping, (dict(m),)))
copyreg.pickle(
    board.Position,
    lambda p: (_position, (p.title.name, dict(p.tiles), dict(p.tokens), dict(p.supply))),
)


@cache
def code_fingerprint() -> str:
    """Changes whenever the domain code, the board model or the title data change."""
    digest = hashlib.sha256()
    for path in sorted(RULES_DIR.rglob("*")):
        if path.suffix in {".py", ".toml"} and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(RULES_DIR)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def snapshot_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:snapshot"


@dataclass(frozen=True, slots=True)
class Snapshot:
    version: int
    state: GameState


class SnapshotStore:
    """`secret` signs snapshots so that only states this service wrote are ever unpickled; set
    SHIKOKU_SNAPSHOT_SECRET to share snapshots between the replicas of a deployment."""

    def __init__(self, redis: Redis, every: int = DEFAULT_EVERY, secret: bytes | None = None):
        self._redis = redis
        self.every = every
        self._secret = (
            secret or os.environ.get("SHIKOKU_SNAPSHOT_SECRET", "").encode() or (os.urandom(32))
        )

    def _signature(self, body: bytes) -> bytes:
        return hmac.new(self._secret, body, hashlib.sha256).digest()

    async def save(self, game_id: str, version: int, state: GameState) -> None:
        body = pickle.dumps((version, state), protocol=pickle.HIGHEST_PROTOCOL)
        record = {"code": code_fingerprint(), "sig": self._signature(body), "body": body}
        await self._redis.set(snapshot_key(game_id), msgpack.packb(record))

    async def load(self, game_id: str) -> Snapshot | None:
        raw = await self._redis.get(snapshot_key(game_id))
        if raw is None:
            return None
        try:
            record = msgpack.unpackb(raw)
            body = record["body"]
            if record["code"] != code_fingerprint():
                return None
            if not hmac.compare_digest(record["sig"], self._signature(body)):
                return None
            version, state = pickle.loads(body)
        except Exception:
            return None
        if not isinstance(version, int) or not isinstance(state, GameState):
            return None
        return Snapshot(version, state)

    def due(self, before: int, after: int) -> bool:
        """Whether a batch taking the game from `before` to `after` events crossed a multiple
        of `every`."""
        return self.every > 0 and after // self.every > before // self.every
