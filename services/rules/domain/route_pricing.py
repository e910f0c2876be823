"""Checking a corporation's submitted routes and pricing them, before deciding RunRoutes.

`price_routes` is the whole of it, with the evaluation of routes given: `submission` builds
what the evaluation needs (the corporation's track graph and the routes in its terms), and
`priced` turns its answer into the command's `priced` runs or a rejection. The rules service
evaluates through the routes service over gRPC; the in-process replay with the routes engine
itself (`price_routes_at_once`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence

from kernel.rejection import Kind, Rejected, quoted, reason_code
from services.routes.engine.graph import TrackGraph, Train, route_hexes
from services.routes.engine.solver import solve
from services.routes.engine.validation import (
    ConnectionRoute,
    Evaluation,
    HexRoute,
    SubmittedRoute,
)
from services.rules import board
from services.rules.domain.commands import RunRoutes
from services.rules.domain.events import TrainRun
from services.rules.domain.state import GameState, OperatingRound

#: Evaluates submitted routes on a graph (the routes service's Evaluate, asked and awaited).
Evaluate = Callable[[TrackGraph, Sequence[SubmittedRoute]], Awaitable[Evaluation]]
#: The same, answering at once (the routes engine's `evaluate`, in this process).
EvaluateAtOnce = Callable[[TrackGraph, Sequence[SubmittedRoute]], Evaluation]


def corporation_graph(state: GameState, corporation_id: str) -> TrackGraph:
    """The corporation's trains on the current board, for the routes service."""
    title = state.title_model
    corporation = state.corporation(corporation_id)
    trains = tuple(Train(name, title.train(name).stops or None) for name in corporation.trains)
    assert state.board is not None
    return board.track_graph(state.board, corporation_id, state.phase, trains)


def can_run_routes(state: GameState, corporation_id: str) -> bool:
    """Whether the corporation's trains have a route that earns something now: the best runs
    earn something exactly when one route does, which a route of two stops usually shows
    without the search (`pair_earns`)."""
    if pair_earns(state, corporation_id):
        return True
    return solve(corporation_graph(state, corporation_id)).revenue > 0


def pair_earns(state: GameState, corporation_id: str) -> bool:
    """Whether a route of two stops earns something for one of the corporation's trains: a
    connection (the route engine's track from one centre to the next, `board.next_centres`)
    leaving a city with its token, the two centres together worth something to a train of
    two stops or more. Such a route is legal, so the search's best runs earn at least as
    much; when there is none, only the search tells."""
    title = state.title_model
    trains = [
        name
        for name in dict.fromkeys(state.corporation(corporation_id).trains)
        if (stops := title.train(name).stops or None) is None or stops >= 2
    ]
    if not trains:
        return False
    assert state.board is not None
    position, phase = state.board, state.phase
    for city, centres in board.next_centres(position, corporation_id).items():
        for centre in centres:
            if any(
                board.centre_value(position, city, phase, name)
                + board.centre_value(position, centre, phase, name)
                > 0
                for name in trains
            ):
                return True
    return False


def submissions(
    state: GameState, command: RunRoutes
) -> tuple[TrackGraph, list[tuple[SubmittedRoute, ...]]]:
    """The graph, and the readings of the submitted routes to try in order: as given, then
    (for hex lists) as the site's old logs wrote them, one centre-to-centre piece after
    another, each piece in either direction (`J5 K4 J5 I4`: pieces J5-K4 and J5-I4)."""
    graph, routes = submission(state, command)
    centres = {node.hex for node in graph.nodes if node.is_centre}
    as_pieces = tuple(
        ConnectionRoute(r.train, _pieces(r.hexes, centres)) if isinstance(r, HexRoute) else r
        for r in routes
    )
    readings = [routes]
    if as_pieces != routes:
        readings.append(as_pieces)
    return graph, readings


def _pieces(hexes: tuple[str, ...], centres: set[str]) -> tuple[tuple[str, ...], ...]:
    pieces: list[tuple[str, ...]] = []
    piece: list[str] = []
    for hex_id in hexes:
        piece.append(hex_id)
        if hex_id in centres and len(piece) > 1:
            pieces.append(tuple(piece))
            piece = []
    if piece:
        pieces.append(tuple(piece))
    return tuple(pieces)


