"""The track graph handed to the routes service."""

from __future__ import annotations

import csv

import pytest

from services.routes.engine.graph import NodeKind, Train
from services.routes.engine.solver import solve
from services.rules.board import track_graph
from tests.board.build import board
from tests.board.games import FIXTURES, Moment, moments

TWO_TRAINS = (Train("2", 2), Train("2", 2))


def test_graph_of_a_small_network() -> None:
    # KO at Takamatsu, track to Sakaide & Okayama (J1) and to Naruto & Awaji (L7).
    position = board(lays=[("J3", "8", 3), ("K6", "8", 3)], tokens=[("KO", "K4")])
    graph = track_graph(position, "KO", "2", TWO_TRAINS)
    nodes = {node.id: node for node in graph.nodes}
    assert set(nodes) == {"K4", "J1", "L7", "J3|K4", "J1|J3", "K4|K6", "K6|L7", "J5|K4"}
    assert nodes["K4"].token and nodes["K4"].kind is NodeKind.CITY
    assert nodes["K4"].revenue == 30
    assert nodes["J1"].kind is NodeKind.OFFBOARD
    assert (nodes["J1"].revenue, nodes["J1"].value_for("D")) == (20, 80)
    assert nodes["J3|K4"].kind is NodeKind.SIDE and nodes["J3|K4"].hex == "J3"
    segments = {segment.id: (segment.hex, segment.a, segment.b) for segment in graph.segments}
    assert segments == {
        "K4:0-C": ("K4", "K4|K6", "K4"),
        "K4:1-C": ("K4", "J5|K4", "K4"),
        "K4:2-C": ("K4", "J3|K4", "K4"),
        "J3:3-5": ("J3", "J1|J3", "J3|K4"),
        "K6:3-5": ("K6", "K4|K6", "K6|L7"),
        "J1:0-O": ("J1", "J1|J3", "J1"),
        "L7:2-O": ("L7", "K6|L7", "L7"),
    }
    assert graph.trains == TWO_TRAINS
    assert solve(graph).revenue == 100


def test_off_board_values_follow_the_phase_colour() -> None:
    position = board(lays=[("J3", "8", 3)], tokens=[("KO", "K4")])
    values = {
        phase: next(n for n in track_graph(position, "KO", phase, ()).nodes if n.id == "J1")
        for phase in ("2", "4", "5", "D")
    }
    assert {phase: node.revenue for phase, node in values.items()} == {
        "2": 20,
        "4": 20,
        "5": 40,
        "D": 40,
    }
    assert all(node.revenue_by_train == {"D": 80} for node in values.values())


def test_blocked_cities_end_the_graph() -> None:
    # K4 → J3 → Marugame (I2, full with SR) → Kotohira (I4): KO's graph stops at I2.
    lays = [("J3", "9", 2), ("I2", "5", 5), ("I4", "438", 1)]
    position = board(lays=lays, tokens=[("KO", "K4"), ("SR", "I2")])
    nodes = {node.id: node for node in track_graph(position, "KO", "3", TWO_TRAINS).nodes}
    assert nodes["I2"].blocked and not nodes["I2"].token
    assert "I4" not in nodes
    sr = {node.id: node for node in track_graph(position, "SR", "3", TWO_TRAINS).nodes}
    assert sr["I2"].token and not sr["I2"].blocked
    assert "I4" in sr and "K4" in sr


def test_a_corporation_without_tokens_has_an_empty_graph() -> None:
    graph = track_graph(board(), "AR", "2", TWO_TRAINS)
    assert graph.nodes == () and graph.segments == ()


def _router_rows() -> dict[int, dict[str, str]]:
    with (FIXTURES / "314.routes.tsv").open() as file:
        return {int(row["action_id"]): row for row in csv.DictReader(file, delimiter="\t")}


ROUTER = _router_rows()
RUNS = [m for m in moments(FIXTURES / "314.json") if m.action["type"] == "run_routes"]


def test_every_run_has_a_router_row() -> None:
    assert len(RUNS) == 32
    assert {m.action["id"] for m in RUNS} == set(ROUTER)


@pytest.mark.parametrize("moment", RUNS, ids=[str(m.action["id"]) for m in RUNS])
def test_best_routes_on_the_exported_graph_match_the_site(moment: Moment) -> None:
    """The site's route optimiser's revenue (314.routes.tsv), found again by the routes
    service's solver on the exported graph, for every run of game 314."""
    row = ROUTER[moment.action["id"]]
    trains = tuple(
        Train(name, None if name == "D" else int(name)) for name in row["trains"].split(",")
    )
    graph = track_graph(moment.position, moment.action["entity"], moment.situation.phase, trains)
    assert solve(graph).revenue == int(row["router_revenue"])
