"""Benchmark: event-store appends per second and append latency (p50, p99) with 1, 10 and 100
games played at once, against an embedded redis-server started here (`--durable`: every write
fsynced to an append-only file first, as `shikoku run --durable` does).

Each game is one writer appending batches of 1-3 events (a few hundred bytes of msgpack each,
the batch's command kept as its cause) at the version it last wrote, as the rules service does.
Every level is bounded by time and by count.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import redis.asyncio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from infra.eventstore import EventStore, NewEvent, VersionConflict
from shikoku_dev.redis_server import EmbeddedRedis

CONCURRENCY = (1, 10, 100)
SECONDS_PER_LEVEL = 1.0
MAX_APPENDS_PER_LEVEL = 20_000
WARM_UP_APPENDS = 50

CORPORATIONS = ("AR", "IR", "SR", "KO", "TR", "UR")
TRAINS = ("2", "3", "4", "5", "6", "D")
HEXES = tuple(f"{row}{column}" for row in "ABCDEFGHIJKL" for column in range(1, 20))
EVENT_TYPES = ("RoutesRun", "TileLaid", "TokenPlaced", "TrainBought", "DividendPaid")


def event_payload(rng: random.Random) -> dict[str, Any]:
    """Shaped like an operating-round event: routes with their stops and revenue, payments."""
    routes = [
        {
            "train": rng.choice(TRAINS),
            "hexes": rng.sample(HEXES, rng.randint(3, 8)),
            "revenue": rng.randrange(20, 250, 10),
        }
        for _ in range(rng.randint(1, 3))
    ]
    return {
        "seat": rng.randint(1, 4),
        "corporation": rng.choice(CORPORATIONS),
        "routes": routes,
        "revenue": sum(route["revenue"] for route in routes),
        "dividend": rng.choice(("payout", "withhold")),
        "payments": [{"seat": seat, "amount": rng.randrange(0, 200, 10)} for seat in (1, 2, 3, 4)],
        "market": {"from": [rng.randint(0, 10), rng.randint(0, 4)], "to": [rng.randint(0, 10), 0]},
    }


def command(rng: random.Random) -> dict[str, Any]:
    return {"type": "RunRoutes", "seat": rng.randint(1, 4), "id": f"{rng.getrandbits(64):016x}"}


@dataclass
class Level:
    games: int
    latencies: list[float] = field(default_factory=list)
    events: int = 0
    seconds: float = 0.0


async def play(
    store: EventStore, game_id: str, seed: int, level: Level, deadline: float, limit: int
) -> None:
    """One game's writer: appends at the version it last wrote until time or count runs out."""
    rng = random.Random(seed)
    version = 0
    while time.perf_counter() < deadline and len(level.latencies) < limit:
        events = [
            NewEvent(rng.choice(EVENT_TYPES), 1, event_payload(rng))
            for _ in range(rng.randint(1, 3))
        ]
        cause = command(rng)
        start = time.perf_counter()
        version = await store.append(game_id, version, events, cause=cause)
        level.latencies.append(time.perf_counter() - start)
        level.events += len(events)


async def run_level(store: EventStore, games: int) -> Level:
    level = Level(games)
    start = time.perf_counter()
    deadline = start + SECONDS_PER_LEVEL
    await asyncio.gather(
        *(
            play(store, f"bench-{games}-{n}", n, level, deadline, MAX_APPENDS_PER_LEVEL)
            for n in range(games)
        )
    )
    level.seconds = time.perf_counter() - start
    stored = sum([await store.version(f"bench-{games}-{n}") for n in range(games)])
    if stored != level.events:
        raise SystemExit(f"{games} games: {level.events} events appended, {stored} stored")
    return level


async def bench(url: str) -> list[Level]:
    client = redis.asyncio.Redis.from_url(url)
    try:
        store = EventStore(client, "game")
        warm_up = Level(1)  # loads the script, opens the first connections
        await play(store, "bench-warm-up", 0, warm_up, time.perf_counter() + 1, WARM_UP_APPENDS)
        return [await run_level(store, games) for games in CONCURRENCY]
    finally:
        await client.aclose()


def payload_sizes() -> tuple[float, float]:
    rng = random.Random(1)
    events = [len(msgpack.packb(event_payload(rng))) for _ in range(1_000)]
    causes = [len(msgpack.packb(command(rng))) for _ in range(1_000)]
    return statistics.mean(events), statistics.mean(causes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durable", action="store_true", help="appendfsync always")
    durable = parser.parse_args().durable

    with EmbeddedRedis(durable=durable) as server:
        try:
            levels = asyncio.run(bench(server.url))
        except VersionConflict as conflict:
            raise SystemExit(f"a game's only writer met a conflict: {conflict}") from conflict

    event_bytes, cause_bytes = payload_sizes()
    print(
        f"embedded redis-server on 127.0.0.1 ({'appendfsync always' if durable else 'no fsync'}); "
        f"1-3 events of {event_bytes:.0f} B msgpack on average per append, "
        f"plus a {cause_bytes:.0f} B cause"
    )
    row = "{:>5} {:>8} {:>10} {:>9} {:>7} {:>7}".format
    print(row("games", "appends", "appends/s", "events/s", "p50 ms", "p99 ms"))
    for level in levels:
        appends = len(level.latencies)
        percentiles = statistics.quantiles(level.latencies, n=100, method="inclusive")
        print(
            row(
                level.games,
                appends,
                f"{appends / level.seconds:,.0f}",
                f"{level.events / level.seconds:,.0f}",
                f"{percentiles[49] * 1000:.2f}",
                f"{percentiles[98] * 1000:.2f}",
            )
        )


if __name__ == "__main__":
    main()