def first_legal(evaluations: Sequence[Evaluation]) -> Evaluation:
    """The evaluation of the first reading that is legal, else that of the first reading."""
    return next((e for e in evaluations if e.ok), evaluations[0])


def submission(
    state: GameState, command: RunRoutes
) -> tuple[TrackGraph, tuple[SubmittedRoute, ...]]:
    round_ = state.round
    if not isinstance(round_, OperatingRound) or not round_.current:
        raise Rejected("NOT_RUNNING_TRAINS", "no corporation is running trains now")
    graph = corporation_graph(state, round_.current)
    free = list(enumerate(train.name for train in graph.trains))
    routes: list[SubmittedRoute] = []
    for route in command.routes:
        match = next((index for index, name in free if name == route.train), None)
        if match is None:
            raise Rejected(
                "TRAIN_NOT_OWNED",
                f"{round_.current} has no (other) {quoted(route.train)}-train to run",
                details={"train": quoted(route.train)},
            )
        free.remove((match, route.train))
        if route.connections:
            routes.append(ConnectionRoute(match, route.connections))
        else:
            routes.append(HexRoute(match, route.hexes))
    return graph, tuple(routes)


def priced(command: RunRoutes, graph: TrackGraph, evaluation: Evaluation) -> RunRoutes:
    """The command with each route's checked revenue, or the violation as a rejection."""
    violation = evaluation.violation
    if violation is not None:
        train = graph.trains[violation.train].name if violation.train is not None else ""
        where = violation.hex or violation.node or ""
        raise Rejected(
            reason_code(f"ROUTE_{violation.reason}"),
            f"the {quoted(train)}-train's route breaks a route rule (8.5.1): {violation.reason}"
            + (f" at {quoted(where)}" if where else "")
            + (f" ({violation.detail})" if violation.detail else ""),
            details={
                "train": quoted(train),
                "hex": quoted(violation.hex or ""),
                "node": quoted(violation.node or ""),
            },
        )
    runs = tuple(
        TrainRun(graph.trains[route.train].name, route_hexes(graph, route), route.revenue)
        for route in evaluation.routes
    )
    return dataclasses.replace(command, priced=runs)


def trusted(command: RunRoutes) -> RunRoutes:
    """Old site logs: each run's stored revenue, unchecked (docs/rules-notes.md)."""
    runs = tuple(TrainRun(r.train, r.hexes, r.revenue) for r in command.routes)
    if any(r.revenue < 0 for r in runs):
        raise Rejected(
            "INVALID_REVENUE",
            "a revenue is never negative",
            Kind.INVALID_ARGUMENT,
            {"field": "routes.revenue"},
        )
    return dataclasses.replace(command, priced=runs)


def trusts_revenue(state: GameState, command: RunRoutes) -> bool:
    return state.trust_submitted_revenue and all(r.revenue for r in command.routes)


async def price_routes(state: GameState, command: RunRoutes, evaluate: Evaluate) -> RunRoutes:
    """The command with its routes checked and priced (rulebook 8.5), or the rejection: an old
    log's own revenues where the game trusts them, else each reading of the routes
    (`submissions`) evaluated in turn until one is legal. Asynchronous because the rules
    service asks the routes service; nothing here waits but `evaluate`."""
    if trusts_revenue(state, command):
        return trusted(command)
    graph, readings = submissions(state, command)
    evaluations = []
    for reading in readings:
        evaluations.append(await evaluate(graph, reading))
        if evaluations[-1].ok:
            break
    return priced(command, graph, first_legal(evaluations))


def price_routes_at_once(
    state: GameState, command: RunRoutes, evaluate: EvaluateAtOnce
) -> RunRoutes:
    """`price_routes` with an evaluator that answers at once: the pricing then never waits,
    so it is done at its first step, without an event loop."""

    async def answered(graph: TrackGraph, routes: Sequence[SubmittedRoute]) -> Evaluation:
        return evaluate(graph, routes)

    pricing = price_routes(state, command, answered)
    try:
        pricing.send(None)
    except StopIteration as done:
        result: RunRoutes = done.value
        return result
    pricing.close()
    raise AssertionError("a pricing whose evaluator answers at once does not wait")
