"""Game summaries, the read model of every game (table, players, round, phase, whose turn,
the result): where each is kept and how it is read.

The rules service writes them (`services/rules/shell/summaries.py`); the lobby reads them for
its listings. A summary lives in its game's hash slot. Each append to a game's stream is
followed by a note of the game's id on one of the `summaries:changes:{<shard>}` streams (the
shard a hash of the id, so the notes spread over a cluster): the projector reads only those, so
its work follows the games being played, and finished games cost it nothing.

Once the projector has handled a note (stored a newer summary, or found one as new or newer),
it appends `{game_id, version}` to the game's shard of the summary feed,
`summaries:feed:{<shard>}`: what the lobby's watchers and the notifier follow instead of each
game's stream. At least once: a follower may see an entry twice, or a version it already has.

The lobby keeps beside each started game who plays it (`game_players_key`: its table, its
tournament and round, the registered player of each seat), written before the game's first
command can be accepted, so a follower of the feed knows whom a change concerns.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from redis.asyncio import Redis

from infra.eventlog import StreamNote
from infra.settings import setting, whole

#: How many change streams the notes are spread over (each lives on one slot), unless the rules
#: processes' SHIKOKU_SUMMARY_SHARDS says otherwise (the same in all of them).
DEFAULT_CHANGE_SHARDS = 4
# Notes are trimmed past this many per shard: enough for any lag of the projector.
CHANGES_KEPT = 100_000
#: Feed entries are trimmed past this many per shard: enough for any lag of its followers.
FEED_KEPT = 100_000


@dataclass(frozen=True, slots=True)
class SummaryShards:
    """The one setting every process that writes or follows the notes and the feed shares."""

    count: int = setting(
        "SHIKOKU_SUMMARY_SHARDS",
        DEFAULT_CHANGE_SHARDS,
        whole(least=1),
        "change streams the summary projector's notes (and its feed) are spread over: the same "
        "in every rules and lobby process",
    )


def summary_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:summary"


def changes_key(shard: int) -> str:
    return f"summaries:changes:{{{shard}}}"


def feed_key(shard: int) -> str:
    return f"summaries:feed:{{{shard}}}"


def game_players_key(game_id: str) -> str:
    """Hash: table_id, tournament_id ("" if none), round ("0" if none), and seat:<n> =
    player_id for each seat a registered player holds."""
    return f"game:{{{game_id}}}:players"


def shard_of(game_id: str, shards: int = DEFAULT_CHANGE_SHARDS) -> int:
    return zlib.crc32(game_id.encode()) % shards


def change_note(game_id: str, shards: int = DEFAULT_CHANGE_SHARDS) -> StreamNote:
    """The note that the game's stream has new events, on its shard of the change streams:
    written with the append itself (the event store writes it in the same round trip), so a
    note can only be missing for an unacknowledged command, whose retry notes it again."""
    return StreamNote(changes_key(shard_of(game_id, shards)), {"g": game_id}, CHANGES_KEPT)


async def game_changed(redis: Redis, game_id: str, shards: int = DEFAULT_CHANGE_SHARDS) -> None:
    """Writes the game's change note on its own (`change_note`), as an append does."""
    note = change_note(game_id, shards)
    fields: dict[Any, Any] = dict(note.fields)
    await redis.xadd(note.stream, fields, maxlen=note.kept, approximate=True)


def feed_entry(game_id: str, version: int, shards: int = DEFAULT_CHANGE_SHARDS) -> StreamNote:
    """The feed's entry that the game's stored summary is at `version` (or later)."""
    return StreamNote(
        feed_key(shard_of(game_id, shards)),
        {"game_id": game_id, "version": str(version)},
        FEED_KEPT,
    )


async def summary_moved(
    redis: Redis, game_id: str, version: int, shards: int = DEFAULT_CHANGE_SHARDS
) -> None:
    """Announces on the feed that the game's stored summary is at `version` (or later)."""
    entry = feed_entry(game_id, version, shards)
    fields: dict[Any, Any] = dict(entry.fields)
    await redis.xadd(entry.stream, fields, maxlen=entry.kept, approximate=True)


@dataclass(frozen=True, slots=True)
class GamePlayers:
    """Who plays a game: its table, its tournament ("" if none) and round (0 if none), and
    the registered player of each seat (seats held by anonymous tokens are absent)."""

    table_id: str
    tournament_id: str = ""
    round: int = 0
    seats: dict[int, str] = field(default_factory=dict)


async def write_game_players(redis: Redis, game_id: str, players: GamePlayers) -> None:
    """Replaces the game's record whole (one transaction on one key)."""
    key = game_players_key(game_id)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.delete(key)
        pipe.hset(
            key,
            mapping={
                "table_id": players.table_id,
                "tournament_id": players.tournament_id,
                "round": str(players.round),
            },
        )
        for seat, player_id in players.seats.items():
            pipe.hset(key, f"seat:{seat}", player_id)
        await pipe.execute()


async def read_game_players(redis: Redis, game_id: str) -> GamePlayers | None:
    stored = cast(dict[bytes, bytes], await redis.hgetall(game_players_key(game_id)))
    if not stored:
        return None
    fields = {key.decode(): value.decode() for key, value in stored.items()}
    return GamePlayers(
        fields["table_id"],
        fields.get("tournament_id", ""),
        int(fields.get("round", "0")),
        {int(k[5:]): v for k, v in fields.items() if k.startswith("seat:")},
    )


@dataclass(frozen=True, slots=True)
class Summary:
    version: int
    document: dict[str, Any]
    #: When the event of `version` was written (ms since the epoch); 0 if not known.
    moved_at_ms: int = 0


async def read_summary(redis: Redis, game_id: str) -> Summary | None:
    return summary_from_hash(cast(dict[bytes, bytes], await redis.hgetall(summary_key(game_id))))


async def read_summaries(redis: Redis, game_ids: Sequence[str]) -> list[Summary | None]:
    """The summaries of several games, in one round trip."""
    async with redis.pipeline(transaction=False) as pipe:
        for game_id in game_ids:
            pipe.hgetall(summary_key(game_id))
        replies = cast(list[dict[bytes, bytes]], await pipe.execute())
    return [summary_from_hash(stored) for stored in replies]


def summary_from_hash(stored: dict[bytes, bytes]) -> Summary | None:
    """The summary in its hash as HGETALL returns it (None for an empty one: no summary)."""
    if not stored:
        return None
    return Summary(
        int(stored[b"version"]),
        json.loads(stored[b"summary"]),
        int(stored.get(b"moved_at_ms", b"0")),
    )
