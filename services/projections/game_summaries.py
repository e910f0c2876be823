"""Game summaries, the read model of every game (table, players, round, phase, whose turn,
the result): where each is kept and how it is read.

The rules service writes them (`services/rules/shell/summaries.py`, fed from the games'
streams); the lobby reads them for its listings. Every key of a game lives in its hash slot;
`games:index` lists the games to follow (the rules service adds a game before writing its first
event).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis

INDEX_KEY = "games:index"




def summary_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:summary"


async def register_game(redis: Redis, game_id: str) -> None:
    """Called before a game's first event is written, so no game is ever missed."""
    await redis.sadd(INDEX_KEY, game_id)


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


