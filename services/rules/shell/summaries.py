"""The game-summary projection's writer: fed from the games' streams through a Redis consumer
group, in the rules service (which owns those streams).

Delivery is at least once: an event is acknowledged only after its summary is written, and a
summary is written only if it is newer than the one stored, so handling an event twice changes
nothing. Entries a consumer read but never acknowledged (it died) are claimed by another after
`claim_idle_ms` with XAUTOCLAIM.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from infra.eventstore import Entries, EventStore
from services.projections.game_summaries import INDEX_KEY, summary_key
from services.rules.domain.state import GameState, OperatingRound, PrivateAuction, StockRound
from services.rules.shell.repository import GameRepository

GROUP = "summaries"
SUMMARY_SCRIPT = """
local stored = redis.call('HGET', KEYS[1], 'version')
if stored and tonumber(stored) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'summary', ARGV[2])
return 1
"""


def summarise(game_id: str, version: int, state: GameState) -> dict[str, Any]:
    round_: dict[str, Any] = {}
    match state.round:
        case PrivateAuction():
            round_ = {"type": "private_auction"}
        case StockRound(number=number):
            round_ = {"type": "stock_round", "number": number}
        case OperatingRound(number=number, of=of, current=current):
            round_ = {"type": "operating_round", "number": number, "of": of, "operating": current}
    return {
        "game_id": game_id,
        "version": version,
        "players": [{"seat": p.seat, "name": p.name} for p in state.players],
        "round": round_,
        "phase": state.phase,
        "acting_seats": list(state.acting_seats),
        "finished": state.result is not None,
        "result": (
            {"reason": state.result.reason, "net_worths": dict(state.result.net_worths)}
            if state.result
            else None
        ),
    }


class SummaryProjector:
    """One consumer of the group; run several (in several processes) for availability."""

    def __init__(self, redis: Redis, consumer: str, claim_idle_ms: int = 30_000) -> None:
        self._redis = redis
        self._store = EventStore(redis, "game")
        self._games = GameRepository(self._store)
        self.consumer = consumer
        self.claim_idle_ms = claim_idle_ms
        self._write = redis.register_script(SUMMARY_SCRIPT)

    async def _ensure_group(self, game_id: str) -> None:
        try:
            await self._redis.xgroup_create(self._store.key(game_id), GROUP, id="0", mkstream=True)
        except ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise

    async def games(self) -> list[str]:
        members = cast(set[bytes], await self._redis.smembers(INDEX_KEY))
        return sorted(member.decode() for member in members)

    async def read_new(self, game_id: str, count: int = 500) -> list[bytes]:
        """Entries of the game not yet delivered to any consumer (now pending for this one)."""
        await self._ensure_group(game_id)
        reply = cast(
            list[tuple[bytes, Entries]],
            await self._redis.xreadgroup(
                GROUP, self.consumer, {self._store.key(game_id): ">"}, count=count
            ),
        )
        return [entry_id for _stream, entries in reply or () for entry_id, _fields in entries]

    async def claim_abandoned(self, game_id: str) -> list[bytes]:
        """Entries another consumer read and never acknowledged for `claim_idle_ms`."""
        await self._ensure_group(game_id)
        reply = await self._redis.xautoclaim(
            self._store.key(game_id), GROUP, self.consumer, self.claim_idle_ms, "0-0", count=500
        )
        return [entry_id for entry_id, _fields in reply[1]]

    async def handle(self, game_id: str, entries: Sequence[bytes]) -> None:
        """Brings the summary up to the game's current version, then acknowledges the entries:
        idempotent, so entries handled twice change nothing."""
        if not entries:
            return
        loaded = await self._games.load(game_id)
        await self.write(game_id, loaded.version, summarise(game_id, loaded.version, loaded.state))
        await self._redis.xack(self._store.key(game_id), GROUP, *entries)

    async def write(self, game_id: str, version: int, document: dict[str, Any]) -> bool:
        """Stores the summary unless one of the same or a later version is there."""
        written = await self._write(
            keys=[summary_key(game_id)], args=[version, json.dumps(document)]
        )
        return bool(written)

    async def run_once(self) -> int:
        """One pass over every game; returns how many entries were handled."""
        handled = 0
        for game_id in await self.games():
            entries = await self.claim_abandoned(game_id) + await self.read_new(game_id)
            await self.handle(game_id, entries)
            handled += len(entries)
        return handled

    async def run(self, stop: asyncio.Event, interval: float = 0.5) -> None:
        while not stop.is_set():
            if not await self.run_once():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), interval)
