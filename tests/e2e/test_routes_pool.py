"""The routes service searches in a pool of worker processes: a real routes process on loopback
(the deployment's token, as every internal caller), searches as long as the position makes them
(the fully tiled map, ten D-trains: tests/routes/pathological.py), asked for through its public
RoutesService.Optimize with the graphs of a stand-in rules service
(tests/routes/graph_source.py)."""

from __future__ import annotations

import asyncio
import io
import os
import random
import re
import signal
import statistics
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from infra import deployment_token
from services.routes import wire
from services.routes.engine.graph import TrackGraph, route_hexes
from services.routes.engine.solver import solve
from services.routes.engine.validation import HexRoute, evaluate
from services.routes.shell.pool import needs_search
from services.routes.shell.server import public_solution
from services.rules.domain.route_pricing import corporation_graph
from services.rules.domain.state import OperatingRound, Step
from shikoku.internal.v1 import routes_pb2, routes_pb2_grpc
from shikoku.v1 import routes_pb2 as public_pb2
from shikoku.v1 import routes_pb2_grpc as public_pb2_grpc
from shikoku_dev.redis_server import free_port
from shikoku_dev.supervisor import ServiceProcess
from shikoku_sdk import Client as SdkClient
from shikoku_sdk.errors import ShikokuError
from tests.e2e.api import System
from tests.e2e.observing import metrics_urls, scrape, total
from tests.routes.graph_source import GraphSource
from tests.routes.pathological import pathological_graph, pathological_message
from tests.routes.randgraph import random_graph
from tests.shared import SITE_GAMES
from tools.sitelog.export_format import load
from tools.sitelog.gateway_table import GatewayTable
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import step_through

pytestmark = pytest.mark.e2e

SECRET = ((deployment_token.HEADER, "the-secret"),)
WORKERS, QUEUE = 2, 2
#: How long each of the long searches may take (its caller's deadline).
LONG_SECONDS = 4.0
#: A cheap call, answered on the service's event loop while searches run.
CHEAP_SECONDS = 0.050


def small_graph() -> routes_pb2.TrackGraph:
    def node(id_: str) -> routes_pb2.Node:
        return routes_pb2.Node(id=id_, kind="city", hex=id_, revenue=20, token=True)

    return routes_pb2.TrackGraph(
        nodes=[node("A1"), node("B1")],
        segments=[routes_pb2.Segment(id="s1", hex="A1", a="A1", b="B1")],
        trains=[routes_pb2.Train(name="2", stops=2)],
    )


CHECK = routes_pb2.EvaluateRequest(
    graph=small_graph(), routes=[routes_pb2.SubmittedRoute(train=0, nodes=["A1", "B1"])]
)


@dataclass(frozen=True)
class Routes:
    process: ServiceProcess
    address: str
    metrics: str
    log: io.StringIO

    async def metric(self, name: str) -> float:
        def read() -> str:
            with urllib.request.urlopen(f"http://{self.metrics}/metrics", timeout=5) as answer:
                return str(answer.read().decode())

        found = re.search(rf"^{name} (\S+)$", await asyncio.to_thread(read), re.M)
        assert found, "the routes service reports no solver pool"
        return float(found[1])

    async def searches(self) -> float:
        """What the pool holds, as its metrics say."""
        return await self.metric("shikoku_route_searches")

    async def until_searches(self, count: int, within: float = 10.0) -> None:
        deadline = time.monotonic() + within
        while await self.searches() != count:
            assert time.monotonic() < deadline, f"the pool did not hold {count} within {within} s"
            await asyncio.sleep(0.02)


def start_routes(source: GraphSource, **settings: str) -> Routes:
    """A routes process that takes the graphs it searches from `source`."""
    address = f"127.0.0.1:{free_port()}"
    metrics = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        deployment_token.SETTING: "the-secret",
        "SHIKOKU_ROUTES_ADDR": address,
        "SHIKOKU_ROUTES_METRICS_ADDR": metrics,
        "SHIKOKU_RULES_ADDR": source.address,
        **settings,
    }
    log = io.StringIO()
    process = ServiceProcess("routes", "services.routes.shell.server", env, log=log)
    process.wait_listening()
    return Routes(process, address, metrics, log)


