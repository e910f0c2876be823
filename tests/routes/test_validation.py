"""Checking submitted routes: each rule on a hand-made graph, and each way to write a route."""

from __future__ import annotations

import pytest

from services.routes.engine.graph import TrackGraph, Train
from services.routes.engine.index import build_index
from services.routes.engine.rules import Reason, Walk, check_disjoint, check_walk
from services.routes.engine.validation import (
    ConnectionRoute,
    Evaluation,
    HexRoute,
    NodeRoute,
    SubmittedRoute,
    evaluate,
)

from .build import FOUR, THREE, TWO, Board, D


def line(*trains: Train) -> TrackGraph:
    """A(token, 20) - B(town, 10) - C(token, 30) - D(blocked, 40) - F(50), and
    C - E(off-board, 30 / 60 for D-trains) - G(10)."""
    b = Board()
    b.city("A", 20, token=True)
    b.town("B", 10)
    b.city("C", 30, token=True)
    b.city("D", 40, blocked=True)
    b.city("F", 50)
    b.offboard("E", 30, 60)
    b.city("G", 10)
    for x, y in [("A", "B"), ("B", "C"), ("C", "D"), ("D", "F"), ("C", "E"), ("E", "G")]:
        b.link(x, y)
    return b.graph(*trains)


def rejected(evaluation: Evaluation) -> tuple[Reason, int | None, str | None, str | None]:
    v = evaluation.violation
    assert v is not None, evaluation
    assert evaluation.routes == () and evaluation.revenue == 0
    return v.reason, v.train, v.node, v.hex


def revenues(evaluation: Evaluation) -> list[int]:
    assert evaluation.ok, evaluation.violation
    assert evaluation.revenue == sum(r.revenue for r in evaluation.routes)
    return [r.revenue for r in evaluation.routes]


# --- a legal route, written every way -----------------------------------------------------


FULL_ABC = ("A", "A|B", "B", "B|C", "C")


@pytest.mark.parametrize(
    "route",
    [
        NodeRoute(0, FULL_ABC),
        NodeRoute(0, FULL_ABC[::-1]),
        NodeRoute(0, ("A", "B", "C")),
        HexRoute(0, ("A", "B", "C")),
        HexRoute(0, ("C", "B", "A")),
        ConnectionRoute(0, (("A", "B"), ("B", "C"))),
        ConnectionRoute(0, (("B", "A"), ("B", "C"))),  # a piece written backwards
        ConnectionRoute(0, (("C", "B"), ("B", "A"))),
    ],
)
def test_a_legal_route_in_every_form(route: SubmittedRoute) -> None:
    result = evaluate(line(THREE), [route])
    assert revenues(result) == [60]
    assert set(result.routes[0].nodes) == set(FULL_ABC)
    assert result.routes[0].segments in (("A:0", "B:0", "B:1", "C:0"), ("C:0", "B:1", "B:0", "A:0"))


def test_no_routes_earn_nothing() -> None:
    assert evaluate(line(TWO), []) == Evaluation((), 0)


def test_d_trains_count_the_off_board_d_value() -> None:
    graph = line(FOUR, D)
    route = ("A", "B", "C", "E")
    assert revenues(evaluate(graph, [NodeRoute(0, route)])) == [20 + 10 + 30 + 30]
    assert revenues(evaluate(graph, [NodeRoute(1, route)])) == [20 + 10 + 30 + 60]


# --- each rule -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "trains", "expected"),
    [
        (NodeRoute(0, ("A",)), (TWO,), (Reason.TOO_FEW_STOPS, 0, None, None)),
        (NodeRoute(0, ("A", "B", "C")), (TWO,), (Reason.TOO_MANY_STOPS, 0, None, None)),
        (NodeRoute(1, ("G", "E")), (TWO, TWO), (Reason.NO_TOKEN, 1, None, None)),
        (NodeRoute(0, ("A", "B", "C", "D", "F")), (D,), (Reason.PASSES_BLOCKED_CITY, 0, "D", "D")),
        (NodeRoute(0, ("C", "E", "G")), (D,), (Reason.PASSES_OFFBOARD, 0, "E", "E")),
        (NodeRoute(0, ("A", "Z")), (D,), (Reason.UNKNOWN_NODE, 0, "Z", None)),
        (NodeRoute(0, ("A", "C")), (D,), (Reason.NOT_CONNECTED, 0, "C", "C")),
        (NodeRoute(0, ("A", "A|B", "C")), (D,), (Reason.NOT_CONNECTED, 0, "C", "C")),
        (NodeRoute(0, ("A", "A|B")), (D,), (Reason.ENDS_AT_SIDE, 0, "A|B", "A")),
        (NodeRoute(3, ("A", "B")), (D,), (Reason.UNKNOWN_TRAIN, 3, None, None)),
        (HexRoute(0, ("A", "Q")), (D,), (Reason.UNKNOWN_HEX, 0, None, "Q")),
        (HexRoute(0, ("A", "C")), (D,), (Reason.NOT_CONNECTED, 0, None, "C")),
        (HexRoute(0, ("A", "B", "C", "D", "F")), (D,), (Reason.PASSES_BLOCKED_CITY, 0, "D", "D")),
        (ConnectionRoute(0, (("A", "B"), ("C", "D"))), (D,), (Reason.NOT_CONNECTED, 0, "B", "B")),
        (ConnectionRoute(0, (("C", "E"), ("E", "G"))), (D,), (Reason.PASSES_OFFBOARD, 0, "E", "E")),
    ],
)
def test_each_rule_is_named(
    route: SubmittedRoute,
    trains: tuple[Train, ...],
    expected: tuple[Reason, int | None, str | None, str | None],
) -> None:
    assert rejected(evaluate(line(*trains), [route])) == expected


