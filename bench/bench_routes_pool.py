"""Benchmark: the routes service's solver pool (services/routes/shell/pool.py).

Three figures, on the fully tiled map with ten D-trains (tests/routes/pathological.py: a search
that runs to any deadline) and on smaller searches that finish:

1. What crosses to a worker: the graph pickled as its dataclasses (what handing the solver's
   own input to a ProcessPoolExecutor would send) against its serialized protobuf, what the
   pool sends; bytes, and microseconds to write and to read back into the solver's input.
2. What the pool adds to a search that finishes: the median time of a search in process (the
   solver's input built from the message, then `solve()`, as the service did before the pool)
   against the same search through a SolverPool of one worker in this process (serialize, a
   pipe each way, the worker's parse and build), for a few graphs, REPEATS each; and the least
   of each, which a shared machine's load disturbs less.
3. A cheap call while four long searches run (RoutesService.Optimize, each with a deadline of
   LONG_SECONDS, the graph from a stand-in rules service: tests/routes/graph_source.py): the
   latency of RouteEngine.Evaluate of a two-city route and of a health check, one of each sent
   every 50 ms (not waiting for the one before) while the four run. Against a real routes
   process on loopback (2 workers, a queue of 2), and against the same calls served as before
   the pool: a grpc.aio server in a process of its own that runs each search on its event loop
   (this file with SHIKOKU_POOL_INLINE=ADDRESS).

  SHIKOKU_POOL_REPEATS  repeats of each search in (2), default 15
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import pickle
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer

from infra import deployment_token
from infra.deadlines import seconds_from_now
from infra.grpc_types import Context
from services.routes import wire
from services.routes.engine.graph import TrackGraph
from services.routes.engine.solver import solve
from services.routes.engine.validation import evaluate
from services.routes.shell.pool import PoolSettings, SolverPool
from services.routes.shell.server import public_solution, routes_checked_by_rules
from shikoku.internal.v1 import routes_pb2, routes_pb2_grpc, rules_pb2, rules_pb2_grpc
from shikoku.v1 import routes_pb2 as public_pb2
from shikoku.v1 import routes_pb2_grpc as public_pb2_grpc
from shikoku_dev.redis_server import free_port
from shikoku_dev.supervisor import ServiceProcess
from tests.routes.graph_source import GraphSource
from tests.routes.pathological import pathological_graph

REPO = Path(__file__).resolve().parent.parent
REPEATS = int(os.environ.get("SHIKOKU_POOL_REPEATS", "15"))
LONG_SECONDS = 3.0
TICK_SECONDS = 0.05
TOKEN = "bench-token"
SECRET = ((deployment_token.HEADER, TOKEN),)


def per_call_us(call: Callable[[], object], times: int = 200) -> float:
    start = time.perf_counter()
    for _ in range(times):
        call()
    return (time.perf_counter() - start) / times * 1e6


def payload(graph: TrackGraph) -> None:
    pickled = pickle.dumps(graph, protocol=pickle.HIGHEST_PROTOCOL)
    message = wire.graph_to_proto(graph)
    data = message.SerializeToString()
    print(
        f"1. the graph sent to a worker ({len(graph.nodes)} nodes, {len(graph.segments)} segments)"
    )
    print(
        f"   pickled dataclasses   {len(pickled):>6} bytes  "
        f"write {per_call_us(lambda: pickle.dumps(graph, protocol=5)):7.0f} us  "
        f"read {per_call_us(lambda: pickle.loads(pickled)):7.0f} us"
    )
    parse_us = per_call_us(lambda: routes_pb2.TrackGraph.FromString(data))
    build_us = per_call_us(lambda: wire.graph_from_proto(routes_pb2.TrackGraph.FromString(data)))
    print(
        f"   serialized protobuf   {len(data):>6} bytes  "
        f"write {per_call_us(message.SerializeToString):7.0f} us  "
        f"read {parse_us:7.0f} us (and {build_us - parse_us:.0f} us to build the solver's "
        "input, in the worker)"
    )


def overhead_graphs() -> list[tuple[str, routes_pb2.TrackGraph]]:
    return [("two cities, a 2-train", check_request().graph)] + [
        (f"tiled map, {n} D-train{'s' * (n > 1)}", wire.graph_to_proto(pathological_graph(n)))
        for n in (1, 2, 3, 4)
    ]


async def overhead() -> None:
    print(f"2. a search that finishes: in process vs through the pool (median of {REPEATS})")
    pool = SolverPool(PoolSettings(workers=1, queue=1))
    await pool.start()
    try:
        for name, message in overhead_graphs():
            inline, pooled = [], []
            for _ in range(REPEATS):
                # As the service did before the pool: build the solver's input, search.
                start = time.perf_counter()
                expected = solve(wire.graph_from_proto(message))
                inline.append(time.perf_counter() - start)
                start = time.perf_counter()
                answer = await pool.solve(message, None)
                pooled.append(time.perf_counter() - start)
                assert answer == wire.solution_to_proto(expected)
            a, b = statistics.median(inline) * 1000, statistics.median(pooled) * 1000
            least = (min(pooled) - min(inline)) * 1000
            print(
                f"   {name:<22} in process {a:8.2f} ms  pool {b:8.2f} ms  "
                f"added {b - a:6.2f} ms (least of each: {least:5.2f} ms)"
            )
    finally:
        await pool.close()


def start_routes(graphs: str) -> tuple[ServiceProcess, str]:
    address = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        deployment_token.SETTING: TOKEN,
        "SHIKOKU_ROUTES_ADDR": address,
        "SHIKOKU_RULES_ADDR": graphs,
        "SHIKOKU_ROUTES_WORKERS": "2",
        "SHIKOKU_ROUTES_QUEUE": "2",
    }
    process = ServiceProcess("routes", "services.routes.shell.server", env, log=io.StringIO())
    process.wait_listening()
    return process, address


class InlineEngine(routes_pb2_grpc.RouteEngineServicer):
    """The route engine's checks, on the event loop as always."""

    async def Evaluate(
        self, request: routes_pb2.EvaluateRequest, context: Context
    ) -> routes_pb2.Evaluation:
        graph = wire.graph_from_proto(request.graph)
        return wire.evaluation_to_proto(evaluate(graph, wire.submitted_from_proto(request.routes)))


