"""The routes service process: optimal routes and route checking over track graphs.

Internally (RouteEngine) it checks the routes submitted on a graph it is given; publicly
(RoutesService) it searches the best routes on the corporation's graph, fetched from the rules
service first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from infra.config import service_channel
from infra.deadlines import MonotonicDeadline, seconds_from_now
from infra.deployment_token import RequiresDeploymentToken
from infra.forwarding import relay_error
from infra.grpc_errors import DOMAIN
from infra.grpc_server import Context, serve
from infra.observability import observe_process
from infra.settings import from_environment
from services.routes import wire
from services.routes.engine.validation import evaluate
from services.routes.limits import check_graph, check_routes
from services.routes.shell.pool import SolverPool
from services.routes.shell.settings import RoutesSettings
from shikoku.internal.v1 import routes_pb2, routes_pb2_grpc, rules_pb2, rules_pb2_grpc
from shikoku.v1 import routes_pb2 as public_pb2
from shikoku.v1 import routes_pb2_grpc as public_pb2_grpc

# Leave this much of a caller's deadline for answering (from a worker of the solver pool:
# through a pipe, the pool's thread and the event loop, each a wait for a CPU on a busy machine).
MARGIN_SECONDS = 0.1


def _deadline(context: Context) -> MonotonicDeadline | None:
    remaining = context.time_remaining()
    return None if remaining is None else seconds_from_now(max(remaining - MARGIN_SECONDS, 0))


class RouteEngineServicer(routes_pb2_grpc.RouteEngineServicer):
    """Checks the routes the rules service was submitted, on the graph it sends."""

    async def Evaluate(
        self, request: routes_pb2.EvaluateRequest, context: Context
    ) -> routes_pb2.Evaluation:
        check_graph(request.graph)
        check_routes(request.routes, len(request.graph.trains))
        graph = wire.graph_from_proto(request.graph)
        evaluation = evaluate(graph, wire.submitted_from_proto(request.routes))
        return wire.evaluation_to_proto(evaluation)


def _hexes(hex_of_segment: dict[str, str], route: routes_pb2.Route) -> list[str]:
    """The hexes a route visits, in order (the 18xx.games `hexes` form)."""
    hexes: list[str] = []
    for segment in route.segments:
        hex_id = hex_of_segment[segment]
        if not hexes or hexes[-1] != hex_id:
            hexes.append(hex_id)
    return hexes


def public_solution(
    graph: routes_pb2.TrackGraph, solution: routes_pb2.Solution
) -> public_pb2.RouteSolution:
    hex_of_segment = {segment.id: segment.hex for segment in graph.segments}
    return public_pb2.RouteSolution(
        revenue=solution.revenue,
        proven=solution.proven,
        routes=[
            public_pb2.TrainRoute(
                train=graph.trains[route.train].name,
                hexes=_hexes(hex_of_segment, route),
                revenue=route.revenue,
            )
            for route in solution.routes
        ],
    )


async def routes_checked_by_rules(
    rules: rules_pb2_grpc.RulesServiceAsyncStub,
    request: public_pb2.CheckRoutesRequest,
    context: Context,
) -> public_pb2.RouteCheck:
    """Asked of the rules service, which checks a game's routes as it checks RunRoutes (and
    evaluates them here, with RouteEngine.Evaluate)."""
    try:
        answer: public_pb2.RouteCheck = await rules.CheckRoutes(request, timeout=10)
    except grpc.aio.AioRpcError as error:
        await relay_error(error, context)
        raise
    return answer


class RoutesServicer(public_pb2_grpc.RoutesServiceServicer):
    def __init__(self, rules: rules_pb2_grpc.RulesServiceAsyncStub, solver: SolverPool) -> None:
        self._rules = rules
        self._solver = solver

    async def Optimize(
        self, request: public_pb2.OptimizeRequest, context: Context
    ) -> public_pb2.RouteSolution:
        graph_request = rules_pb2.CorporationGraphRequest(
            game_id=request.game_id, corporation=request.corporation
        )
        try:
            message = await self._rules.CorporationGraph(graph_request, timeout=10)
        except grpc.aio.AioRpcError as error:
            await relay_error(error, context)
            raise
        solution = await self._solver.solve(message, _deadline(context))
        answer = public_solution(message, solution)
        if not solution.proven:
            await _deadline_exceeded(context, answer)
        return answer

    async def CheckRoutes(
        self, request: public_pb2.CheckRoutesRequest, context: Context
    ) -> public_pb2.RouteCheck:
        return await routes_checked_by_rules(self._rules, request, context)


async def _deadline_exceeded(context: Context, best: public_pb2.RouteSolution) -> None:
    """DEADLINE_EXCEEDED, carrying the best solution found (proven = false) in the details."""
    info = error_details_pb2.ErrorInfo(reason="SEARCH_CUT_SHORT", domain=DOMAIN)
    details = [any_pb2.Any(), any_pb2.Any()]
    details[0].Pack(info)
    details[1].Pack(best)
    status = status_pb2.Status(
        code=code_pb2.DEADLINE_EXCEEDED,
        message="the deadline came before the optimum was proven; the best found is attached",
        details=details,
    )
    await context.abort_with_status(rpc_status.to_status(status))


@dataclass(frozen=True, slots=True)
class Routes:
    """The routes service composed from its settings: its servicers over one solver pool
    (started by `solver.start`, closed by `solver.close`)."""

    solver: SolverPool
    engine: RouteEngineServicer
    public: RoutesServicer

    def register(self, server: grpc.aio.Server) -> Iterable[str]:
        routes_pb2_grpc.add_RouteEngineServicer_to_server(self.engine, server)
        public_pb2_grpc.add_RoutesServiceServicer_to_server(self.public, server)
        return [
            routes_pb2.DESCRIPTOR.services_by_name["RouteEngine"].full_name,
            public_pb2.DESCRIPTOR.services_by_name["RoutesService"].full_name,
        ]


def build_routes(settings: RoutesSettings, rules: rules_pb2_grpc.RulesServiceAsyncStub) -> Routes:
    """The routes service, asking `rules` for the graphs of games' corporations."""
    solver = SolverPool(settings.pool)
    return Routes(solver, RouteEngineServicer(), RoutesServicer(rules, solver))


async def main() -> None:
    settings = from_environment(RoutesSettings, RoutesSettings.NAME)
    observe_process(settings.NAME, settings.process.observability)
    rules_channel = service_channel(settings.process.addresses.rules, settings.process.token)
    routes = build_routes(settings, rules_pb2_grpc.RulesServiceStub(rules_channel))
    await routes.solver.start()

    async def stop() -> None:
        await routes.solver.close()
        await rules_channel.close(None)

    await serve(
        settings.NAME,
        settings.listen_address,
        routes.register,
        on_stop=stop,
        observability=settings.process.observability,
        admissions=[RequiresDeploymentToken(settings.process.token)],
    )


if __name__ == "__main__":
    asyncio.run(main())
