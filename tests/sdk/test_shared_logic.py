"""What `Client` and `shikoku_sdk.aio.Client` share, without a server: the two clients offer the
same methods; when a call is tried again and a stream reopened; a watch's resumption
bookkeeping; a player's decision asking for what it has not read, its generator put back."""

from __future__ import annotations

import inspect
import random

import grpc

import shikoku_sdk
from shikoku.v1 import game_pb2, routes_pb2
from shikoku_sdk import aio, calls
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.random_player import RandomPlayer
from shikoku_sdk.retries import reconnect_after, retry_after
from shikoku_sdk.seat_player import ROUTES, Read
from shikoku_sdk.watch import Resumption


def test_every_method_of_the_sync_client_is_there_with_its_arguments() -> None:
    sync = {
        name: member
        for name, member in vars(shikoku_sdk.Client).items()
        if inspect.isfunction(member) and not name.startswith("_")
    }
    assert {"create_table", "list_tables", "act", "watch", "watch_tournament"} <= set(sync)
    for name, member in sync.items():
        twin = getattr(aio.Client, name)
        assert inspect.signature(twin).parameters.keys() == (
            inspect.signature(member).parameters.keys()
        ), name
        if inspect.isgeneratorfunction(member):
            assert inspect.isasyncgenfunction(twin), name
        elif name not in ("with_credential", "metadata", "watch"):  # no I/O: not awaited
            assert inspect.iscoroutinefunction(twin), name


def error(code: grpc.StatusCode, retry_delay: float | None = None) -> ShikokuError:
    return ShikokuError(code, "test", retry_delay=retry_delay)


def test_a_call_is_tried_again_only_when_retried_transient_and_not_the_last() -> None:
    unavailable = error(grpc.StatusCode.UNAVAILABLE)
    assert retry_after(True, unavailable, 1, 5) == 0.1
    assert retry_after(True, unavailable, 3, 5) == 0.4
    assert retry_after(True, unavailable, 5, 5) is None  # the last attempt
    assert retry_after(False, unavailable, 1, 5) is None  # a call not retried
    assert retry_after(True, error(grpc.StatusCode.FAILED_PRECONDITION), 1, 5) is None
    limited = error(grpc.StatusCode.RESOURCE_EXHAUSTED, retry_delay=0.3)
    assert retry_after(True, limited, 1, 5) == 0.3  # as the server asked
    assert retry_after(True, error(grpc.StatusCode.RESOURCE_EXHAUSTED), 1, 5) is None


def test_a_stream_is_reopened_at_once_then_after_a_growing_wait_then_given_up() -> None:
    dropped = error(grpc.StatusCode.CANCELLED)
    assert reconnect_after(dropped, 1, 3) == 0.0
    assert reconnect_after(dropped, 2, 3) == 0.2
    assert reconnect_after(dropped, 4, 3) is None
    assert reconnect_after(error(grpc.StatusCode.PERMISSION_DENIED), 1, 3) is None


def test_the_writes_carry_an_id_and_only_the_right_calls_are_retried() -> None:
    created = calls.create_table(3, None, "")
    assert created.retry and len(created.request.request_id) == 36  # type: ignore[attr-defined]
    assert not calls.end_game("t-1").retry and not calls.leave_table("t-1").retry
    assert (created.service, created.method) == ("lobby", "CreateTable")
    act = calls.act("g-1", shikoku_sdk.PASS, "c-1", shikoku_sdk.Choices(), False)
    assert act.request.command_id == "c-1"  # type: ignore[attr-defined]


def event(version: int, kind: str = "Passed") -> game_pb2.WatchGameResponse:
    return game_pb2.WatchGameResponse(event=game_pb2.GameEvent(version=version, type=kind))


def test_a_watch_resumes_after_the_last_version_and_skips_what_it_saw() -> None:
    watch = Resumption("g-1", 3, include_state=True, heartbeat_seconds=2, until_end=True)
    assert watch.request().from_version == 3 and watch.connections == 1
    assert watch.silence_limit == 5.0
    assert watch.receive(game_pb2.WatchGameResponse()) is None  # a heartbeat
    update = watch.receive(event(3))
    assert update is not None and update.state is None and not watch.last(update)
    assert watch.receive(event(3)) is None  # seen already (a repeat after reconnecting)
    assert watch.request().from_version == 4 and watch.connections == 2
    assert watch.reconnect_after(error(grpc.StatusCode.UNAVAILABLE)) == 0.0
    assert watch.reconnect_after(error(grpc.StatusCode.UNAVAILABLE)) == 0.2
    ended = watch.receive(event(4, "GameEnded"))
    assert ended is not None and watch.last(ended)
    assert watch.over_already(game_pb2.GameState(version=4))
    assert not watch.over_already(game_pb2.GameState(version=5))


def test_a_decision_asks_for_the_routes_and_is_made_again_from_the_same_draws() -> None:
    run = game_pb2.LegalAction(
        seat=1, run_routes=game_pb2.RunRoutesOption(corporation="AR", trains=["2"])
    )
    passing = game_pb2.LegalAction(seat=1, pass_turn=game_pb2.Pass())
    listing = game_pb2.ListLegalActionsResponse(actions=[run, passing])
    seed = next(s for s in range(100) if random.Random(s).random() >= 0.25)  # not the pass
    player = RandomPlayer("g-1", {1: shikoku_sdk.Client("127.0.0.1:1")}, seed)
    reads = player.reads()
    before = player.rng.getstate()
    assert player.attempt(listing, reads) == Read(ROUTES, "AR")
    assert player.rng.getstate() == before  # the draws are made again, the same
    solution = routes_pb2.RouteSolution(routes=[routes_pb2.TrainRoute(train="2", hexes=["K4"])])
    reads.learn(Read(ROUTES, "AR"), solution)
    decided = player.attempt(listing, reads)
    assert isinstance(decided, tuple)
    seat, command = decided
    assert seat == 1 and list(command.run_routes.routes[0].hexes) == ["K4"]
    assert player.rng.getstate() != before
    assert player.attempt(game_pb2.ListLegalActionsResponse(), reads) is None  # nothing to do