def test_a_route_ends_at_a_blocked_city_but_does_not_pass_it() -> None:
    graph = line(FOUR)
    assert revenues(evaluate(graph, [NodeRoute(0, ("A", "B", "C", "D"))])) == [100]
    assert revenues(evaluate(graph, [HexRoute(0, ("E", "C", "D"))])) == [30 + 30 + 40]


def test_a_train_runs_once() -> None:
    graph = line(TWO, TWO)
    routes = [NodeRoute(0, ("A", "B")), NodeRoute(0, ("C", "E"))]
    assert rejected(evaluate(graph, routes))[:2] == (Reason.TRAIN_REUSED, 0)


def test_two_trains_may_not_share_track() -> None:
    graph = line(THREE, TWO)
    routes = [NodeRoute(0, ("A", "B", "C")), NodeRoute(1, ("B", "C"))]
    assert rejected(evaluate(graph, routes)) == (Reason.TRACK_REUSED, 1, "B:1", "B")
    # Sharing a centre without sharing track is fine.
    routes = [NodeRoute(0, ("A", "B", "C")), NodeRoute(1, ("C", "E"))]
    assert revenues(evaluate(graph, routes)) == [60, 60]


def triangle() -> TrackGraph:
    b = Board()
    b.city("X", 10, token=True)
    b.city("Y", 20)
    b.city("Z", 30)
    b.link("X", "Y")
    b.link("Y", "Z")
    b.link("Z", "X")
    return b.graph(D)


def test_a_centre_is_visited_once() -> None:
    result = evaluate(triangle(), [NodeRoute(0, ("X", "Y", "Z", "X"))])
    assert rejected(result) == (Reason.CENTRE_REVISITED, 0, "X", "X")
    assert revenues(evaluate(triangle(), [NodeRoute(0, ("Y", "X", "Z"))])) == [60]


def test_a_walk_reusing_a_segment_is_track_reuse() -> None:
    graph = triangle()
    index = build_index(graph)
    walk = ("X", "X|Y", "Y", "X|Y", "X")
    verdict = check_walk(index, 0, walk, ("X:0", "Y:0", "Y:0", "X:0"))
    assert not isinstance(verdict, int)
    assert (verdict.reason, verdict.node) == (Reason.TRACK_REUSED, "Y:0")


def junction() -> TrackGraph:
    """Hex J carries two paths that meet at its side towards hex K: from R's side and from S's
    side to J|K (a junction). Hex K likewise carries two paths from J|K, to T's side and to U's.
    """
    b = Board()
    b.city("R", 20, token=True)
    b.city("S", 30, token=True)
    b.city("T", 40)
    b.city("U", 50)
    jr, js, jk = b.side("J", "R"), b.side("J", "S"), b.side("J", "K")
    kt, ku = b.side("K", "T"), b.side("K", "U")
    b.track("R", "R", jr)
    b.track("S", "S", js)
    b.track("J", jr, jk)
    b.track("J", js, jk)
    b.track("K", jk, kt)
    b.track("K", jk, ku)
    b.track("T", kt, "T")
    b.track("U", ku, "U")
    return b.graph(TWO, TWO)


def test_reversing_at_a_junction_is_refused() -> None:
    result = evaluate(junction(), [NodeRoute(0, ("R", "S"))])
    assert rejected(result) == (Reason.REVERSES_AT_JUNCTION, 0, "J|K", "J")
    result = evaluate(junction(), [NodeRoute(0, ("T", "U"))])
    assert rejected(result) == (Reason.REVERSES_AT_JUNCTION, 0, "J|K", "K")


def test_two_trains_may_not_cross_one_hex_side() -> None:
    graph = junction()
    # Different segments on both hexes, but the same side J|K.
    routes = [NodeRoute(0, ("R", "T")), NodeRoute(1, ("S", "U"))]
    assert rejected(evaluate(graph, routes)) == (Reason.SIDE_REUSED, 1, "J|K", "J")
    assert revenues(evaluate(graph, routes[:1])) == [60]


def test_check_disjoint_names_the_later_walk() -> None:
    graph = junction()
    index = build_index(graph)
    first = Walk(0, ("R", "J|R", "J|K", "K|T", "T"), ("R:0", "J:0", "K:0", "T:0"))
    second = Walk(1, ("S", "J|S", "J|K", "K|U", "U"), ("S:0", "J:1", "K:1", "U:0"))
    clash = check_disjoint(index, [first, second])
    assert clash is not None and (clash.reason, clash.train) == (Reason.SIDE_REUSED, 1)
    assert check_disjoint(index, [first]) is None