@pytest.fixture(scope="module")
def source() -> Iterator[GraphSource]:
    with GraphSource() as source:
        yield source


@pytest.fixture(scope="module")
def routes(source: GraphSource) -> Iterator[Routes]:
    routes = start_routes(
        source, SHIKOKU_ROUTES_WORKERS=str(WORKERS), SHIKOKU_ROUTES_QUEUE=str(QUEUE)
    )
    yield routes
    routes.process.stop()
    assert routes.process.process.returncode == 0, routes.log.getvalue()


@pytest.fixture
async def channel(routes: Routes) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(routes.address) as channel:
        yield channel


def children(pid: int) -> dict[int, bytes]:
    """The processes whose parent is `pid`, with their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if int(parent) == pid and state != "Z":  # a zombie has ended, not yet reaped
            found[int(entry.name)] = command
    return found


def fork_servers_of(pid: int) -> set[int]:
    return {child for child, command in children(pid).items() if b"forkserver" in command}


def workers_of(pid: int) -> set[int]:
    """The pool's worker processes: those the service's multiprocessing fork server made."""
    return {worker for server in fork_servers_of(pid) for worker in children(server)}


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def long_search(
    optimizer: public_pb2_grpc.RoutesServiceAsyncStub, request: public_pb2.OptimizeRequest
) -> public_pb2.RouteSolution | grpc.RpcError:
    try:
        answer: public_pb2.RouteSolution = await optimizer.Optimize(
            request, metadata=SECRET, timeout=LONG_SECONDS
        )
        return answer
    except grpc.RpcError as error:
        return error


def best_attached(error: grpc.RpcError) -> public_pb2.RouteSolution | None:
    """The best routes a search cut short at its deadline found, as Optimize attaches them to
    its DEADLINE_EXCEEDED (SEARCH_CUT_SHORT); None when the caller's deadline came first."""
    call = cast(grpc.Call, error)  # every RpcError of a call is its Call too
    assert call.code() == grpc.StatusCode.DEADLINE_EXCEEDED, error
    for key, value in call.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            info, best = error_details_pb2.ErrorInfo(), public_pb2.RouteSolution()
            details = status_pb2.Status.FromString(value).details
            assert details[0].Unpack(info) and info.reason == "SEARCH_CUT_SHORT"
            assert details[1].Unpack(best) and not best.proven
            return best
    return None


def legal(graph: TrackGraph, solution: public_pb2.RouteSolution) -> bool:
    """Whether the routes (train names and hexes, as a client gets them) are legal together
    on `graph` and earn what the solution says."""
    free = list(enumerate(train.name for train in graph.trains))
    submitted = []
    for route in solution.routes:
        index, name = next((i, n) for i, n in free if n == route.train)
        free.remove((index, name))
        submitted.append(HexRoute(index, tuple(route.hexes)))
    evaluation = evaluate(graph, submitted)
    return evaluation.ok and evaluation.revenue == solution.revenue == sum(
        r.revenue for r in solution.routes
    )