class InlineRoutes(public_pb2_grpc.RoutesServiceServicer):
    """The route search as it was before the pool: each one on the event loop."""

    def __init__(self, rules: rules_pb2_grpc.RulesServiceAsyncStub) -> None:
        self._rules = rules

    async def Optimize(
        self, request: public_pb2.OptimizeRequest, context: Context
    ) -> public_pb2.RouteSolution:
        asked = rules_pb2.CorporationGraphRequest(
            game_id=request.game_id, corporation=request.corporation
        )
        message = await self._rules.CorporationGraph(asked, timeout=10)
        remaining = context.time_remaining()
        deadline = None if remaining is None else seconds_from_now(max(remaining - 0.05, 0))
        solution = solve(wire.graph_from_proto(message), deadline)
        return public_solution(message, wire.solution_to_proto(solution))

    async def CheckRoutes(
        self, request: public_pb2.CheckRoutesRequest, context: Context
    ) -> public_pb2.RouteCheck:
        return await routes_checked_by_rules(self._rules, request, context)


async def serve_inline(address: str) -> None:
    server = grpc.aio.server()
    rules = grpc.aio.insecure_channel(os.environ["SHIKOKU_RULES_ADDR"])
    routes_pb2_grpc.add_RouteEngineServicer_to_server(InlineEngine(), server)
    public_pb2_grpc.add_RoutesServiceServicer_to_server(
        InlineRoutes(rules_pb2_grpc.RulesServiceStub(rules)), server
    )
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    server.add_insecure_port(address)
    await server.start()
    await health.set("", health_pb2.HealthCheckResponse.SERVING)
    print("routes listening on", address, flush=True)
    await server.wait_for_termination()


