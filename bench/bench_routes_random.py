"""Benchmark of the route solver on generated boards.

Two kinds of board, both of flat-topped hexes in doubled rows, edges 0-5 clockwise from south:

- `map`: the 1889 map's hexes and revenue centres (52 hexes, 25 centres) in a late-game state:
  cities on green or brown tiles, most plain hexes carrying track (plain, junction or brown
  triple-path tiles), the gray and off-board hexes as printed.
- `mesh`: a 12x12 grid with 40 randomly placed revenue centres and track on most other hexes.

Tiles are drawn from the usual 18xx shapes and rotated by a few rounds of local search so that
their exits meet their neighbours' (dead ends remain, as on real boards). The corporation has
some tokens; some other cities are blocked. Revenues are late-game values; off-boards pay more
to D-trains.

Each board is solved with a deadline (`--timeout`, 1 s by default) on the solver's own CPU
time, so that other work on a shared machine does not decide which boards are proven (`--wall`
for a wall-clock deadline, as the service has); "unproven N of M" counts the boards where it cut
the search short. Times are the solver's CPU time, the median of `--repeats` runs (a single run
when one is slow). With no arguments (`make bench`) every train set runs on both kinds, 10
boards each, the mesh boards with D-trains among them (the figure of issue 28).

Usage: python bench/bench_routes_random.py [--kind map|mesh] [--boards N] [--repeats R]
       [--seed S] [--trains 4,5,D ...] [--density F] [--timeout SECONDS] [--wall]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from infra.deadlines import seconds_from_now
from services.routes.engine.deadline import Deadline
from services.routes.engine.graph import Node, NodeKind, Segment, TrackGraph, Train
from services.routes.engine.solver import solve
from services.routes.engine.validation import NodeRoute, evaluate

STEPS = ((0, 2), (-1, 1), (-1, -1), (0, -2), (1, -1), (1, 1))

Cell = tuple[int, int]
End = int | str  # an edge number, or "C" for the hex's revenue centre
Shape = tuple[tuple[End, End], ...]

#: Plain track tiles as drawn at rotation 0 (yellow, green with junctions, brown).
TRACK: tuple[Shape, ...] = (
    ((0, 1),),
    ((0, 2),),
    ((0, 2),),
    ((0, 3),),
    ((0, 3),),
    ((0, 2), (1, 3)),
    ((0, 3), (2, 4)),
    ((0, 3), (1, 4)),
    ((0, 3), (0, 4)),
    ((0, 3), (0, 2)),
    ((0, 2), (0, 4)),
    ((0, 3), (0, 5)),
    ((0, 3), (0, 1)),
    ((0, 4), (0, 5)),
    ((0, 2), (0, 1)),
    ((0, 2), (0, 1), (1, 2)),
    ((0, 2), (2, 4), (0, 4)),
    ((0, 3), (0, 1), (1, 3)),
    ((0, 3), (3, 5), (0, 5)),
    ((0, 3), (2, 4), (0, 4), (2, 3)),
    ((0, 3), (2, 4), (3, 4), (0, 2)),
    ((0, 3), (1, 4), (1, 3), (0, 4)),
)
#: Green and brown city tiles: the edges joined to the city.
CITY_EXITS: tuple[tuple[int, ...], ...] = (
    (0, 1, 2),
    (0, 2, 4),
    (0, 1, 3),
    (0, 5, 3),
    (0, 1, 3, 4),
    (0, 1, 2, 3),
    (0, 1, 2, 3),
    (0, 1, 2, 3),
    (0, 1, 2, 3, 4),
    (0, 1, 2, 3, 4),
)
TOWN_SHAPES: tuple[Shape, ...] = ((("C", 0), ("C", 1)), (("C", 0), ("C", 2)))


def _city(exits: Sequence[int]) -> Shape:
    return tuple(("C", e) for e in exits)


def _name(col: int, row: int) -> str:
    return f"{chr(ord('A') + col)}{row}"


def _cell(name: str) -> Cell:
    return ord(name[0]) - ord("A"), int(name[1:])


@dataclass(frozen=True)
class Hex:
    """What may go on a hex: `kind` of centre ("" for none), the tile shapes it may take and
    whether they may be rotated."""

    kind: str
    shapes: tuple[Shape, ...]
    rotate: bool = True
    value: int = 0
    d_value: int | None = None


def _rotated(shape: Shape, rot: int) -> Shape:
    return tuple(
        tuple((e + rot) % 6 if isinstance(e, int) else e for e in path)  # type: ignore[misc]
        for path in shape
    )


def _options(spec: Hex) -> list[Shape]:
    rots = range(6) if spec.rotate else range(1)
    return [_rotated(s, r) for s in spec.shapes for r in rots]


def _exits(shape: Shape) -> set[int]:
    return {e for path in shape for e in path if isinstance(e, int)}


def lay_tiles(rng: random.Random, board: dict[Cell, Hex], rounds: int = 4) -> dict[Cell, Shape]:
    """Choose a shape and rotation per hex so that exits meet neighbouring exits."""
    options = {cell: _options(spec) for cell, spec in board.items()}
    laid = {cell: rng.choice(opts) if opts else () for cell, opts in options.items()}
    cells = sorted(board)
    for _ in range(rounds):
        rng.shuffle(cells)
        for cell in cells:
            if len(options[cell]) <= 1:
                continue
            best: tuple[float, Shape] | None = None
            for shape in options[cell]:
                score = rng.random()
                for e in _exits(shape):
                    dc, dr = STEPS[e]
                    there = (cell[0] + dc, cell[1] + dr)
                    if there not in board:
                        score -= 3
                    elif (e + 3) % 6 in _exits(laid[there]):
                        score += 2
                    else:
                        score -= 1
                if best is None or score > best[0]:
                    best = (score, shape)
            assert best is not None
            laid[cell] = best[1]
    return laid


def map_board(rng: random.Random, density: float) -> dict[Cell, Hex]:
    """The 1889 map in a late-game state."""
    board: dict[str, Hex] = {}
    plain = [
        "D3",
        "H3",
        "J3",
        "B5",
        "C8",
        "E8",
        "I8",
        "D9",
        "I10",
        "K6",
        "H5",
        "I6",
        "E4",
        "D5",
        "F5",
        "C6",
        "E6",
        "G6",
        "D7",
        "F7",
        "A8",
        "G8",
        "B9",
        "H9",
        "H11",
        "H13",
    ]
    for name in plain:
        board[name] = Hex("", TRACK if rng.random() < density else ())
    for name in ["F3", "G4", "H7", "A10", "J11", "G12", "E2", "I2", "K8", "C10"]:
        board[name] = Hex("city", tuple(_city(x) for x in CITY_EXITS), value=rng.choice((30, 40)))
    board["C4"] = Hex("city", tuple(_city(x) for x in CITY_EXITS if 2 in x), False, 40)
    board["I4"] = Hex("city", (_city(range(6)),), False, 80)
    board["K4"] = Hex("city", (_city((0, 1, 2)),), False, 60)
    board["F9"] = Hex("city", (_city((2, 3, 4, 5)),), False, 60)
    board["B7"] = Hex("city", (_city((1, 3, 5)),), False, 40)
    for name in ["J5", "B11", "G10", "I12", "J9"]:
        board[name] = Hex("town", TOWN_SHAPES, value=rng.choice((10, 20, 30)))
    board["B3"] = Hex("town", ((("C", 0), ("C", 5)),), False, 20)
    board["G14"] = Hex("town", ((("C", 3), ("C", 4)),), False, 20)
    board["J7"] = Hex("", (((1, 5),),), False)
    board["F1"] = Hex("offboard", (_city((0, 1)),), False, 60, 100)
    board["J1"] = Hex("offboard", (_city((0, 1)),), False, 40, 80)
    board["L7"] = Hex("offboard", (_city((1, 2)),), False, 40, 80)
    return {_cell(name): spec for name, spec in board.items()}


def mesh_board(
    rng: random.Random, density: float, cols: int = 12, rows: int = 12
) -> dict[Cell, Hex]:
    """A `cols` x `rows` grid with 30 cities, 6 towns and 4 off-boards at the map edge."""
    cells = [(c, c % 2 + 2 * k) for c in range(cols) for k in range(rows)]
    on_board = set(cells)
    edge_cells = [
        c for c in cells if any((c[0] + dc, c[1] + dr) not in on_board for dc, dr in STEPS)
    ]
    offboards = rng.sample(edge_cells, 4)
    rest = [c for c in cells if c not in offboards]
    centres = rng.sample(rest, 36)
    board: dict[Cell, Hex] = {}
    for cell in cells:
        if cell in offboards:
            value = rng.choice((40, 60))
            board[cell] = Hex(
                "offboard", tuple(_city(x) for x in ((0, 1), (0, 2))), True, value, value + 40
            )
        elif cell in centres[:30]:
            board[cell] = Hex(
                "city", tuple(_city(x) for x in CITY_EXITS), value=rng.choice((30, 40, 40, 50, 60))
            )
        elif cell in centres[30:]:
            board[cell] = Hex("town", TOWN_SHAPES, value=rng.choice((10, 20)))
        else:
            board[cell] = Hex("", TRACK if rng.random() < density else ())
    return board


def to_graph(
    rng: random.Random,
    board: dict[Cell, Hex],
    laid: dict[Cell, Shape],
    trains: tuple[Train, ...],
    tokens: int,
    blocked: float,
) -> TrackGraph:
    nodes: dict[str, Node] = {}
    segments: list[Segment] = []
    cities = sorted(c for c, spec in board.items() if spec.kind == "city")
    token_cells = set(rng.sample(cities, tokens))
    for cell in sorted(board):
        spec, name = board[cell], _name(*cell)
        if spec.kind == "city":
            nodes[name] = Node(
                name,
                NodeKind.CITY,
                name,
                spec.value,
                token=cell in token_cells,
                blocked=cell not in token_cells and rng.random() < blocked,
            )
        elif spec.kind == "town":
            nodes[name] = Node(name, NodeKind.TOWN, name, spec.value)
        elif spec.kind == "offboard":
            nodes[name] = Node(
                name,
                NodeKind.OFFBOARD,
                name,
                spec.value,
                {"D": spec.d_value} if spec.d_value else {},
            )
        for i, path in enumerate(laid[cell]):
            ends: list[str] = []
            for end in path:
                if isinstance(end, str):
                    ends.append(name)
                    continue
                dc, dr = STEPS[end]
                there = (cell[0] + dc, cell[1] + dr)
                if there in board:
                    a, b = sorted((name, _name(*there)))
                    sid = f"{a}|{b}"
                else:
                    sid, a = f"{name}/{end}", name
                nodes.setdefault(sid, Node(sid, NodeKind.SIDE, a))
                ends.append(sid)
            segments.append(Segment(f"{name}:{i}", name, ends[0], ends[1]))
    return TrackGraph(tuple(nodes.values()), tuple(segments), trains)


def random_graph(
    seed: int, kind: str, trains: tuple[Train, ...], density: float | None = None
) -> TrackGraph:
    rng = random.Random(seed)
    if kind == "map":
        board = map_board(rng, 0.85 if density is None else density)
        tokens = 2
    else:
        board = mesh_board(rng, 0.75 if density is None else density)
        tokens = 3
    laid = lay_tiles(rng, board)
    return to_graph(rng, board, laid, trains, tokens, blocked=0.15)


class CpuDeadline:
    """Passed once this process has spent `seconds` of CPU time from now."""

    def __init__(self, seconds: float) -> None:
        self._at = time.process_time() + seconds

    def passed(self) -> bool:
        return time.process_time() >= self._at


def parse_trains(text: str) -> tuple[Train, ...]:
    return tuple(Train(t, None if t == "D" else int(t)) for t in text.split(","))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--kind", choices=("map", "mesh"), action="append", default=None)
    parser.add_argument("--boards", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3, help="runs per board (one if slow)")
    parser.add_argument("--seed", type=int, default=1889)
    parser.add_argument(
        "--trains",
        action="append",
        default=None,
        help="comma-separated train list; may be given several times",
    )
    parser.add_argument("--density", type=float, default=None)
    parser.add_argument("--timeout", type=float, default=1.0, help="deadline per solve, s")
    parser.add_argument("--wall", action="store_true", help="the deadline on wall-clock time")
    args = parser.parse_args()
    train_sets = args.trains or ["2,2,3", "3,3,4", "4,4,5", "5,6", "D", "6,D", "4,5,D", "D,D"]
    for kind in args.kind or ["map", "mesh"]:
        print(f"== {kind} boards: {args.boards} boards, median of {args.repeats} runs each")
        print(
            f"{'trains':<8} {'median ms':>9} {'p90 ms':>8} {'max ms':>8} {'unproven':>12} "
            f"{'revenue':>11} {'candidates median/max':>22}"
        )
        for text in train_sets:
            _bench(kind, parse_trains(text), text, args)


def _bench(kind: str, trains: tuple[Train, ...], text: str, args: argparse.Namespace) -> None:
    times: list[float] = []
    revenues: list[int] = []
    candidates: list[int] = []
    unproven = 0
    for b in range(args.boards):
        graph = random_graph(args.seed * 1000 + b, kind, trains, args.density)
        runs: list[float] = []
        while len(runs) < args.repeats and sum(runs) < 0.2:
            deadline: Deadline = (
                seconds_from_now(args.timeout) if args.wall else CpuDeadline(args.timeout)
            )
            t0 = time.process_time()
            solution = solve(graph, deadline=deadline)
            runs.append(time.process_time() - t0)
        unproven += not solution.proven
        check = evaluate(graph, [NodeRoute(r.train, r.nodes) for r in solution.routes])
        assert check.ok and check.revenue == solution.revenue, check
        times.append(statistics.median(runs) * 1000)
        revenues.append(solution.revenue)
        candidates.append(solution.candidates)
    times.sort()
    proof = f"{unproven} of {len(times)}"
    print(
        f"{text:<8} {statistics.median(times):9.1f} {times[int(0.9 * (len(times) - 1))]:8.1f} "
        f"{times[-1]:8.1f} {proof:>12} {min(revenues):5d}..{max(revenues):<5d} "
        f"{int(statistics.median(candidates)):>11d}/{max(candidates):<10d}"
    )


if __name__ == "__main__":
    main()