async def test_cheap_calls_are_answered_while_four_long_searches_run(
    routes: Routes, channel: grpc.aio.Channel, source: GraphSource
) -> None:
    """Four searches of the tiled map with ten D-trains (each more than LONG_SECONDS of work)
    fill the two workers and the queue of two; meanwhile route checks and health checks are
    answered within 50 ms (the median; before the pool, each waited for the searches to end),
    a fifth search is refused at once with SOLVER_BUSY and a delay to wait, and the searches
    running end at their deadline, in the worker, with the best routes they found."""
    engine = routes_pb2_grpc.RouteEngineStub(channel)
    optimizer = public_pb2_grpc.RoutesServiceStub(channel)
    health = health_pb2_grpc.HealthStub(channel)
    graph, search = pathological_graph(), source.offer(pathological_message())
    started = time.monotonic()
    searches = [asyncio.create_task(long_search(optimizer, search)) for _ in range(WORKERS + QUEUE)]
    await asyncio.sleep(0.3)

    # Cheap calls while the four searches are under way (before the pool, the first of them
    # waited for a search to end).
    checks, probes = [], []
    while time.monotonic() - started < 1.6 and not any(s.done() for s in searches):
        checks.append(await timed(lambda: engine.Evaluate(CHECK, metadata=SECRET, timeout=5)))
        probes.append(await timed(lambda: health.Check(health_pb2.HealthCheckRequest(), timeout=5)))
        await asyncio.sleep(0.05)
    assert statistics.median(checks) < CHEAP_SECONDS, checks
    assert statistics.median(probes) < CHEAP_SECONDS, probes
    assert len(checks) >= 5, checks

    # The four fill the workers and the queue: a fifth is refused at once.
    await routes.until_searches(WORKERS + QUEUE)
    with pytest.raises(grpc.RpcError) as refused:
        await optimizer.Optimize(search, metadata=SECRET, timeout=5)
    error = ShikokuError.from_rpc_error(refused.value)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.value.details()
    assert error.reason == "SOLVER_BUSY"
    assert error.retry_delay is not None and 0.1 <= error.retry_delay <= LONG_SECONDS
    assert not any(s.done() for s in searches)

    answers = await asyncio.gather(*searches)
    # Each search stops at its deadline in its worker, and the worker takes the next: the pool
    # is empty soon after (it would hold them for minutes if the deadline were not honoured).
    await routes.until_searches(0, within=2.0)
    for answer in answers:
        # Cut short, as each needed longer than its deadline: the best routes found attached,
        # unless the answer came after the caller's deadline.
        assert isinstance(answer, grpc.RpcError), "the search needed longer than its deadline"
        if (best := best_attached(answer)) is not None:
            assert legal(graph, best)


def graphs_to_compare() -> list[TrackGraph]:
    rng = random.Random(23)
    return [pathological_graph(trains) for trains in (2, 3, 4)] + [
        random_graph(rng) for _ in range(20)
    ]


async def test_the_pool_answers_as_the_solver_in_process(
    routes: Routes, channel: grpc.aio.Channel, source: GraphSource
) -> None:
    optimizer = public_pb2_grpc.RoutesServiceStub(channel)
    graphs = graphs_to_compare()
    searched = sum(needs_search(wire.graph_to_proto(graph)) for graph in graphs)
    assert searched >= 10
    before = await routes.metric("shikoku_route_search_seconds_count")
    for graph in graphs:
        message = wire.graph_to_proto(graph)
        answer = await optimizer.Optimize(source.offer(message), metadata=SECRET, timeout=30)
        expected = solve(graph)
        assert expected.proven
        assert answer == public_solution(message, wire.solution_to_proto(expected))
    after = await routes.metric("shikoku_route_search_seconds_count")
    assert after - before == searched, "each graph with something to search went to a worker"


async def test_a_worker_that_dies_is_replaced(
    routes: Routes, channel: grpc.aio.Channel, source: GraphSource
) -> None:
    """A worker killed in the middle of a search: the search's caller is told UNAVAILABLE
    SOLVER_LOST at once, and the next search is served by a new pool of as many workers."""
    optimizer = public_pb2_grpc.RoutesServiceStub(channel)
    pid = routes.process.process.pid
    first = workers_of(pid)
    assert len(first) == WORKERS
    search = asyncio.create_task(long_search(optimizer, source.offer(pathological_message())))
    await routes.until_searches(1)
    os.kill(min(first), signal.SIGKILL)
    killed = time.monotonic()
    lost = await search
    assert isinstance(lost, grpc.RpcError)
    assert lost.code() == grpc.StatusCode.UNAVAILABLE, lost.details()
    error = ShikokuError.from_rpc_error(lost)
    assert error.reason == "SOLVER_LOST" and error.retry_delay is not None
    assert time.monotonic() - killed < 1.0, "the call is told at once"

    again = await optimizer.Optimize(source.offer(small_graph()), metadata=SECRET, timeout=10)
    assert again.revenue == 40 and again.proven
    second = workers_of(pid)
    assert len(second) == WORKERS and not second & first
    assert "Traceback" not in routes.log.getvalue(), routes.log.getvalue()