# --- ambiguous hex sequences -----------------------------------------------------------------


def bypass() -> TrackGraph:
    """A(token 20) - M - C(30), where hex M carries a town (10) on one path and a plain bypass
    track on another, both between the same two sides."""
    b = Board()
    b.city("A", 20, token=True)
    b.city("C", 30)
    b.town("M", 10)
    am, mc = b.link("A", "M"), b.side("M", "C")
    b.track("M", "M", mc)
    b.track("M", am, mc)  # the bypass: M:2
    b.track("C", mc, "C")
    return b.graph(TWO, THREE)


def test_an_ambiguous_hex_sequence_takes_the_best_legal_reading() -> None:
    graph = bypass()
    three = evaluate(graph, [HexRoute(1, ("A", "M", "C"))])
    assert revenues(three) == [60]
    assert three.routes[0].nodes == ("A", "A|M", "M", "C|M", "C")
    # A 2-train may not count the town, so only the bypass reading is legal.
    two = evaluate(graph, [HexRoute(0, ("A", "M", "C"))])
    assert revenues(two) == [50]
    assert two.routes[0].segments == ("A:0", "M:2", "C:0")


def parallel() -> TrackGraph:
    """A(token) - M - C with two identical plain tracks across M, and a town N above M."""
    b = Board()
    b.city("A", 20, token=True)
    b.city("C", 30, token=True)
    am, mc = b.side("A", "M"), b.side("M", "C")
    b.track("A", "A", am)
    b.track("A", "A", b.side("A", "N"))
    b.track("M", am, mc)
    b.track("M", am, mc)
    b.track("C", mc, "C")
    return b.graph(TWO, TWO)


def test_equal_readings_take_the_smallest_ids() -> None:
    result = evaluate(parallel(), [HexRoute(0, ("A", "M", "C"))])
    assert revenues(result) == [50]
    assert result.routes[0].segments == ("A:0", "M:0", "C:0")


def test_ambiguous_routes_are_read_jointly() -> None:
    # Both readings of each route use A:0, so two trains over A-M-C can never both run...
    clash = evaluate(parallel(), [HexRoute(0, ("A", "M", "C")), HexRoute(1, ("C", "M", "A"))])
    assert rejected(clash)[:2] == (Reason.TRACK_REUSED, 1)


def two_ways() -> TrackGraph:
    """X (token) and Y joined by two tracks: across hex P and across hex Q."""
    b = Board()
    b.city("X", 20, token=True)
    b.city("Y", 30)
    for via in ("P", "Q"):
        px, py = b.side(via, "X"), b.side(via, "Y")
        b.track("X", "X", px)
        b.track(via, px, py)
        b.track("Y", py, "Y")
    return b.graph(TWO, TWO)


def test_centres_only_take_the_smallest_track() -> None:
    result = evaluate(two_ways(), [NodeRoute(0, ("X", "Y"))])
    assert revenues(result) == [50]
    assert result.routes[0].nodes == ("X", "P|X", "P|Y", "Y")


def test_ambiguous_routes_are_read_together() -> None:
    # Train 1 runs across P, so train 0's centres-only route must be read across Q.
    routes: list[SubmittedRoute] = [NodeRoute(0, ("X", "Y")), HexRoute(1, ("X", "P", "Y"))]
    result = evaluate(two_ways(), routes)
    assert revenues(result) == [50, 50]
    assert result.routes[0].nodes == ("X", "Q|X", "Q|Y", "Y")
    assert result.routes[1].nodes == ("X", "P|X", "P|Y", "Y")
    # Across P twice has no legal reading.
    clash = [HexRoute(0, ("X", "P", "Y")), HexRoute(1, ("Y", "P", "X"))]
    assert rejected(evaluate(two_ways(), clash))[:2] == (Reason.TRACK_REUSED, 1)


def test_old_log_pieces_in_either_direction() -> None:
    # 18xx.games old logs sometimes write a route piece by piece, each piece either way round.
    graph = line(THREE)
    result = evaluate(graph, [ConnectionRoute(0, (("B", "A"), ("B", "C")))])
    assert revenues(result) == [60]
    assert result.routes[0].nodes[0] == "A"


def test_two_centres_on_one_hex() -> None:
    b = Board()
    b.city("K", 20, token=True)
    b.city("K.1", 30)
    b.track("K", "K", "K.1")
    graph = b.graph(TWO)
    for route in (HexRoute(0, ("K",)), ConnectionRoute(0, (("K",),)), NodeRoute(0, ("K.1", "K"))):
        assert revenues(evaluate(graph, [route])) == [50]
    lone = line(TWO)
    assert rejected(evaluate(lone, [HexRoute(0, ("A",))]))[:2] == (Reason.TOO_FEW_STOPS, 0)
