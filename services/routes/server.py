"""The routes service process. Optimize is answered once the board model can export a game's
track graph (issue "routes service"); until then it says so with UNIMPLEMENTED."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import grpc

from shikoku.config import Addresses
from shikoku.grpc_errors import abort
from shikoku.grpc_server import Context, serve
from shikoku.rejection import Kind, Rejected
from shikoku.v1 import routes_pb2, routes_pb2_grpc


class RoutesServicer(routes_pb2_grpc.RoutesServiceServicer):
    async def Optimize(
        self, request: routes_pb2.OptimizeRequest, context: Context
    ) -> routes_pb2.RouteSolution:
        await abort(
            context,
            Rejected(
                "NOT_IMPLEMENTED", "route optimisation is not available yet", Kind.UNIMPLEMENTED
            ),
        )
        raise AssertionError("unreachable")


async def main() -> None:
    def register(server: grpc.aio.Server) -> Iterable[str]:
        routes_pb2_grpc.add_RoutesServiceServicer_to_server(RoutesServicer(), server)
        return [routes_pb2.DESCRIPTOR.services_by_name["RoutesService"].full_name]

    await serve("routes", Addresses.from_env().routes, register)


if __name__ == "__main__":
    asyncio.run(main())
