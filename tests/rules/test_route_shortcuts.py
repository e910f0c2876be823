"""The answers the operating round takes without the route search (whether a corporation has a
route, 8.7.5; whether its trains earn anything, the site's skipped route step) are the search's
own, and the board's centres one connection away are the route engine's: checked at every
operating-round position of a real site game and of recorded bot games, for every corporation
with a station token."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from services.routes.engine.candidates import connections_from
from services.routes.engine.graph import TrackGraph, Train
from services.routes.engine.index import build_index
from services.routes.engine.solver import solve
from services.rules import board
from services.rules.domain.evolve import fold
from services.rules.domain.on_the_board import has_route
from services.rules.domain.route_pricing import can_run_routes, corporation_graph, pair_earns
from services.rules.domain.state import GameState, OperatingRound
from tests.shared import SITE_GAMES
from tools.crosscheck import recording
from tools.sitelog.export_format import SiteGame, load, parse
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import replay

pytestmark = pytest.mark.slow  # whole games, each position searched

RECORDED = Path(__file__).parents[1] / "crosscheck" / "recorded"


def _games() -> list[tuple[str, SiteGame]]:
    games = [("314.json", load(SITE_GAMES / "314.json"))]
    for game in recording.read(RECORDED)[::8]:
        games.append((game.plan.name, parse(json.loads(game.played.export_text))))
    return games


def _operating_positions(game: SiteGame) -> list[GameState]:
    """The states of the game's operating rounds, one per board position and phase."""
    table = InProcessTable(game)
    replay(game, table)
    states: list[GameState] = []
    seen: set[tuple[int, str, tuple[tuple[str, ...], ...]]] = set()
    state = GameState()
    for batch in table.batches:
        state = fold(batch.events, state)
        key = (id(state.board), state.phase, tuple(c.trains for c in state.corporations))
        if isinstance(state.round, OperatingRound) and state.result is None and key not in seen:
            seen.add(key)
            states.append(state)  # kept: no board's id is reused while the test runs
    return states


def _searched_route(state: GameState, corporation: str) -> bool:
    """`has_route` as the search answers it: a route of a 2-train, every stop worth one."""
    assert state.board is not None
    graph = board.track_graph(state.board, corporation, state.phase, (Train("2", 2),))
    counted = tuple(
        dataclasses.replace(node, revenue=1, revenue_by_train={}) if node.is_centre else node
        for node in graph.nodes
    )
    return solve(dataclasses.replace(graph, nodes=counted)).revenue > 0


def _engine_centres(state: GameState, corporation: str) -> dict[str, set[str]]:
    """Per centre with the token, the far ends of the route engine's connections from it."""
    assert state.board is not None
    index = build_index(board.track_graph(state.board, corporation, state.phase, ()))
    return {
        node.id: {index.nodes[c.far].id for c in connections_from(index, number)}
        for number, node in enumerate(index.nodes)
        if node.token
    }


def _name(city: tuple[str, int]) -> str:
    hex_, index = city
    return hex_ if index == 0 else f"{hex_}.{index}"


@pytest.mark.parametrize(("name", "game"), _games(), ids=lambda value: str(value)[:40])
def test_the_shortcuts_answer_as_the_search(name: str, game: SiteGame) -> None:
    checked = 0
    for state in _operating_positions(game):
        assert state.board is not None
        for corporation in state.corporations:
            if not corporation.tokens_placed:
                continue
            assert has_route(state, corporation) == _searched_route(state, corporation.id)
            assert _engine_centres(state, corporation.id) == {
                _name(city): {_name(centre) for centre in centres}
                for city, centres in board.next_centres(state.board, corporation.id).items()
            }
            if corporation.trains:
                graph: TrackGraph = corporation_graph(state, corporation.id)
                earns = solve(graph).revenue > 0
                assert can_run_routes(state, corporation.id) == earns
                assert not pair_earns(state, corporation.id) or earns
            checked += 1
    assert checked, name
