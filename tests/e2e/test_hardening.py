"""Hard to break: retries tell the truth, bad input gets a clean status, through the real
gateway."""

from __future__ import annotations

import random
import uuid
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

from shikoku.v1 import game_pb2
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.random_player import choose, command_for
from tests.e2e.api import Client, auth, started_table

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
