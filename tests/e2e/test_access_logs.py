"""Every process writes one access line per call: JSON when its output is no terminal (as
under `shikoku run` here), with the method, code, reason, duration, the API key's id and the
game or table the request names; text when asked for. No key, token or other credential
reaches any line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from shikoku.internal.v1 import routes_pb2, routes_pb2_grpc
from shikoku.v1 import game_pb2, lobby_pb2, lobby_pb2_grpc
from shikoku_dev.redis_server import free_port
from shikoku_sdk.channel import keyed_channel
from tests.e2e.api import Client, System, auth, started_table
from tests.e2e.observing import access_lines, json_lines

pytestmark = pytest.mark.e2e

FIELDS = {"ts", "level", "process", "logger", "message", "method", "code", "reason", "duration_ms"}


def lines_until(
    system: System, found: Callable[[list[dict[str, Any]]], bool], seconds: float = 10
) -> list[dict[str, Any]]:
    """The access lines once `found` holds of them (they reach the output a moment after the
    call's answer)."""
    deadline = time.monotonic() + seconds
    while True:
        lines = access_lines(list(system.output))
        if found(lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.1)


def test_each_call_has_an_access_line_with_its_ids(system: System, client: Client) -> None:
    game_id, tokens, _host = started_table(client)
    state = client.game.GetState(game_pb2.GetStateRequest(game_id=game_id))
    command = game_pb2.Command(buy_private=game_pb2.BuyPrivate(company="TR"))
    request = game_pb2.SubmitCommandRequest(game_id=game_id, command=command)
    client.game.SubmitCommand(request, metadata=auth(tokens[state.acting_seats[0] - 1]))

    def submitted(line: dict[str, Any]) -> bool:
        return line.get("game_id") == game_id and line["method"].endswith("/SubmitCommand")

    def decided(line: dict[str, Any]) -> bool:
        return line.get("game_id") == game_id and line["method"].endswith("RulesService/Submit")

    lines = lines_until(
        system,
        lambda lines: (
            any(submitted(line) for line in lines) and any(decided(line) for line in lines)
        ),
    )
    for line in lines:
        assert set(line) >= FIELDS, line
        assert isinstance(line["duration_ms"], float | int) and line["duration_ms"] >= 0
    (at_gateway,) = [line for line in lines if submitted(line)]
    assert at_gateway["process"] == "gateway" and at_gateway["code"] == "OK"
    assert at_gateway["api_key_id"] == system.api_key.partition(".")[0]
    at_rules = [line for line in lines if decided(line)]
    assert len(at_rules) == 1 and at_rules[0]["process"] == "rules"
    assert at_rules[0]["code"] == "OK"
    table_id = game_id  # one game per table, same id
    joined = [
        line
        for line in lines
        if line["method"] == "/shikoku.v1.LobbyService/JoinTable"
        and line.get("table_id") == table_id
    ]
    assert {line["process"] for line in joined} == {"gateway", "lobby"}
    assert not [line for line in lines if "grpc.health" in line["method"]]


def test_refusals_are_logged_with_their_reason_and_no_credential(system: System) -> None:
    leaked = "t-0123456789ab~this-seat-secret-must-never-be-logged"
    wrong_key = system.api_key.partition(".")[0] + ".this-key-secret-must-never-be-logged"
    table_id = "t-000000000000"
    with keyed_channel(system.gateway, system.api_key) as channel:
        lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
        with pytest.raises(grpc.RpcError):
            lobby.SetReady(lobby_pb2.SetReadyRequest(table_id=table_id), metadata=auth(leaked))
    with keyed_channel(system.gateway, wrong_key) as channel:
        lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
        with pytest.raises(grpc.RpcError):
            lobby.GetTable(lobby_pb2.GetTableRequest(table_id="t-111111111111"))

    def refused(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [line for line in lines if line.get("reason") == "INVALID_API_KEY"]

    def both_written(lines: list[dict[str, Any]]) -> bool:
        # Lines are written in batches: wait for this test's own two refusals, not any earlier.
        return any(line.get("table_id") == "t-111111111111" for line in refused(lines)) and any(
            line.get("table_id") == table_id for line in lines
        )

    lines = lines_until(system, both_written)
    (bad_key,) = [line for line in refused(lines) if line.get("table_id") == "t-111111111111"]
    assert bad_key["process"] == "gateway" and bad_key["code"] == "UNAUTHENTICATED"
    assert "api_key_id" not in bad_key  # only a checked key's id is written
    refusals = [line for line in lines if line.get("table_id") == table_id]
    assert refusals and all(line["code"] != "OK" and line["reason"] for line in refusals)

    output = "".join(system.output)
    credentials = [leaked, leaked.partition("~")[2], wrong_key.partition(".")[2]]
    for credential in [*credentials, system.api_key, system.api_key.partition(".")[2]]:
        assert credential not in output


def test_seat_and_host_tokens_never_reach_a_line(system: System, client: Client) -> None:
    game_id, tokens, host = started_table(client)
    for token in tokens:
        client.game.GetState(game_pb2.GetStateRequest(game_id=game_id), metadata=auth(token))
    lines_until(system, lambda lines: any(line.get("game_id") == game_id for line in lines))
    output = "".join(system.output)
    for token in [*tokens, host]:
        assert token not in output and token.partition("~")[2] not in output
    assert all(isinstance(line, dict) for line in json_lines(list(system.output)))


def serve_routes(log_format: str) -> tuple[subprocess.Popen[str], str]:
    """A routes process of its own (it needs no Redis), its output read by the test."""
    address = f"127.0.0.1:{free_port()}"
    env = dict(
        os.environ,
        SHIKOKU_ROUTES_ADDR=address,
        SHIKOKU_INTERNAL_TOKEN="the-deployment-secret",
        SHIKOKU_LOG_FORMAT=log_format,
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "services.routes.shell.server"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("routes listening on"):
            return process, address
    raise AssertionError(f"routes did not start: {process.wait()}")


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_a_process_writes_json_or_text_as_set(log_format: str) -> None:
    process, address = serve_routes(log_format)
    try:
        with grpc.insecure_channel(address) as channel:
            engine = routes_pb2_grpc.RouteEngineStub(channel)
            with pytest.raises(grpc.RpcError):  # no deployment token
                engine.Evaluate(routes_pb2.EvaluateRequest(), timeout=10)
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=30)
    (line,) = [line for line in output.splitlines() if "shikoku.access" in line]
    assert "the-deployment-secret" not in output
    if log_format == "json":
        (parsed,) = access_lines([line])
        assert parsed["process"] == "routes"
        assert parsed["method"] == "/shikoku.internal.v1.RouteEngine/Evaluate"
        assert (parsed["code"], parsed["reason"]) == (
            "UNAUTHENTICATED",
            "DEPLOYMENT_CREDENTIAL_REQUIRED",
        )
    else:
        assert not line.startswith("{")
        assert "INFO" in line and "RouteEngine/Evaluate UNAUTHENTICATED" in line
        assert "reason=DEPLOYMENT_CREDENTIAL_REQUIRED" in line
