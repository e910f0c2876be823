"""The game repository's own logic on the event log in memory (infra/eventlog.py), which keeps
the log's contract (tests/test_eventstore.py): exactly-once command ids, a decision made again
when another writer got there first, the states and timelines it keeps, undo. Milliseconds each;
the same on Redis is tests/reliability/test_concurrency.py and tests/rules/test_timeline.py."""

from __future__ import annotations

import asyncio
import random

import pytest
from prometheus_client import REGISTRY

from infra.eventlog import EventLog, MemoryEventLog
from kernel.rejection import Kind, Rejected
from services.rules.domain import events as ev
from services.rules.domain.commands import Command, CreateGame, PlaceBid, PlayerCommand, Undo
from services.rules.domain.decide import legal_actions
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from services.rules.shell.repository import MAX_ATTEMPTS, GameRepository, to_domain
from tools.bots import choose, command_for

PLAYERS = tuple(ev.SeatedPlayer(seat, f"p{seat}") for seat in (1, 2, 3))


def a_log() -> EventLog:
    return MemoryEventLog("game")


def legal(state: GameState, rng: random.Random) -> PlayerCommand:
    return command_for(choose(legal_actions(state), rng), rng, state)


async def new_game(games: GameRepository, game_id: str = "g-1", undo: bool = False) -> None:
    await games.execute(game_id, CreateGame(PLAYERS, seed=7, undo_allowed=undo))


async def play(games: GameRepository, game_id: str, commands: int, rng: random.Random) -> int:
    """Plays `commands` random legal commands; returns the seat that played the last one."""
    seat = 0
    for _ in range(commands):
        command = legal((await games.load(game_id)).state, rng)
        await games.execute(game_id, command)
        seat = command.seat
    return seat


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_a_command_id_sent_again_is_answered_with_what_it_wrote_and_writes_nothing() -> None:
    log = a_log()
    games = GameRepository(log)
    await new_game(games)
    (seat,) = (await games.load("g-1")).state.acting_seats
    first = await games.execute("g-1", PlaceBid(seat, "MF", 35), None, "cmd-7")
    version = await log.version("g-1")
    again = await GameRepository(log).execute("g-1", PlaceBid(seat, "MF", 35), None, "cmd-7")
    assert [(e.version, e.type, e.payload) for e in again.events] == [
        (e.version, e.type, e.payload) for e in first.events
    ]
    with pytest.raises(Rejected) as refused:
        await games.execute("g-1", PlaceBid(seat, "MF", 40), None, "cmd-7")
    assert (refused.value.reason, refused.value.kind) == (
        "COMMAND_ID_REUSED",
        Kind.INVALID_ARGUMENT,
    )
    assert refused.value.details["first_version"] == str(first.events[0].version)
    assert await log.version("g-1") == version  # nothing written by either


async def test_one_command_id_sent_fifty_times_at_once_is_applied_once() -> None:
    log = a_log()
    await new_game(GameRepository(log))
    before = await log.version("g-1")
    (seat,) = (await GameRepository(log).load("g-1")).state.acting_seats
    # Fifty replicas of the rules service, each with its own view of the game.
    answers = await asyncio.gather(
        *(
            GameRepository(log).execute("g-1", PlaceBid(seat, "MF", 35), None, "cmd-42")
            for _ in range(50)
        )
    )
    assert await log.version("g-1") == before + 1
    assert all(
        [(e.version, e.type) for e in answer.events] == [(before + 1, "BidPlaced")]
        for answer in answers
    )


async def test_a_command_decided_on_a_state_another_writer_moved_past_is_decided_again() -> None:
    """While this repository decides, another (another rules process) appends: the append at
    the stale version is refused, and the command is decided again on the new state."""
    log, rng = a_log(), random.Random(5)
    mine, theirs = GameRepository(log), GameRepository(log)
    await new_game(mine)
    seen: list[int] = []

    async def prepare(state: GameState, command: Command) -> Command:
        seen.append(len(seen))
        if len(seen) == 1:
            await theirs.execute("g-1", legal(state, rng))
        return legal(state, rng)

    before = await log.version("g-1")
    retries = sample("shikoku_command_retries_total")
    written = await mine.execute("g-1", PlaceBid(1, "MF", 35), prepare)
    assert len(seen) == 2  # decided twice
    assert sample("shikoku_command_retries_total") == retries + 1
    assert written.events[0].version == before + 2  # after theirs
    stored = await log.read("g-1")
    assert [e.version for e in stored] == list(range(1, len(stored) + 1))
    assert (await mine.load("g-1")).state == fold(to_domain(e) for e in stored)


