"""Failover without loss: bot games through two gateways on an embedded Redis Cluster (3 masters,
a replica each; appends wait for one replica) with two processes of every service, while, in
turn, a master is killed and its replica promoted, one process of each service is killed and
restarted, and a gateway is killed.

Afterwards every acknowledged command's events are in the streams, no stream has a gap or a
duplicate, every game's state (as the services answer it) equals the fold of its events, and
every game has reached its end. `SHIKOKU_FAILOVER_GAMES` sets the number of games (`make soak`
plays many more than `make test`).
"""

from __future__ import annotations

import asyncio
import io
import os
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from infra.config import redis_client
from infra.eventstore import EventStore
from services.rules import wire
from services.rules.domain import undo
from services.rules.domain.undo import Logged
from services.rules.domain.view import state_document
from services.rules.shell.repository import to_domain
from shikoku.v1 import game_pb2
from shikoku_dev.supervisor import System
from shikoku_sdk import Client, RandomPlayer, seat_table

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # the services on a Redis Cluster

GAMES = int(os.environ.get("SHIKOKU_FAILOVER_GAMES", "4"))
# A failover takes the cluster's node timeout and an election (about 7 s here): retries must
# outlast it. The SDK backs off up to 5 s between attempts.
ATTEMPTS = 20
ACTIONS_LIMIT = 5_000


@pytest.fixture(scope="module")
def system() -> Iterator[System]:
    system = System.on_free_ports(log=io.StringIO(), cluster=True, replicas=2)
    system.env["SHIKOKU_RATE_PER_SECOND"] = "0"  # the bots play at machine speed
    with system:
        yield system


@dataclass
class Game:
    game_id: str
    seats: dict[int, Client]
    #: version -> event type of every event whose command was acknowledged
    acknowledged: dict[int, str] = field(default_factory=dict)
    ended: bool = False


@dataclass
class Bot:
    """Plays games of random legal actions, one after another until `enough` is set (so some
    game is being played through every fault), remembering every acknowledged event."""

    client: Client
    players: int
    rng: random.Random
    enough: threading.Event
    games: list[Game] = field(default_factory=list)
    error: BaseException | None = None
    #: when each acknowledgement came (monotonic clock)
    acknowledged_at: list[float] = field(default_factory=list)

    def run(self) -> None:
        try:
            while not self.enough.is_set():
                table = seat_table(self.client, self.players)
                self.games.append(Game(table.game_id, table.seats))
                self._play(self.games[-1])
        except BaseException as error:  # reported by the test
            self.error = error

    def _play(self, game: Game) -> None:
        def acknowledged(answer: game_pb2.SubmitCommandResponse, _seconds: float) -> None:
            game.acknowledged.update({event.version: event.type for event in answer.events})
            self.acknowledged_at.append(time.monotonic())

        RandomPlayer(game.game_id, game.seats, self.rng).play(ACTIONS_LIMIT, acknowledged)
        game.ended = True


def now(what: str) -> tuple[float, str]:
    return time.monotonic(), what


def faults(system: System, enough: threading.Event) -> list[tuple[float, str]]:
    """Each fault in turn, with a pause between them for the games to go on: when each was
    done, and what."""
    done: list[tuple[float, str]] = []
    cluster = system.redis_cluster
    assert cluster is not None

    def pause() -> None:
        enough.wait(2.0)

    pause()
    master = cluster.masters_ports()[0]
    cluster.kill(master)
    promoted = cluster.wait_for_failover(master, timeout=30)
    done.append(now(f"master {master} killed, {promoted} promoted"))
    cluster.restart(master)
    done.append(now(f"{master} back as a replica"))
    for name in ("rules", "routes", "lobby", "gateway"):
        pause()
        system.restart(system.processes(name)[0])
        done.append(now(f"one {name} process killed and restarted"))
    pause()
    system.processes("gateway")[1].kill()
    done.append(now("a gateway killed"))
    return done


def test_bot_games_lose_nothing_acknowledged_through_failovers_and_kills(system: System) -> None:
    enough = threading.Event()
    bots = [
        Bot(
            Client(system.gateway_target, api_key=system.api_key, attempts=ATTEMPTS),
            3 + n % 4,
            random.Random(n),
            enough,
        )
        for n in range(GAMES)
    ]
    threads = [threading.Thread(target=bot.run, daemon=True) for bot in bots]
    for thread in threads:
        thread.start()
    done = faults(system, enough)
    enough.set()
    deadline = time.monotonic() + 600
    for thread in threads:
        thread.join(timeout=max(deadline - time.monotonic(), 1))
    failures = [repr(bot.error) for bot in bots if bot.error]
    assert not failures, f"after {done}: {failures}"
    games = [game for bot in bots for game in bot.games]
    assert all(game.ended for game in games), f"games still going after {done}"
    for at, what in done:  # the games went on through each fault
        assert any(a > at for bot in bots for a in bot.acknowledged_at), f"nothing after {what}"

    stored = asyncio.run(read_games(system, [game.game_id for game in games]))
    reader = bots[0].client
    for game in games:
        log = stored[game.game_id]
        versions = [logged.version for logged in log]
        assert versions == list(range(1, len(log) + 1)), f"{game.game_id}: a gap or a duplicate"
        types = {logged.version: type(logged.event).__name__ for logged in log}
        lost = {v: t for v, t in game.acknowledged.items() if types.get(v) != t}
        assert not lost, f"{game.game_id}: acknowledged events missing or changed: {lost}"
        seat = next(iter(game.seats.values()))
        state = reader.with_credential(seat.credential or "").state(game.game_id)
        folded = undo.state_of(log)
        assert state.version == len(log)
        assert state.state == wire.struct(state_document(folded)), game.game_id
        assert folded.result is not None, f"{game.game_id} has no result"
    for bot in bots:
        bot.client.close()


async def read_games(system: System, game_ids: list[str]) -> dict[str, list[Logged]]:
    redis = redis_client(system.env["REDIS_URL"])
    store = EventStore(redis, "game")
    try:
        return {
            game_id: [
                Logged(stored.version, to_domain(stored), stored.cause)
                for stored in await store.read(game_id)
            ]
            for game_id in game_ids
        }
    finally:
        await redis.aclose()
