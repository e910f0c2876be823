"""The solver on hand-made graphs: each rule shapes the optimum; ties; deadlines."""

from __future__ import annotations

import random
import time

import pytest

from infra.deadlines import MonotonicDeadline
from services.routes.engine.graph import Solution, TrackGraph, Train
from services.routes.engine.index import GraphError
from services.routes.engine.solver import solve
from services.routes.engine.validation import NodeRoute, evaluate

from .build import FOUR, THREE, TWO, Board, D
from .randgraph import random_graph
from .test_validation import junction, line, triangle


def runs(solution: Solution) -> list[tuple[int, tuple[str, ...], int]]:
    return [(r.train, r.nodes, r.revenue) for r in solution.routes]


def assert_legal(graph: TrackGraph, solution: Solution) -> None:
    check = evaluate(graph, [NodeRoute(r.train, r.nodes) for r in solution.routes])
    assert check.ok, check.violation
    assert check.revenue == solution.revenue == sum(r.revenue for r in solution.routes)
    assert [r.revenue for r in check.routes] == [r.revenue for r in solution.routes]


def test_no_trains_and_no_tokens_earn_nothing() -> None:
    assert solve(line()) == Solution((), 0, True, 0)
    b = Board()
    b.city("A")
    b.city("B")
    b.link("A", "B")
    assert solve(b.graph(TWO)) == Solution((), 0, True, 0)


def test_blocked_cities_end_routes_and_d_trains_value_off_boards() -> None:
    # A(20) B(10) C(30) D(40, blocked) F(50); C - E(30, D: 60) - G(10); tokens on A and C.
    # Best 3-stop routes: D-C-E (40 + 30 + 30), B-C-D (80), B-C-E (70), A-B-C (60).
    graph = line(THREE)
    solution = solve(graph)
    assert runs(solution) == [(0, ("D", "C|D", "C", "C|E", "E"), 100)]
    assert_legal(graph, solution)
    # A D-train counts E at 60; it still may not pass D (to F) or E (to G).
    assert runs(solve(line(D))) == [(0, ("D", "C|D", "C", "C|E", "E"), 130)]
    assert all("F" not in r.nodes for r in solve(line(D, D, D)).routes)


def test_two_trains_share_centres_but_not_track() -> None:
    graph = line(THREE, TWO)
    solution = solve(graph)
    # 3-train D-C-E (100), then the 2-train's best left: A-B (30) or B-C (40).
    assert [r.revenue for r in solution.routes] == [100, 40]
    assert_legal(graph, solution)


def test_the_solver_never_reverses_at_a_junction() -> None:
    graph = junction()  # tokens on R and S; T and U beyond the shared side J|K
    solution = solve(graph)
    assert solution.revenue == 30 + 50  # S-U; R-T would cross J|K again
    assert_legal(graph, solution)
    assert solve(TrackGraph(graph.nodes, graph.segments, (D,))).revenue == 80


def test_a_centre_is_counted_once_per_route() -> None:
    solution = solve(triangle())
    assert solution.revenue == 60
    assert len(solution.routes[0].nodes) == 5  # three centres, two sides


def test_identical_trains_take_distinct_routes_best_first() -> None:
    b = Board()
    b.city("H", 10, token=True)
    for name, value in (("P", 40), ("Q", 30), ("R", 20)):
        b.city(name, value)
        b.link("H", name)
    graph = b.graph(TWO, TWO, TWO, TWO)
    solution = solve(graph)
    assert [(r.train, r.revenue) for r in solution.routes] == [(0, 50), (1, 40), (2, 30)]
    assert_legal(graph, solution)


def test_ties_go_to_the_smallest_route_and_earlier_trains() -> None:
    # Two routes of equal revenue, H-Q (segments H:0, Q:0) and H-P (H:1, P:0). Routes compare
    # by node, segment, node, …: H = H, then H:0 < H:1, so H-Q is the smaller.
    b = Board()
    b.city("H", 10, token=True)
    b.city("Q", 30)
    b.city("P", 30)
    b.link("H", "Q")
    b.link("H", "P")
    assert [r.nodes for r in solve(b.graph(TWO)).routes] == [("H", "H|Q", "Q")]
    # A second identical train takes the other one.
    assert [r.nodes[-1] for r in solve(b.graph(TWO, TWO)).routes] == ["Q", "P"]
    # P-H-Q (70) for the 3-train alone loses to 40 + 40; the first train gets the smaller.
    mixed = solve(b.graph(TWO, THREE))
    assert runs(mixed) == [(0, ("H", "H|Q", "Q"), 40), (1, ("H", "H|P", "P"), 40)]


def test_a_route_is_written_in_its_smaller_direction() -> None:
    solution = solve(line(TWO))
    for route in solution.routes:
        assert route.nodes[0] < route.nodes[-1]


def test_the_answer_does_not_depend_on_the_order_of_the_input() -> None:
    rng = random.Random(5)
    for _ in range(30):
        graph = random_graph(rng)
        nodes, segments = list(graph.nodes), list(graph.segments)
        rng.shuffle(nodes)
        rng.shuffle(segments)
        shuffled = TrackGraph(tuple(nodes), tuple(segments), graph.trains)
        first, second = solve(graph), solve(shuffled)
        assert (first.routes, first.revenue) == (second.routes, second.revenue)


def test_an_expired_deadline_gives_a_legal_unproven_answer() -> None:
    graph = line(THREE, TWO)
    solution = solve(graph, deadline=MonotonicDeadline(time.monotonic() - 1))
    assert not solution.proven
    assert_legal(graph, solution)


def big_board() -> TrackGraph:
    """A dense grid: every hex a city joined to all six neighbours."""
    b = Board()
    names = [f"{chr(65 + c)}{r}" for c in range(6) for r in range(c % 2, 12, 2)]
    on = set(names)
    for i, name in enumerate(names):
        b.city(name, 10 + 10 * (i % 5), token=i % 7 == 0)
    for name in names:
        c, r = ord(name[0]) - 65, int(name[1:])
        for dc, dr in ((0, 2), (1, -1), (1, 1)):
            other = f"{chr(65 + c + dc)}{r + dr}"
            if other in on:
                b.link(name, other)
    return b.graph(FOUR, Train("5", 5), D)


def assert_stopped_in_time(graph: TrackGraph, budget: float) -> None:
    start, working = time.monotonic(), time.thread_time()
    solution = solve(graph, deadline=MonotonicDeadline(start + budget))
    # The search's own CPU time: on a shared machine its wall time also holds others' turns.
    worked = time.thread_time() - working
    assert not solution.proven
    assert worked < budget + 0.25, "the deadline is checked often"
    assert_legal(graph, solution)


@pytest.mark.parametrize("budget", [0.0, 0.02, 0.05])
def test_a_deadline_stops_a_long_search_with_a_legal_answer(budget: float) -> None:
    assert_stopped_in_time(big_board(), budget)


@pytest.mark.parametrize("budget", [0.0, 0.05, 0.1])
def test_a_deadline_stops_the_search_of_one_train_with_a_legal_answer(budget: float) -> None:
    # One D-train on the dense grid: the search from route ends, not the enumeration.
    board = big_board()
    assert_stopped_in_time(TrackGraph(board.nodes, board.segments, (D,)), budget)


def test_a_malformed_graph_is_refused() -> None:
    b = Board()
    b.city("A", token=True)
    b.track("A", "A", "nowhere")
    with pytest.raises(GraphError):
        solve(b.graph(TWO))
