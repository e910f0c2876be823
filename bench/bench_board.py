"""Benchmark of the legal-lay enumeration on the busiest board of the shared 18xx.games logs.

For every corporation: the median time of `legal_lays` on a fresh copy of the position (so
nothing computed for one call is reused by the next, as for a new position after each event),
and the median time for all seven in a row. The title's upgrade tables are warmed first; the
first, cold call is printed separately.

Usage: python bench/bench_board.py [--repeats R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from services.rules.board import (
    Actor,
    Position,
    Situation,
    apply_lay,
    legal_lays,
    legal_tokens,
)
from tests.board.games import game_files, moments

CASH = 10_000


def busiest() -> tuple[str, int, Position, Situation]:
    """The position with the most tiles on the map in any shared game, after its lay."""
    best: tuple[str, int, Position, Situation] | None = None
    for path in game_files():
        for moment in moments(path):
            move = moment.move
            if move is None or move.lay is None:
                continue
            lay = move.lay
            position = apply_lay(moment.position, lay.hex, lay.tile, lay.rotation)
            if best is None or len(position.tiles) >= len(best[2].tiles):
                best = (path.stem, moment.action["id"], position, moment.situation)
    assert best is not None, "no tile lay in the shared games"
    return best


def fresh(position: Position) -> Position:
    return Position(
        title=position.title, tiles=position.tiles, tokens=position.tokens, supply=position.supply
    )


def timed_ms(position: Position, situation: Situation, corporation: str) -> tuple[float, int]:
    start = time.perf_counter()
    count = len(legal_lays(position, situation, Actor(corporation, CASH)))
    return (time.perf_counter() - start) * 1000, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()

    game, action, position, situation = busiest()
    corporations = sorted(position.title.corporations)
    tokens = sum(len(position.token_cities(c)) for c in corporations)
    print(
        f"position: game {game} after action {action}: {len(position.tiles)} tiles, "
        f"{tokens} station tokens, phase {situation.phase}"
    )
    cold, _ = timed_ms(fresh(position), situation, corporations[0])
    print(f"cold first call ({corporations[0]}, builds the upgrade tables): {cold:.2f} ms")
    for corporation in corporations:
        timed_ms(fresh(position), situation, corporation)

    print(f"{'corporation':<12}{'lays':>6}{'tokens':>8}{'median ms':>12}")
    for corporation in corporations:
        runs = [timed_ms(fresh(position), situation, corporation) for _ in range(args.repeats)]
        token_count = len(legal_tokens(position, Actor(corporation, CASH)))
        median = statistics.median(ms for ms, _ in runs)
        print(f"{corporation:<12}{runs[0][1]:>6}{token_count:>8}{median:>12.2f}")

    totals = []
    for _ in range(args.repeats):
        copy = fresh(position)
        start = time.perf_counter()
        for corporation in corporations:
            legal_lays(copy, situation, Actor(corporation, CASH))
        totals.append((time.perf_counter() - start) * 1000)
    median = statistics.median(totals)
    print(f"all {len(corporations)} corporations, one position: median {median:.2f} ms")


if __name__ == "__main__":
    main()
