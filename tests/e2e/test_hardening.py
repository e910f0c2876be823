"""Hard to break: retries tell the truth, bad input gets a clean status, through the real
gateway."""

from __future__ import annotations

import io
import os
import random
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from infra import deployment_token
from infra.redis_server import free_port
from shikoku.internal.v1 import rules_pb2, rules_pb2_grpc
from shikoku.v1 import game_pb2
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.random_player import choose, command_for
from tests.e2e.api import PASS, Client, auth, expect_error, started_table
from tools.supervisor import ServiceProcess

pytestmark = [pytest.mark.e2e, pytest.mark.client]

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


@pytest.fixture(scope="module")
def rules_alone(redis_url: str) -> Iterator[str]:
    """A rules process of a deployment whose token is "the-secret"; its address."""
    address = f"127.0.0.1:{free_port()}"
    env = dict(
        os.environ,
        REDIS_URL=redis_url,
        SHIKOKU_RULES_ADDR=address,
        SHIKOKU_ROUTES_ADDR=f"127.0.0.1:{free_port()}",
        **{deployment_token.SETTING: "the-secret"},
    )
    rules = ServiceProcess("rules", "services.rules.shell.server", env, log=io.StringIO())
    rules.wait_listening()
    yield address
    rules.stop()


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
                metadata=((deployment_token.HEADER, "the-secret"),),
                timeout=5,
            ),
            grpc.StatusCode.NOT_FOUND,
            "GAME_NOT_FOUND",
        )
