"""The rules service as the routes service sees it, for searches of graphs no real game
reaches (the fully tiled map with ten D-trains, random graphs): a real gRPC server answering
RulesService.CorporationGraph with the graph offered under that game id. A routes process
pointed at it (SHIKOKU_RULES_ADDR) searches them through its public RoutesService.Optimize,
the path a client's request takes after the gateway."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from types import TracebackType

import grpc

from shikoku.internal.v1 import routes_pb2, rules_pb2
from shikoku.v1 import routes_pb2 as public_pb2

#: The corporation every offered graph is asked for under.
CORPORATION = "AR"


class GraphSource:
    def __init__(self) -> None:
        self._graphs: dict[str, routes_pb2.TrackGraph] = {}
        self._server = grpc.server(ThreadPoolExecutor(max_workers=8))
        graphs = grpc.unary_unary_rpc_method_handler(
            self._corporation_graph,
            request_deserializer=rules_pb2.CorporationGraphRequest.FromString,
            response_serializer=routes_pb2.TrackGraph.SerializeToString,
        )
        service = rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name
        self._server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler(service, {"CorporationGraph": graphs})]
        )
        self.address = f"127.0.0.1:{self._server.add_insecure_port('127.0.0.1:0')}"

    def __enter__(self) -> GraphSource:
        self._server.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.stop(None)

    def offer(self, graph: routes_pb2.TrackGraph) -> public_pb2.OptimizeRequest:
        """The Optimize request whose search is of `graph`."""
        game_id = f"graph-{len(self._graphs)}"
        self._graphs[game_id] = graph
        return public_pb2.OptimizeRequest(game_id=game_id, corporation=CORPORATION)

    def _corporation_graph(
        self, request: rules_pb2.CorporationGraphRequest, context: grpc.ServicerContext
    ) -> routes_pb2.TrackGraph:
        graph = self._graphs.get(request.game_id)
        if graph is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no graph offered as {request.game_id}")
        return graph