async def test_a_game_that_changes_on_every_attempt_is_contended_and_nothing_is_written() -> None:
    log, rng = a_log(), random.Random(6)
    mine, theirs = GameRepository(log), GameRepository(log)
    await new_game(mine)
    attempts = 0

    async def prepare(state: GameState, command: Command) -> Command:
        nonlocal attempts
        attempts += 1
        await theirs.execute("g-1", legal(state, rng))
        return legal(state, rng)

    before = await log.version("g-1")
    with pytest.raises(Rejected) as contended:
        await mine.execute("g-1", PlaceBid(1, "MF", 35), prepare)
    assert (contended.value.reason, contended.value.kind) == ("CONTENDED", Kind.ABORTED)
    assert attempts == MAX_ATTEMPTS
    # Only theirs: one batch per attempt (each one event or more), none of mine.
    causes = [e.cause for e in await log.read("g-1", before + 1) if e.cause is not None]
    assert len(causes) == MAX_ATTEMPTS


async def test_the_kept_state_goes_on_from_what_others_wrote_and_is_bounded() -> None:
    log, rng = a_log(), random.Random(7)
    kept = GameRepository(log, cached_games=2)
    for game_id in ("g-1", "g-2", "g-3"):
        await new_game(kept, game_id)
    assert kept.cached_games == 2
    await play(kept, "g-3", 3, rng)
    await play(GameRepository(log), "g-3", 4, rng)  # another process moves the game on
    loaded = await kept.load("g-3")
    fresh = await GameRepository(log).load("g-3")
    assert (loaded.version, loaded.state) == (fresh.version, fresh.state)
    assert loaded.version == await log.version("g-3")
    # g-1, the least recently used, was pushed out: loaded again from the log.
    assert (await kept.load("g-1")).state == (await GameRepository(log).load("g-1")).state
    assert kept.cached_games == 2


async def test_a_state_at_a_version_and_an_unknown_game() -> None:
    log, rng = a_log(), random.Random(8)
    games = GameRepository(log)
    await new_game(games)
    at_creation = await games.load("g-1")
    await play(games, "g-1", 3, rng)
    assert (await games.load("g-1", at_creation.version)).state == at_creation.state
    for ask in (games.load("g-none"), games.load("g-1", 10_000), games.timeline("g-none")):
        with pytest.raises(Rejected) as missing:
            await ask
        assert (missing.value.reason, missing.value.kind) == ("GAME_NOT_FOUND", Kind.NOT_FOUND)


async def test_undo_takes_the_last_command_back_and_the_kept_timeline_follows() -> None:
    log, rng = a_log(), random.Random(3)
    kept = GameRepository(log)
    await new_game(kept, undo=True)
    first = await kept.timeline("g-1")
    assert [m.actor for m in first] == [None]  # the creation
    await play(kept, "g-1", 8, rng)
    before_last = await kept.load("g-1")
    after = await kept.timeline("g-1")
    last_seat = await play(kept, "g-1", 1, rng)
    assert len(await kept.timeline("g-1")) == len(after) + 1

    undone = await kept.execute("g-1", Undo(last_seat))
    assert [e.type for e in undone.events] == ["Undone"]
    assert (await kept.load("g-1")).state == before_last.state
    assert (await GameRepository(log).load("g-1")).state == before_last.state
    assert await kept.timeline("g-1") == after == await GameRepository(log).timeline("g-1")
    await play(kept, "g-1", 3, rng)
    assert await kept.timeline("g-1") == await GameRepository(log).timeline("g-1")