async def test_sigterm_lets_a_running_search_answer_then_stops_the_pool(
    source: GraphSource,
) -> None:
    routes = start_routes(source, SHIKOKU_ROUTES_WORKERS="2")
    process, log = routes.process, routes.log
    workers = workers_of(process.process.pid)
    assert len(workers) == 2
    async with grpc.aio.insecure_channel(routes.address) as channel:
        optimizer = public_pb2_grpc.RoutesServiceStub(channel)
        request = source.offer(pathological_message())
        search = asyncio.ensure_future(optimizer.Optimize(request, metadata=SECRET, timeout=2.0))
        await routes.until_searches(1)
        process.process.send_signal(signal.SIGTERM)
        with pytest.raises(grpc.RpcError) as cut_short:
            await search
        # The best found attached, unless it came after its deadline on a busy machine.
        if (best := best_attached(cut_short.value)) is not None:
            assert best.routes
    assert await asyncio.to_thread(process.process.wait, 10) == 0
    assert not any(Path(f"/proc/{w}").exists() for w in workers), "no worker outlives it"
    assert "routes stopped" in log.getvalue()
    assert "Traceback" not in log.getvalue(), log.getvalue()


def test_optimize_through_the_gateway_is_searched_by_the_pool(system: System) -> None:
    """The public path, gateway to rules' graph to a worker: the routes a real game's
    corporation first runs (game 314), as the solver in process finds them, the search counted
    by the routes process's pool."""
    game = load(SITE_GAMES / "314.json")
    here = InProcessTable(game)
    routes = metrics_urls(system.output)["routes"]

    def searched() -> float:
        return sum(total(scrape(url), "shikoku_route_search_seconds_count") for url in routes)

    before = searched()
    with SdkClient(system.gateway, api_key=system.api_key) as client:
        there = GatewayTable(game, client)
        for _ in zip(step_through(game, here), step_through(game, there), strict=False):
            round_ = here.state.round
            if isinstance(round_, OperatingRound) and round_.current and round_.step is Step.ROUTES:
                graph = corporation_graph(here.state, round_.current)
                if needs_search(wire.graph_to_proto(graph)):
                    break
        else:
            raise AssertionError("no corporation of the game ran trains")
        solution = client.best_routes(there.game_id, round_.current)
    expected = solve(graph)
    assert solution.proven and solution.revenue == expected.revenue > 0
    assert [(r.train, tuple(r.hexes), r.revenue) for r in solution.routes] == [
        (graph.trains[r.train].name, route_hexes(graph, r), r.revenue) for r in expected.routes
    ]
    assert searched() == before + 1


async def test_no_worker_outlives_a_routes_process_that_was_killed(source: GraphSource) -> None:
    """A routes process killed (SIGKILL) in the middle of a search that has no deadline: its
    worker exits, and the fork server with it, rather than searching (or waiting on a queue no
    one writes to) for ever beside the process that replaces it."""
    routes = start_routes(source, SHIKOKU_ROUTES_WORKERS="1")
    process = routes.process.process
    workers = workers_of(process.pid) | fork_servers_of(process.pid)
    assert len(workers) == 2
    async with grpc.aio.insecure_channel(routes.address) as channel:
        optimizer = public_pb2_grpc.RoutesServiceStub(channel)
        request = source.offer(pathological_message())
        search = asyncio.ensure_future(optimizer.Optimize(request, metadata=SECRET))
        await routes.until_searches(1)
        routes.process.kill()
        with pytest.raises(grpc.RpcError):
            await search
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{worker}").exists() for worker in workers):
        assert time.monotonic() < deadline, "the worker or its fork server lives on"
        await asyncio.sleep(0.05)
