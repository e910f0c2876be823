"""Every process serves Prometheus metrics on the address `shikoku run` prints, and they count
what happened: calls by method, code and reason, latencies, commands and rejections, events,
Redis commands, caches, active games, watchers, and the web entrypoint's calls."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.error
import urllib.request

import grpc
import pytest

from shikoku.v1 import game_pb2
from tests.e2e.api import PASS, Client, System, auth, started_table
from tests.e2e.observing import metrics_urls, scrape, total

pytestmark = pytest.mark.e2e

PROCESSES = {"rules", "routes", "lobby", "gateway", "web", "notify"}
GAME = "shikoku.v1.GameService"


def metrics_of(system: System, process: str) -> str:
    return "".join(scrape(url) for url in metrics_urls(system.output)[process])


def test_every_process_serves_metrics_at_the_printed_address(system: System) -> None:
    urls = metrics_urls(system.output)
    assert set(urls) == PROCESSES
    for process in PROCESSES:
        text = metrics_of(system, process)
        assert "# TYPE shikoku_rpc_calls_total counter" in text
        assert "process_cpu_seconds_total" in text  # the process's own, for CPU per process


def test_a_played_turn_is_counted_by_every_process_it_touched(
    system: System, client: Client
) -> None:
    game_id, tokens, _host = started_table(client)
    state = client.game.GetState(game_pb2.GetStateRequest(game_id=game_id))
    first = state.acting_seats[0]
    token_of = dict(enumerate(tokens, start=1))

    def submit(seat: int, command: game_pb2.Command) -> None:
        request = game_pb2.SubmitCommandRequest(game_id=game_id, command=command)
        client.game.SubmitCommand(request, metadata=auth(token_of[seat]))

    before = {process: metrics_of(system, process) for process in ("gateway", "rules")}
    submit(first, game_pb2.Command(buy_private=game_pb2.BuyPrivate(company="TR")))
    with pytest.raises(grpc.RpcError):
        submit(first, PASS)  # no longer this seat's turn
    after = {process: metrics_of(system, process) for process in ("gateway", "rules")}

    def grown(process: str, name: str, **labels: str) -> float:
        return total(after[process], name, **labels) - total(before[process], name, **labels)

    calls = "shikoku_rpc_calls_total"
    submitted = {"service": GAME, "method": "SubmitCommand"}
    assert grown("gateway", calls, **submitted, code="OK", reason="") == 1
    assert (
        grown("gateway", calls, **submitted, code="FAILED_PRECONDITION", reason="NOT_YOUR_TURN")
        == 1
    )
    assert grown("gateway", "shikoku_rpc_call_seconds_count", **submitted) == 2
    assert grown("rules", calls, method="Submit", code="OK") == 1
    assert grown("rules", calls, method="Submit", reason="NOT_YOUR_TURN") == 1
    commands = "shikoku_commands_total"
    assert grown("rules", commands, command="BuyPrivate", outcome="accepted") == 1
    assert grown("rules", commands, command="Pass", outcome="rejected") == 1
    assert grown("rules", "shikoku_command_rejections_total", reason="NOT_YOUR_TURN") == 1
    assert grown("rules", "shikoku_events_appended_total", event="PrivateBought") == 1
    assert grown("rules", "shikoku_redis_command_seconds_count", command="EVALSHA") >= 1
    rules = after["rules"]
    assert total(rules, "shikoku_games_active") >= 1
    assert total(rules, "shikoku_cache_entries", cache="rules_states") >= 1
    assert total(rules, "shikoku_cache_capacity", cache="rules_states") > 0
    assert total(after["gateway"], "shikoku_cache_entries", cache="gateway_grants") >= 1
    lobby = metrics_of(system, "lobby")
    assert total(lobby, "shikoku_events_appended_total", aggregate="table", event="TableStarted")
    assert total(lobby, calls, method="Authorize", code="OK") >= 1


def test_open_watches_are_counted_while_they_last(system: System, client: Client) -> None:
    game_id, _tokens, _host = started_table(client)
    call = client.game.WatchGame(game_pb2.WatchGameRequest(game_id=game_id, from_version=1))
    first = threading.Event()

    def read() -> None:
        with contextlib.suppress(grpc.RpcError):  # cancelled below
            for _response in call:
                first.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert first.wait(10)
    watching = metrics_of(system, "gateway")
    assert total(watching, "shikoku_game_watchers") >= 1
    assert total(watching, "shikoku_watched_games") >= 1
    assert total(watching, "shikoku_game_streams_open") >= 1
    assert total(watching, "shikoku_rpc_streams_open", service=GAME, method="WatchGame") >= 1
    call.cancel()
    reader.join(10)
    deadline = time.monotonic() + 10
    while total(metrics_of(system, "gateway"), "shikoku_rpc_streams_open", method="WatchGame"):
        assert time.monotonic() < deadline, "the closed watch is still counted open"
        time.sleep(0.1)
    ended = metrics_of(system, "gateway")
    assert total(ended, "shikoku_rpc_calls_total", method="WatchGame", code="CANCELLED") >= 1


def test_the_web_entrypoint_counts_its_calls(system: System) -> None:
    before = metrics_of(system, "web")
    request = urllib.request.Request(
        f"http://{system.web}/shikoku.v1.TitleService/GetTitle",
        data=json.dumps({}).encode(),
        headers={"content-type": "application/json", "x-api-key": system.api_key},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200
    missing_key = urllib.request.Request(
        f"http://{system.web}/shikoku.v1.TitleService/GetTitle",
        data=b"{}",
        headers={"content-type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(missing_key, timeout=10)
    after = metrics_of(system, "web")
    ok = {"service": "shikoku.v1.TitleService", "method": "GetTitle", "code": "OK"}
    refused = {"method": "GetTitle", "code": "UNAUTHENTICATED", "reason": "MISSING_API_KEY"}
    calls = "shikoku_rpc_calls_total"
    assert total(after, calls, **ok) - total(before, calls, **ok) == 1
    assert total(after, calls, **refused) - total(before, calls, **refused) == 1
    assert total(after, "shikoku_rpc_call_seconds_count", method="GetTitle") >= 2
