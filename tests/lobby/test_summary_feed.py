"""The summary feed and moved_at_ms: after the projector handles a game's note, the feed of the
game's shard names the game and the version stored, and the summary says when that version's
event was written; handled again, the feed repeats the version (at least once), never an older
one."""

from __future__ import annotations

import time
from typing import cast

import redis.asyncio

from infra.eventstore import EventStore
from services.projections.game_summaries import (
    change_note,
    feed_key,
    game_changed,
    read_summary,
    shard_of,
)
from services.rules.domain import events as ev
from services.rules.domain.commands import CreateGame, EndGame
from services.rules.shell.repository import GameRepository
from services.rules.shell.summaries import SummaryProjector


async def feed_of(redis_client: redis.asyncio.Redis, game_id: str) -> list[tuple[str, int]]:
    entries = cast(
        list[tuple[bytes, dict[bytes, bytes]]],
        await redis_client.xrange(feed_key(shard_of(game_id))),
    )
    return [
        (fields[b"game_id"].decode(), int(fields[b"version"]))
        for _id, fields in entries
        if fields[b"game_id"].decode() == game_id
    ]


async def test_the_feed_names_each_stored_version_and_the_summary_when_it_moved(
    redis_client: redis.asyncio.Redis,
) -> None:
    games = GameRepository(EventStore(redis_client, "game"), change_note=change_note)
    projector = SummaryProjector(redis_client, games, "rules-feed")
    before = int(time.time() * 1000)
    players = tuple(ev.SeatedPlayer(s, f"p{s}") for s in (1, 2, 3))
    created = await games.execute("g-feed", CreateGame(players, seed=3))
    await projector.run_once()
    first = await read_summary(redis_client, "g-feed")
    assert first is not None and first.version == created.events[-1].version
    assert before <= first.moved_at_ms <= int(time.time() * 1000)
    assert await feed_of(redis_client, "g-feed") == [("g-feed", first.version)]

    time.sleep(0.01)
    ended = await games.execute("g-feed", EndGame())
    await game_changed(redis_client, "g-feed")  # a note twice: handled twice
    await projector.run_once()
    last = await read_summary(redis_client, "g-feed")
    assert last is not None and last.version == ended.events[-1].version > first.version
    assert last.moved_at_ms > first.moved_at_ms
    assert last.moved_at_ms == ended.events[0].cause["at_ms"]  # type: ignore[index]
    assert await feed_of(redis_client, "g-feed") == [
        ("g-feed", first.version),
        ("g-feed", last.version),
    ]