def start_inline(graphs: str) -> tuple[ServiceProcess, str]:
    address = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "SHIKOKU_POOL_INLINE": address,
        "SHIKOKU_RULES_ADDR": graphs,
        "PYTHONPATH": str(REPO),
    }
    process = ServiceProcess(
        "routes",
        "bench.bench_routes_pool",
        env,
        log=io.StringIO(),
    )
    process.wait_listening()
    return process, address


def check_request() -> routes_pb2.EvaluateRequest:
    nodes = [routes_pb2.Node(id=n, kind="city", hex=n, revenue=20, token=True) for n in "AB"]
    graph = routes_pb2.TrackGraph(
        nodes=nodes,
        segments=[routes_pb2.Segment(id="s", hex="A", a="A", b="B")],
        trains=[routes_pb2.Train(name="2", stops=2)],
    )
    return routes_pb2.EvaluateRequest(
        graph=graph, routes=[routes_pb2.SubmittedRoute(train=0, nodes=["A", "B"])]
    )


def summary(seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return f"median {statistics.median(ms):7.1f} ms  p95 {p95:7.1f} ms  max {ms[-1]:7.1f} ms"


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def cheap_calls(
    name: str,
    start: Callable[[str], tuple[ServiceProcess, str]],
    message: routes_pb2.TrackGraph,
) -> None:
    with GraphSource() as graphs:
        request = graphs.offer(message)
        process, address = start(graphs.address)
        try:
            await calls_during_searches(name, address, request)
        finally:
            process.stop()


async def calls_during_searches(
    name: str, address: str, request: public_pb2.OptimizeRequest
) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        engine = routes_pb2_grpc.RouteEngineStub(channel)
        optimizer = public_pb2_grpc.RoutesServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        check = check_request()

        async def search() -> None:
            # Cut short at their deadline (DEADLINE_EXCEEDED with the best found attached),
            # and those that waited in a queue may come after it.
            with contextlib.suppress(grpc.RpcError):
                await optimizer.Optimize(request, metadata=SECRET, timeout=LONG_SECONDS)

        searches = [asyncio.create_task(search()) for _ in range(4)]
        await asyncio.sleep(0.3)
        checks, probes = [], []
        window = time.monotonic() + LONG_SECONDS - 0.6
        while time.monotonic() < window:
            checks.append(
                asyncio.create_task(
                    timed(lambda: engine.Evaluate(check, metadata=SECRET, timeout=30))
                )
            )
            probes.append(
                asyncio.create_task(
                    timed(lambda: health.Check(health_pb2.HealthCheckRequest(), timeout=30))
                )
            )
            await asyncio.sleep(TICK_SECONDS)
        check_seconds = await asyncio.gather(*checks)
        probe_seconds = await asyncio.gather(*probes)
        await asyncio.gather(*searches)
    print(f"   {name:<22} route check  ({len(checks)}) {summary(check_seconds)}")
    print(f"   {'':<22} health check ({len(probes)}) {summary(probe_seconds)}")


async def main() -> None:
    graph = pathological_graph()
    payload(graph)
    await overhead()
    print(
        f"3. a cheap call while four searches of the tiled map with ten D-trains run "
        f"(deadline {LONG_SECONDS:.0f} s each)"
    )
    message = wire.graph_to_proto(graph)
    await cheap_calls("the pool", start_routes, message)
    await cheap_calls("on the loop, as before", start_inline, message)


if __name__ == "__main__":
    if inline := os.environ.get("SHIKOKU_POOL_INLINE"):
        asyncio.run(serve_inline(inline))
    else:
        asyncio.run(main())
