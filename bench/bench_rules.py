"""Benchmark: deciding commands and folding events of whole random games (pure domain)."""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from services.rules.domain.commands import Command, CreateGame
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.events import Event, SeatedPlayer
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from tools.bots import choose, command_for

GAMES = 20


def random_game(seed: int) -> tuple[list[Command], list[Event]]:
    rng = random.Random(seed)
    players = tuple(SeatedPlayer(s, f"p{s}") for s in range(1, 5))
    create = CreateGame(players=players, seed=seed)
    commands: list[Command] = [create]
    log = decide(GameState(), create)
    state = fold(log)
    while state.result is None:
        command = command_for(choose(legal_actions(state), rng), rng, state)
        events = decide(state, command)
        commands.append(command)
        log += events
        state = fold(events, state)
    return commands, log


def main() -> None:
    games = [random_game(seed) for seed in range(GAMES)]
    events = sum(len(log) for _c, log in games)
    commands = sum(len(c) for c, _l in games)

    fold_times = []
    for _commands, log in games:
        start = time.perf_counter()
        fold(log)
        fold_times.append(time.perf_counter() - start)
    decide_times = []
    for command_list, _log in games:
        state = GameState()
        start = time.perf_counter()
        for command in command_list:
            state = fold(decide(state, command), state)
        decide_times.append(time.perf_counter() - start)

    print(f"{GAMES} random 4-player games: {commands} commands, {events} events")
    print(
        f"fold:   {events / sum(fold_times):,.0f} events/s "
        f"(median game {statistics.median(fold_times) * 1000:.1f} ms)"
    )
    print(
        f"decide: {commands / sum(decide_times):,.0f} commands/s, decide+fold "
        f"(median game {statistics.median(decide_times) * 1000:.1f} ms)"
    )


if __name__ == "__main__":
    main()
