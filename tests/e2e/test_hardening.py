"""Hard to break: retries tell the truth, bad input gets a clean status, through the real
gateway."""

from __future__ import annotations

import functools
import io
import os
import random
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from infra import deployment_token
from shikoku.internal.v1 import routes_pb2, routes_pb2_grpc, rules_pb2, rules_pb2_grpc
from shikoku.v1 import game_pb2, lobby_pb2
from shikoku_dev.redis_server import free_port
from shikoku_dev.supervisor import ServiceProcess
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.random_player import choose, command_for
from tests.e2e.api import PASS, Client, auth, expect_error, started_table

pytestmark = pytest.mark.e2e

BURSTS, CALLERS = 50, 16


def outcome(
    client: Client, request: game_pb2.SubmitCommandRequest, credential: tuple[tuple[str, str], ...]
) -> str:
    try:
        answer = client.game.SubmitCommand(request, metadata=credential)
    except grpc.RpcError as error:
        return f"refused {ShikokuError.from_rpc_error(error).reason}"
    return f"applied {answer.SerializeToString(deterministic=True).hex()}"


def test_every_caller_of_one_command_id_gets_the_same_answer(client: Client) -> None:
    """50 bursts of 16 concurrent submits of one command with one command id: the command is
    decided once, and every caller is told that outcome (accepted with the same events, or the
    same refusal), never a refusal while another caller was told it was applied."""
    game_id, tokens, _host = started_table(client, 3)
    rng = random.Random(7)

    def no_routes(_corporation: str) -> list[game_pb2.RouteRun]:
        return []

    with ThreadPoolExecutor(CALLERS) as pool:
        for burst in range(BURSTS):
            listed = client.game.ListLegalActions(
                game_pb2.ListLegalActionsRequest(game_id=game_id), metadata=auth(tokens[0])
            ).actions
            if not listed:
                break
            action = choose(list(listed), rng)
            request = game_pb2.SubmitCommandRequest(
                game_id=game_id,
                command=command_for(action, rng, no_routes),
                command_id=str(uuid.uuid4()),
            )
            credential = auth(tokens[action.seat - 1])
            calls = [pool.submit(outcome, client, request, credential) for _ in range(CALLERS)]
            answers = {call.result() for call in calls}
            assert len(answers) == 1, f"burst {burst}: {sorted(a[:40] for a in answers)}"


SECRET = ((deployment_token.HEADER, "the-secret"),)


def alone(redis_url: str, name: str, module: str) -> tuple[ServiceProcess, str]:
    """One process of an internal service, of a deployment whose token is "the-secret"."""
    env = dict(os.environ, REDIS_URL=redis_url, **{deployment_token.SETTING: "the-secret"})
    for service in ("RULES", "ROUTES", "LOBBY"):
        env[f"SHIKOKU_{service}_ADDR"] = f"127.0.0.1:{free_port()}"
    process = ServiceProcess(name, module, env, log=io.StringIO())
    process.wait_listening()
    return process, env[f"SHIKOKU_{name.upper()}_ADDR"]


@pytest.fixture(scope="module")
def rules_alone(redis_url: str) -> Iterator[str]:
    rules, address = alone(redis_url, "rules", "services.rules.shell.server")
    yield address
    rules.stop()


@pytest.fixture(scope="module")
def route_engine(redis_url: str) -> Iterator[routes_pb2_grpc.RouteEngineStub]:
    routes, address = alone(redis_url, "routes", "services.routes.shell.server")
    with grpc.insecure_channel(address) as channel:
        yield routes_pb2_grpc.RouteEngineStub(channel)
    routes.stop()


@pytest.mark.parametrize("sent", [None, "a-guess"])
def test_an_internal_service_refuses_callers_without_the_deployment_token(
    rules_alone: str, sent: str | None
) -> None:
    metadata = () if sent is None else ((deployment_token.HEADER, sent),)
    with grpc.insecure_channel(rules_alone) as channel:
        rules = rules_pb2_grpc.RulesServiceStub(channel)
        submit = rules_pb2.SubmitRequest(game_id="g-any", seat=1, command=PASS)
        expect_error(
            lambda: rules.Submit(submit, metadata=metadata, timeout=5),
            grpc.StatusCode.UNAUTHENTICATED,
            "DEPLOYMENT_CREDENTIAL_REQUIRED",
        )
        # Health checks stay open to probes.
        health = health_pb2_grpc.HealthStub(channel)
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == 1
        # The deployment's own processes are served (and told there is no such game).
        expect_error(
            lambda: rules.GetState(
                game_pb2.GetStateRequest(game_id="g-none"),
                metadata=SECRET,
                timeout=5,
            ),
            grpc.StatusCode.NOT_FOUND,
            "GAME_NOT_FOUND",
        )


def list_services(channel: grpc.Channel, metadata: tuple[tuple[str, str], ...]) -> set[str]:
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    (answer,) = reflection.ServerReflectionInfo(iter([request]), metadata=metadata, timeout=5)
    return {service.name for service in answer.list_services_response.service}


