"""Pricing a RunRoutes command (services/rules/domain/route_pricing.py): one loop for the rules
service (an evaluator that awaits the routes service) and the in-process replay (the engine,
answering at once). Each reading of the routes is evaluated in turn until one is legal."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Sequence
from functools import cache

import pytest

from kernel.rejection import Rejected
from services.routes.engine.graph import TrackGraph
from services.routes.engine.rules import Reason, Violation
from services.routes.engine.validation import (
    ConnectionRoute,
    Evaluation,
    HexRoute,
    SubmittedRoute,
    evaluate,
)
from services.rules.domain.commands import RunRoutes
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.evolve import fold
from services.rules.domain.legal import RunRoutesOption
from services.rules.domain.route_pricing import (
    can_run_routes,
    price_routes,
    price_routes_at_once,
    submission,
)
from services.rules.domain.state import GameState
from tests.rules.helpers import new_game
from tools.bots import best_routes, choose, command_for

REFUSED = Evaluation((), 0, Violation(Reason.NOT_CONNECTED, 0, detail="refused here"))


@cache  # states and commands are immutable
def routes_to_price(seed: int = 3) -> tuple[GameState, RunRoutes, RunRoutes]:
    """A random game's first route step with a route that earns, the best routes there as a
    player submits them (hexes, not yet priced), and the same priced by the solver."""
    rng = random.Random(seed)
    state = new_game(4, seed=seed, fixed=False)
    while state.result is None:
        options = legal_actions(state)
        running = next((o for o in options if isinstance(o, RunRoutesOption)), None)
        if running is not None and can_run_routes(state, running.corporation):
            best = best_routes(state, running.corporation, running.seat)
            return state, dataclasses.replace(best, priced=None), best
        state = fold(decide(state, command_for(choose(options, rng), rng, state)), state)
    raise AssertionError("the game ended before a corporation ran a train")


class Recording:
    """An evaluator answering in turn with `answers` (None: the engine's own evaluation),
    keeping what it was asked."""

    def __init__(self, *answers: Evaluation | None) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[SubmittedRoute, ...]] = []

    def __call__(self, graph: TrackGraph, routes: Sequence[SubmittedRoute]) -> Evaluation:
        self.asked.append(tuple(routes))
        answer = self.answers.pop(0)
        return evaluate(graph, routes) if answer is None else answer


def legal_evaluation(state: GameState, command: RunRoutes) -> Evaluation:
    """The engine's evaluation of the routes as submitted (legal: the solver's best)."""
    graph, routes = submission(state, command)
    evaluation = evaluate(graph, routes)
    assert evaluation.ok
    return evaluation


def test_routes_legal_as_given_are_priced_from_one_evaluation() -> None:
    state, command, best = routes_to_price()
    evaluator = Recording(None)
    priced = price_routes_at_once(state, command, evaluator)
    assert priced.priced is not None and priced.priced == best.priced
    assert sum(run.revenue for run in priced.priced) > 0
    assert len(evaluator.asked) == 1
    assert all(isinstance(route, HexRoute) for route in evaluator.asked[0])


def test_routes_refused_as_given_are_read_as_pieces_between_centres() -> None:
    state, command, best = routes_to_price()
    # The second reading is answered with a legal evaluation: what it answers is priced.
    evaluator = Recording(REFUSED, legal_evaluation(state, command))
    assert price_routes_at_once(state, command, evaluator).priced == best.priced
    assert len(evaluator.asked) == 2
    assert all(isinstance(route, ConnectionRoute) for route in evaluator.asked[1])


def test_routes_refused_in_every_reading_are_rejected_with_the_first_readings_reason() -> None:
    state, command, _ = routes_to_price()
    other = Evaluation((), 0, Violation(Reason.TOO_MANY_STOPS, 0, detail="second"))
    with pytest.raises(Rejected) as refused:
        price_routes_at_once(state, command, Recording(REFUSED, other))
    assert refused.value.reason == "ROUTE_NOT_CONNECTED"
    assert "refused here" in refused.value.message


def test_an_evaluator_that_waits_prices_as_one_that_answers_at_once() -> None:
    """The rules service's evaluator awaits the routes service; the same loop, awaited on an
    event loop, gives what the in-process replay gets."""
    state, command, _ = routes_to_price()
    legal = legal_evaluation(state, command)
    asked: list[tuple[SubmittedRoute, ...]] = []

    async def remote(graph: TrackGraph, routes: Sequence[SubmittedRoute]) -> Evaluation:
        await asyncio.sleep(0)  # suspends, as a call to another service does
        asked.append(tuple(routes))
        return REFUSED if len(asked) == 1 else legal

    here = Recording(REFUSED, legal)
    assert asyncio.run(price_routes(state, command, remote)) == price_routes_at_once(
        state, command, here
    )
    assert asked == here.asked and len(asked) == 2
