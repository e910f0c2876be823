"""Watching a game through the gateway while bots play it: resuming after disconnections at
random points misses nothing and repeats nothing; heartbeats; the state after each action."""

from __future__ import annotations

import random
import threading

import grpc
import pytest

from shikoku.v1 import game_pb2
from shikoku_sdk import Client as SdkClient
from shikoku_sdk import RandomPlayer
from tests.e2e.api import Client, System, expect_error, started_table

pytestmark = pytest.mark.e2e

WATCH_SECONDS = 900


def watch_until(
    client: Client,
    game_id: str,
    done: threading.Event,
    rng: random.Random | None = None,
    include_state: bool = False,
) -> list[game_pb2.WatchGameResponse]:
    """Watches until the game is over and all of it was received; with `rng`, hangs up after a
    random number of items each time and resumes from the last version received."""
    received: list[game_pb2.WatchGameResponse] = []
    while True:
        last = received[-1].event.version if received else 0
        if done.is_set() and last == client.stream_length(game_id):
            return received
        request = game_pb2.WatchGameRequest(
            game_id=game_id, from_version=last + 1, include_state=include_state, heartbeat_seconds=1
        )
        # The steady watcher holds one call for the whole game, which on a loaded cluster can
        # outlast a minute; pytest's own timeout bounds a watch that hangs.
        call = client.game.WatchGame(request, timeout=WATCH_SECONDS)
        hang_up_after = rng.randint(1, 40) if rng else None
        for count, response in enumerate(call, start=1):
            if response.HasField("event"):
                received.append(response)
            if count == hang_up_after or (
                done.is_set() and received[-1].event.version == client.stream_length(game_id)
            ):
                call.cancel()
                break


def test_watchers_that_hang_up_and_resume_see_the_whole_game(
    system: System, client: Client
) -> None:
    game_id, tokens, _host = started_table(client, seats=3)
    done = threading.Event()

    def play() -> None:
        with SdkClient(system.gateway, api_key=system.api_key) as sdk:
            seats = {seat: sdk.with_credential(token) for seat, token in enumerate(tokens, 1)}
            RandomPlayer(game_id, seats, seed=7).play()
        done.set()

    steady: list[list[game_pb2.WatchGameResponse]] = []
    threads = [
        threading.Thread(target=play),
        threading.Thread(target=lambda: steady.append(watch_until(client, game_id, done))),
    ]
    for thread in threads:
        thread.start()
    resumed = watch_until(client, game_id, done, random.Random(11), include_state=True)
    for thread in threads:
        thread.join(timeout=120)
    final = client.stream_length(game_id)
    assert [r.event.version for r in resumed] == list(range(1, final + 1))
    assert [r.event for r in resumed] == [r.event for r in steady[0]]
    latest = client.game.GetState(game_pb2.GetStateRequest(game_id=game_id))
    assert latest.state["result"]
    assert resumed[-1].state == latest
    stated = [r for r in resumed if r.HasField("state")]
    assert len(stated) > 20  # live: one per action
    for response in random.Random(3).sample(stated, 5):
        at = game_pb2.GetStateRequest(game_id=game_id, version=response.event.version)
        assert response.state == client.game.GetState(at)


def test_a_quiet_game_sends_heartbeats(client: Client) -> None:
    game_id, _tokens, _host = started_table(client)
    latest = client.stream_length(game_id)
    request = game_pb2.WatchGameRequest(game_id=game_id, from_version=1, heartbeat_seconds=1)
    call = client.game.WatchGame(request, timeout=20)
    responses = []
    for response in call:
        responses.append(response)
        if response.HasField("heartbeat"):
            call.cancel()
            break
    assert [r.event.version for r in responses[:-1]] == list(range(1, latest + 1))
    assert responses[-1].heartbeat.version == latest
    expect_error(
        lambda: list(
            client.game.WatchGame(
                game_pb2.WatchGameRequest(game_id=game_id, heartbeat_seconds=61), timeout=5
            )
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_HEARTBEAT",
    )
    expect_error(
        lambda: list(client.game.WatchGame(game_pb2.WatchGameRequest(game_id="nope"), timeout=5)),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )
