"""Benchmark: the route solver on real positions.

Every moment of the shared real games where a corporation ran trains (the position rebuilt by
replaying the game), plus the late-game board of game 314 with every corporation running
Diesels. Prints revenue, median solve time over repeats and candidate routes considered.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from services.routes.engine.graph import TrackGraph, Train
from services.routes.engine.solver import solve
from services.rules.domain.route_pricing import corporation_graph
from services.rules.domain.state import GameState, OperatingRound, Step
from tests.shared import site_game_files
from tools.sitelog.export_format import load
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import step_through

REPEATS = 7
GOAL_MEDIAN_MS, GOAL_MAX_MS, GOAL_LATE_D_MS = 5.0, 50.0, 100.0


def timed(graph: TrackGraph) -> tuple[int, float, int]:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        solution = solve(graph)
        times.append((time.perf_counter() - start) * 1000)
    return solution.revenue, statistics.median(times), solution.candidates


def _tiles(state: GameState) -> int:
    return len(state.board.tiles) if state.board else -1


def real_positions() -> tuple[list[tuple[str, TrackGraph]], GameState]:
    """Each moment a corporation is about to run trains, and the busiest board of all."""
    found = []
    busiest = GameState()
    for path in site_game_files():
        game = load(path)
        table = InProcessTable(game)
        for action in step_through(game, table):
            state = table.state
            if _tiles(state) > _tiles(busiest):
                busiest = state
            round_ = state.round
            if isinstance(round_, OperatingRound) and round_.current and round_.step is Step.ROUTES:
                graph = corporation_graph(state, round_.current)
                found.append((f"{game.id}#{action['id']} {round_.current}", graph))
    return found, busiest


def main() -> None:
    positions, final = real_positions()
    rows = [(name, *timed(graph)) for name, graph in positions]
    print(f"{len(rows)} real positions (corporation about to run trains), median of {REPEATS}:")
    for name, revenue, ms, candidates in rows:
        print(f"  {name:<22} revenue {revenue:>4}  {ms:7.2f} ms  {candidates:>6} candidates")
    times = [ms for *_rest, ms, _c in rows]
    print(
        f"median {statistics.median(times):.2f} ms (goal < {GOAL_MEDIAN_MS}), "
        f"worst {max(times):.2f} ms (goal < {GOAL_MAX_MS})"
    )

    # The busiest board of the games with every corporation on it running two Diesels.
    worst = 0.0
    print("the late-game board, every corporation with two D-trains:")
    diesels = (Train("D", None), Train("D", None))
    for corporation in (c.id for c in final.corporations if c.tokens_placed):
        graph = dataclasses.replace(corporation_graph(final, corporation), trains=diesels)
        name = corporation
        revenue, ms, candidates = timed(graph)
        worst = max(worst, ms)
        print(f"  {name:<22} revenue {revenue:>4}  {ms:7.2f} ms  {candidates:>6} candidates")
    print(f"worst with D-trains {worst:.2f} ms (goal < {GOAL_LATE_D_MS})")


if __name__ == "__main__":
    main()
