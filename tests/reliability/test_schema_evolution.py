"""A stream stored by an earlier version of the code (HomeTokenPlaced at schema 1, before it
named the city) is read, upcast and replayed to the state that version computed."""

from __future__ import annotations

import json
from pathlib import Path

import msgpack
import pytest
import redis.asyncio

from infra.eventstore import EventStore
from services.rules.domain.events import EVENT_TYPES, event_from_payload
from services.rules.domain.view import state_document
from services.rules.shell.repository import GameRepository

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RECORDED = FIXTURES / "stream-schema-2026-11.jsonl"


def recorded() -> list[dict[str, object]]:
    return [json.loads(line) for line in RECORDED.read_text().splitlines()]


def test_the_recording_holds_older_schemas() -> None:
    older = {(r["type"], r["schema"]) for r in recorded() if r["schema"] != 1}
    assert older == set()  # everything was schema 1 then
    assert EVENT_TYPES["HomeTokenPlaced"].SCHEMA == 2


def test_an_old_event_is_upcast_when_read() -> None:
    old = next(r for r in recorded() if r["type"] == "HomeTokenPlaced")
    event = event_from_payload("HomeTokenPlaced", 1, old["payload"])  # type: ignore[arg-type]
    assert event.city == 0  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="newer"):
        event_from_payload("HomeTokenPlaced", 3, {})


async def test_a_stream_of_the_earlier_version_replays_to_the_same_state(
    redis_client: redis.asyncio.Redis,
) -> None:
    store = EventStore(redis_client, "game")
    key = store.key("g-old")
    for version, entry in enumerate(recorded(), start=1):
        fields = {
            "t": entry["type"],
            "v": entry["schema"],
            "d": msgpack.packb(entry["payload"]),
        }
        if "cause" in entry:
            fields["c"] = msgpack.packb(entry["cause"])
        await redis_client.xadd(key, fields, id=f"{version}-0")  # type: ignore[arg-type]
    loaded = await GameRepository(store).load("g-old")
    expected = json.loads((FIXTURES / "stream-schema-2026-11.state.json").read_text())
    assert json.loads(json.dumps(state_document(loaded.state), sort_keys=True)) == expected
