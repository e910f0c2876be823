"""Game summaries, the read model of every game (table, players, round, phase, whose turn,
the result): where each is kept and how it is read.

The rules service writes them (`services/rules/shell/summaries.py`); the lobby reads them for
its listings. A summary lives in its game's hash slot. Each append to a game's stream is
followed by a note of the game's id on one of the `summaries:changes:{<shard>}` streams (the
shard a hash of the id, so the notes spread over a cluster): the projector reads only those, so
its work follows the games being played, and finished games cost it nothing.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis

#: How many change streams the notes are spread over (each lives on one slot), unless the rules
#: processes' SHIKOKU_SUMMARY_SHARDS says otherwise (the same in all of them).
DEFAULT_CHANGE_SHARDS = 4
# Notes are trimmed past this many per shard: enough for any lag of the projector.
CHANGES_KEPT = 100_000


def summary_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:summary"


def changes_key(shard: int) -> str:
    return f"summaries:changes:{{{shard}}}"


def shard_of(game_id: str, shards: int = DEFAULT_CHANGE_SHARDS) -> int:
    return zlib.crc32(game_id.encode()) % shards


async def game_changed(redis: Redis, game_id: str, shards: int = DEFAULT_CHANGE_SHARDS) -> None:
    """Notes that the game's stream has new events (after they are written, before the command
    that wrote them is acknowledged, so a note can only be missing for an unacknowledged
    command, whose retry notes it again)."""
    await redis.xadd(
        changes_key(shard_of(game_id, shards)),
        {"g": game_id},
        maxlen=CHANGES_KEPT,
        approximate=True,
    )


@dataclass(frozen=True, slots=True)
class Summary:
    version: int
    document: dict[str, Any]


async def read_summary(redis: Redis, game_id: str) -> Summary | None:
    return _summary(cast(dict[bytes, bytes], await redis.hgetall(summary_key(game_id))))


async def read_summaries(redis: Redis, game_ids: Sequence[str]) -> list[Summary | None]:
    """The summaries of several games, in one round trip."""
    async with redis.pipeline(transaction=False) as pipe:
        for game_id in game_ids:
            pipe.hgetall(summary_key(game_id))
        replies = cast(list[dict[bytes, bytes]], await pipe.execute())
    return [_summary(stored) for stored in replies]


def _summary(stored: dict[bytes, bytes]) -> Summary | None:
    if not stored:
        return None
    return Summary(int(stored[b"version"]), json.loads(stored[b"summary"]))
