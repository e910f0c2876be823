"""Snapshots of game states: a cache that makes loading a long game fast.

Every `every` events the state is stored under the game's hash tag with the version it is at,
as plain data (`snapshot_encoding`: msgpack of tagged values, nothing that can run code when
read). Loading takes the snapshot and folds the events after it. A snapshot is used only if it
was written by this very code (a fingerprint of the rules' sources and data) and decodes to a game
state; anything else (missing, corrupted, older code) is ignored and the game is folded from its
first event. Deleting every snapshot changes nothing but speed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import msgpack
from redis.asyncio import Redis

from services.rules.domain.state import GameState
from services.rules.shell.snapshot_encoding import from_plain, to_plain

RULES_DIR = Path(__file__).resolve().parents[1]
DEFAULT_EVERY = 100


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
    def __init__(self, redis: Redis, every: int = DEFAULT_EVERY):
        self._redis = redis
        self.every = every

    async def save(self, game_id: str, version: int, state: GameState) -> None:
        record = {"code": code_fingerprint(), "version": version, "state": to_plain(state)}
        await self._redis.set(snapshot_key(game_id), msgpack.packb(record))

    async def load(self, game_id: str) -> Snapshot | None:
        raw = await self._redis.get(snapshot_key(game_id))
        if raw is None:
            return None
        try:
            record = msgpack.unpackb(raw, strict_map_key=False)
            if record["code"] != code_fingerprint():
                return None
            version, state = record["version"], from_plain(record["state"])
        except Exception:  # whatever is stored there, a bad snapshot only costs a full fold
            return None
        if not isinstance(version, int) or not isinstance(state, GameState):
            return None
        return Snapshot(version, state)

    def due(self, before: int, after: int) -> bool:
        """Whether a batch taking the game from `before` to `after` events crossed a multiple
        of `every`."""
        return self.every > 0 and after // self.every > before // self.every
