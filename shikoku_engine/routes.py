"""A corporation's best routes, found by the routes engine in this process."""

from __future__ import annotations

from services.routes.engine.deadline import Deadline
from services.routes.engine.graph import route_hexes
from services.routes.engine.solver import solve
from services.rules.domain.route_pricing import corporation_graph
from services.rules.domain.state import GameState
from shikoku.v1 import routes_pb2


def best_routes(
    state: GameState, corporation: str, deadline: Deadline | None = None
) -> routes_pb2.RouteSolution:
    """The solver's answer on the corporation's track graph, in the message
    RoutesService.Optimize answers with (its routes go straight into a RunRoutes command)."""
    graph = corporation_graph(state, corporation)
    solution = solve(graph, deadline)
    return routes_pb2.RouteSolution(
        revenue=solution.revenue,
        proven=solution.proven,
        routes=[
            routes_pb2.TrainRoute(
                train=graph.trains[route.train].name,
                hexes=route_hexes(graph, route),
                revenue=route.revenue,
            )
            for route in solution.routes
        ],
    )
