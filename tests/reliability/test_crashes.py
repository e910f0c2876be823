"""Crashes and outages: a rules process killed mid-stream, Redis stopped and restarted."""

from __future__ import annotations

import io
import os
import random
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar, cast

import grpc
import pytest
import redis

from infra import deployment_token
from infra.eventstore import Entries, stream_key
from shikoku.internal.v1 import rules_pb2, rules_pb2_grpc
from shikoku.v1 import game_pb2
from shikoku_dev.redis_server import EmbeddedRedis, free_port
from shikoku_dev.supervisor import ServiceProcess
from shikoku_sdk.random_player import choose, command_for

T = TypeVar("T")

# The deployment's token: the rules service serves only callers that send it.
TOKEN = "crash-tests"
INTERNAL = ((deployment_token.HEADER, TOKEN),)


def start_rules(redis_url: str, address: str) -> ServiceProcess:
    env = dict(os.environ, REDIS_URL=redis_url, SHIKOKU_RULES_ADDR=address)
    env[deployment_token.SETTING] = TOKEN
    env["SHIKOKU_ROUTES_ADDR"] = f"127.0.0.1:{free_port()}"  # not needed before trains run
    rules = ServiceProcess("rules", "services.rules.shell.server", env, log=io.StringIO())
    rules.wait_listening()
    return rules


class Player:
    """Plays the game through the rules service, remembering every acknowledged version."""

    def __init__(self, address: str, game_id: str) -> None:
        self.address = address
        self.game_id = game_id
        self.acknowledged: dict[int, str] = {}
        self.rng = random.Random(game_id)
        self.retrying = 0  # how often an UNAVAILABLE submit is sent again
        self.connect()

    def connect(self) -> None:
        """A new connection (after a restart, rather than wait out the old one's backoff),
        once the server accepts it: a first call racing the restart would fail at once."""
        self.channel = grpc.insecure_channel(self.address)
        grpc.channel_ready_future(self.channel).result(timeout=10)
        self.rules = rules_pb2_grpc.RulesServiceStub(self.channel)

    def version(self) -> int:
        request = game_pb2.GetStateRequest(game_id=self.game_id)
        return int(self.rules.GetState(request, timeout=5, metadata=INTERNAL).version)

    def create(self) -> None:
        players = [rules_pb2.GamePlayer(seat=s, name=f"p{s}") for s in (1, 2, 3)]
        request = rules_pb2.CreateGameRequest(
            game_id=self.game_id, players=players, fixed_seat_order=True
        )
        self.rules.CreateGame(request, timeout=5, metadata=INTERNAL)

    def answered_again(self, within: float) -> None:
        """Waits until the rules service reads the game again after Redis is back: UNAVAILABLE
        is a retryable refusal, and a restarted Redis loading its log on a busy machine, or the
        service's pool reconnecting, may take a moment."""
        deadline = time.monotonic() + within
        while True:
            try:
                self.version()
                return
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def step(self) -> None:
        request = game_pb2.ListLegalActionsRequest(game_id=self.game_id)
        listed = self._retried(
            lambda: self.rules.ListLegalActions(request, timeout=5, metadata=INTERNAL)
        )
        actions = list(listed.actions)
        assert actions, "the game has ended"
        action = choose(actions, self.rng)
        command = command_for(action, self.rng, lambda _corporation: [])  # no trains run yet
        submit = rules_pb2.SubmitRequest(
            game_id=self.game_id, seat=action.seat, command=command, command_id=uuid.uuid4().hex
        )
        answer = self._submitted(submit)
        self.acknowledged.update({event.version: event.type for event in answer.events})

    def _submitted(self, submit: rules_pb2.SubmitRequest) -> game_pb2.SubmitCommandResponse:
        """As a client does: UNAVAILABLE sent again with the same command id (applied once)."""
        return self._retried(lambda: self.rules.Submit(submit, timeout=5, metadata=INTERNAL))

    def _retried(self, call: Callable[[], T]) -> T:
        """The call, made again on UNAVAILABLE while `retrying` allows it (after Redis came
        back, a pooled connection may still be the old one's, for a read as for a write)."""
        for attempt in range(self.retrying + 1):
            try:
                return call()
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE or attempt == self.retrying:
                    raise
                time.sleep(0.2)
        raise AssertionError("unreachable")


def stored_types(redis_url: str, game_id: str) -> dict[int, str]:
    client = redis.Redis.from_url(redis_url)
    entries = cast(Entries, client.xrange(stream_key("game", game_id)))
    client.close()
    return {int(entry_id.split(b"-")[0]): fields[b"t"].decode() for entry_id, fields in entries}


def test_a_killed_rules_process_loses_nothing_acknowledged(redis_url: str) -> None:
    address = f"127.0.0.1:{free_port()}"
    rules = start_rules(redis_url, address)
    player = Player(address, "g-killed")
    try:
        player.create()
        for _ in range(15):
            player.step()
        rules.process.send_signal(signal.SIGKILL)  # no chance to clean up
        rules.process.wait()
        with pytest.raises(grpc.RpcError):
            player.step()
        rules = start_rules(redis_url, address)
        player.connect()
        for _ in range(15):
            player.step()
        served = player.version()  # the new process folded the whole stream
    finally:
        rules.stop()
        player.channel.close()
    stored = stored_types(redis_url, "g-killed")
    assert sorted(stored) == list(range(1, len(stored) + 1)) and served == len(stored)
    assert all(stored[version] == kind for version, kind in player.acknowledged.items())


@pytest.fixture
def durable_redis(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(data_dir=tmp_path / "redis", durable=True).start()
    yield server
    server.stop()


def test_redis_restarted_with_aof_loses_nothing_and_outage_fails_fast(
    durable_redis: EmbeddedRedis,
) -> None:
    address = f"127.0.0.1:{free_port()}"
    rules = start_rules(durable_redis.url, address)
    player = Player(address, "g-outage")
    try:
        player.create()
        for _ in range(10):
            player.step()
        durable_redis.stop()
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as failed:
            player.step()
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
        assert time.monotonic() - started < 4  # fails fast, no hang
        durable_redis.start()
        player.answered_again(within=30)
        player.retrying = 10
        for _ in range(10):
            player.step()
    finally:
        rules.stop()
        player.channel.close()
    stored = stored_types(durable_redis.url, "g-outage")
    assert sorted(stored) == list(range(1, len(stored) + 1))
    assert all(stored[version] == kind for version, kind in player.acknowledged.items())
    assert len(player.acknowledged) >= 20
