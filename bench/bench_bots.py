"""Benchmark of the SDK's heuristic player (shikoku_sdk/heuristic.py) in self-play, in process.

- against three random bots, 4 players, its seat rotating: the share of games where it ends
  with the highest net worth (target: at least 90%);
- heuristic-only games of 3 to 5 players: the share that end by the bank breaking (target: at
  least 70%) and the share where a D train ran (target: at least 50%);
- the heuristic's moves per second (its decisions only, routes from the in-process solver
  included).

Usage: python bench/bench_bots.py [--games N] [--seed S]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from services.rules.domain import commands as cmd
from services.rules.domain.commands import Command, CreateGame
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.events import SeatedPlayer
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from tools.bots import choose, command_for, strategy_command


@dataclass
class Played:
    final: GameState
    d_ran: bool
    heuristic_moves: int
    heuristic_seconds: float


def play(bots: Sequence[str], seed: int) -> Played:
    """One game, the seats playing `bots` in order, as `shikoku selfplay --bots` plays it."""
    rng = random.Random(seed)
    seated = tuple(SeatedPlayer(s, f"bot {s}") for s in range(1, len(bots) + 1))
    command: Command = CreateGame(players=seated, seed=seed, rules_profile="18xx.games")
    state = GameState()
    played = Played(state, False, 0, 0.0)
    while True:
        state = fold(decide(state, command), state)
        if state.result is not None:
            played.final = state
            return played
        options = legal_actions(state)
        seat = options[0].seat
        mine = [o for o in options if o.seat == seat]
        if bots[seat - 1] == "heuristic":
            begin = time.perf_counter()
            command = strategy_command("heuristic", state, mine, rng)
            played.heuristic_seconds += time.perf_counter() - begin
            played.heuristic_moves += 1
        else:
            command = command_for(choose(mine, rng), rng, state)
        if isinstance(command, cmd.RunRoutes) and any(
            run.train == "D" for run in command.priced or ()
        ):
            played.d_ran = True


def richest(final: GameState) -> set[int]:
    assert final.result is not None
    top = max(worth for _, worth in final.result.net_worths)
    return {seat for seat, worth in final.result.net_worths if worth == top}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games of each kind")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    moves, seconds = 0, 0.0
    wins = 0
    for game in range(args.games):
        seat = game % 4 + 1
        bots = ["random"] * 4
        bots[seat - 1] = "heuristic"
        played = play(bots, args.seed + game)
        wins += seat in richest(played.final)
        moves, seconds = moves + played.heuristic_moves, seconds + played.heuristic_seconds
    print(
        f"heuristic vs 3 random (4 players, {args.games} games): richest in {wins / args.games:.0%}"
    )
    bank = d_ran = 0
    reasons: dict[str, int] = {}
    for game in range(args.games):
        players = 3 + game % 3
        played = play(["heuristic"] * players, args.seed + game)
        assert played.final.result is not None
        reason = played.final.result.reason
        reasons[reason] = reasons.get(reason, 0) + 1
        bank += reason == "bank"
        d_ran += played.d_ran
        moves, seconds = moves + played.heuristic_moves, seconds + played.heuristic_seconds
    print(
        f"heuristic only (3-5 players, {args.games} games): ended by the bank breaking "
        f"{bank / args.games:.0%}, a D train ran {d_ran / args.games:.0%} (ends: {reasons})"
    )
    print(
        f"heuristic moves: {moves / seconds:.0f} per second ({1000 * seconds / moves:.2f} ms each)"
    )


if __name__ == "__main__":
    main()