@pytest.mark.parametrize(
    ("name", "module", "service"),
    [
        ("rules", "services.rules.shell.server", "shikoku.internal.v1.RulesService"),
        ("lobby", "services.lobby.shell.server", "shikoku.internal.v1.CredentialService"),
        ("routes", "services.routes.shell.server", "shikoku.internal.v1.RouteEngine"),
    ],
)
def test_an_internal_service_shows_its_schema_only_to_the_deployment(
    redis_url: str, name: str, module: str, service: str
) -> None:
    process, address = alone(redis_url, name, module)
    try:
        with grpc.insecure_channel(address) as channel:
            for sent in ((), ((deployment_token.HEADER, "a-guess"),)):
                expect_error(
                    functools.partial(list_services, channel, sent),
                    grpc.StatusCode.UNAUTHENTICATED,
                    "DEPLOYMENT_CREDENTIAL_REQUIRED",
                )
            assert service in list_services(channel, SECRET)
    finally:
        process.stop()


def node(id_: str, kind: str = "city", revenue: int = 20) -> routes_pb2.Node:
    return routes_pb2.Node(id=id_, kind=kind, hex=id_, revenue=revenue, token=True)


GRAPH = routes_pb2.TrackGraph(
    nodes=[node("A1"), node("B1")],
    segments=[routes_pb2.Segment(id="s1", hex="A1", a="A1", b="B1")],
    trains=[routes_pb2.Train(name="2", stops=2)],
)


@pytest.mark.parametrize(
    ("graph", "field"),
    [
        (routes_pb2.TrackGraph(nodes=[node("A1", kind="castle")], trains=GRAPH.trains), "kind"),
        (
            routes_pb2.TrackGraph(
                nodes=GRAPH.nodes,
                segments=[routes_pb2.Segment(id="s1", hex="A1", a="A1", b="Z9")],
                trains=GRAPH.trains,
            ),
            "segments[0]",
        ),
        (routes_pb2.TrackGraph(nodes=[node(f"N{i}") for i in range(2_001)]), "graph"),
    ],
)
def test_the_route_engine_refuses_a_graph_it_cannot_check(
    route_engine: routes_pb2_grpc.RouteEngineStub, graph: routes_pb2.TrackGraph, field: str
) -> None:
    request = routes_pb2.EvaluateRequest(graph=graph)
    with pytest.raises(grpc.RpcError) as refused:
        route_engine.Evaluate(request, metadata=SECRET, timeout=10)
    error = ShikokuError.from_rpc_error(refused.value)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.reason == "INVALID_GRAPH"
    assert any(field in name for name in error.field_violations), error.field_violations


def test_the_route_engine_checks_routes_on_a_graph_within_its_limits(
    route_engine: routes_pb2_grpc.RouteEngineStub,
) -> None:
    route = routes_pb2.SubmittedRoute(train=0, nodes=["A1", "B1"])
    request = routes_pb2.EvaluateRequest(graph=GRAPH, routes=[route])
    evaluation = route_engine.Evaluate(request, metadata=SECRET, timeout=10)
    assert evaluation.revenue == 40 and not evaluation.HasField("violation")


def test_a_lobby_call_redone_after_its_answer_was_lost_makes_nothing_twice(client: Client) -> None:
    """The lobby died between a call's writes and keeping its answer (here: the kept answer is
    deleted): the retry with the same request_id gets the same table and the same seat, and
    copies of one JoinTable sent at once take one seat."""
    create = lobby_pb2.CreateTableRequest(seat_count=3, request_id=str(uuid.uuid4()))
    first = client.lobby.CreateTable(create)
    client.redis.delete(f"lobby:request:{{CreateTable:{create.request_id}}}")
    again = client.lobby.CreateTable(create)
    assert (again.table.table_id, again.host_token) == (first.table.table_id, first.host_token)

    table_id = first.table.table_id
    join = lobby_pb2.JoinTableRequest(table_id=table_id, player_name="Ann", request_id="j-1")
    joined = client.lobby.JoinTable(join)
    client.redis.delete("lobby:request:{JoinTable:j-1}")
    assert client.lobby.JoinTable(join).seat_token == joined.seat_token

    burst = lobby_pb2.JoinTableRequest(table_id=table_id, player_name="Bo", request_id="j-2")
    with ThreadPoolExecutor(8) as pool:
        tokens = {answer.seat_token for answer in pool.map(client.lobby.JoinTable, [burst] * 8)}
    assert len(tokens) == 1
    seats = client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id)).seats
    assert [seat.player_name for seat in seats if seat.player_name] == ["Ann", "Bo"]


def test_a_second_process_on_a_taken_port_refuses_to_start(redis_url: str) -> None:
    """Two servers on one port would share its connections without a word (SO_REUSEPORT):
    the second one exits with one line saying why."""
    first, address = alone(redis_url, "routes", "services.routes.shell.server")
    try:
        env = {**first.env, "SHIKOKU_ROUTES_ADDR": address}
        log = io.StringIO()
        second = ServiceProcess("routes", "services.routes.shell.server", env, log=log)
        assert second.process.wait(timeout=30) != 0
        assert f"routes: cannot listen on {address}" in log.getvalue()
    finally:
        first.stop()
