"""Benchmark: deciding commands and folding events of whole random games (pure domain).

Random 4-player games are played with `tools.bots`, then timed in process (processor time,
the best of a few rounds):

- decide: every command of each game decided on the state before it and its events folded
  onto that state, as the rules service does; commands per second.
- fold: each game's whole log folded from nothing, as when a game is loaded; events per second.

Usage: python bench/bench_rules.py [--games N] [--repeats R] [--profile]
(--profile: cProfile over the decide loop instead, the functions taking most time first.)
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from services.rules.domain.commands import Command, CreateGame
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.events import Event, SeatedPlayer
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from tools.bots import choose, command_for

GAMES = 20
REPEATS = 3

Game = tuple[list[Command], list[Event]]


def random_game(seed: int) -> Game:
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


def decide_all(commands: list[Command]) -> None:
    state = GameState()
    for command in commands:
        state = fold(decide(state, command), state)


def timed(run: Callable[[], object]) -> float:
    """The processor time `run` takes: a rate per core, whatever else the machine runs."""
    start = time.process_time()
    run()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=GAMES)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    games = [random_game(seed) for seed in range(args.games)]
    events = sum(len(log) for _c, log in games)
    commands = sum(len(c) for c, _l in games)
    print(f"{args.games} random 4-player games: {commands} commands, {events} events")

    if args.profile:
        profile = cProfile.Profile()
        for command_list, _log in games:
            profile.runcall(decide_all, command_list)
        stats = pstats.Stats(profile)
        stats.sort_stats("cumulative").print_stats(30)
        stats.sort_stats("tottime").print_stats(20)
        return

    decide_times = [[timed(partial(decide_all, c)) for c, _l in games] for _ in range(args.repeats)]
    fold_times = [[timed(partial(fold, log)) for _c, log in games] for _ in range(args.repeats)]
    decide_best = min(decide_times, key=sum)
    fold_best = min(fold_times, key=sum)
    print(
        f"decide: {commands / sum(decide_best):,.0f} commands/s, each decided and its events "
        f"folded (median game {statistics.median(decide_best) * 1000:.1f} ms)"
    )
    print(
        f"fold:   {events / sum(fold_best):,.0f} events/s, whole logs "
        f"(median game {statistics.median(fold_best) * 1000:.1f} ms)"
    )


if __name__ == "__main__":
    main()
