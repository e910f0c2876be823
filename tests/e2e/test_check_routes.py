"""RoutesService.CheckRoutes through the gateway: routes drawn for the operating corporation are
priced as RunRoutes would price them, and refused with the very refusal SubmitCommand gives
the same routes, without anything written."""

from __future__ import annotations

import random
from collections.abc import Iterator

import grpc
import pytest

from shikoku.v1 import game_pb2, routes_pb2
from shikoku_sdk.errors import ShikokuError
from tests.browser.conftest import WebSystem
from tests.browser.tables import Table, document
from tests.e2e.api import System

pytestmark = pytest.mark.e2e

BOT_ACTIONS_LIMIT = 1500


@pytest.fixture(scope="module")
def at_routes(system: System) -> Iterator[tuple[Table, str, routes_pb2.RouteSolution]]:
    """A game whose operating corporation is at its routes step with a route that earns:
    (the table, the corporation, its best routes)."""
    table = Table(WebSystem(system.gateway, system.web, system.redis_url, system.api_key))
    rng = random.Random(20261202)
    for _ in range(BOT_ACTIONS_LIMIT):
        round_ = document(table.state()).get("round") or {}
        if round_.get("type") == "operating_round" and round_.get("step") == "routes":
            best = table.best_routes(round_["operating"])
            if best.revenue > 0:
                yield table, round_["operating"], best
                table.channel.close()
                return
        table.bot_move(rng, set(table.tokens))
    pytest.fail(f"no corporation ran a route within {BOT_ACTIONS_LIMIT} random actions")


def check(table: Table, runs: list[game_pb2.RouteRun]) -> routes_pb2.RouteCheck:
    request = routes_pb2.CheckRoutesRequest(game_id=table.game_id, routes=runs)
    answer: routes_pb2.RouteCheck = table.routes.CheckRoutes(
        request, metadata=table.reader(), timeout=10
    )
    return answer


def runs_of(solution: routes_pb2.RouteSolution) -> list[game_pb2.RouteRun]:
    return [game_pb2.RouteRun(train=r.train, hexes=r.hexes) for r in solution.routes]


def test_the_best_routes_drawn_by_hand_earn_what_the_optimum_says(
    at_routes: tuple[Table, str, routes_pb2.RouteSolution],
) -> None:
    table, _, best = at_routes
    checked = check(table, runs_of(best))
    assert checked.revenue == best.revenue
    assert [(r.train, list(r.hexes), r.revenue) for r in checked.routes] == [
        (r.train, list(r.hexes), r.revenue) for r in best.routes
    ]


def test_a_broken_route_is_refused_as_run_routes_would_refuse_it_and_nothing_is_written(
    at_routes: tuple[Table, str, routes_pb2.RouteSolution],
) -> None:
    table, corporation, best = at_routes
    first = best.routes[0]
    # The route's first stop twice over: a centre visited again, or track used twice.
    broken = [game_pb2.RouteRun(train=first.train, hexes=[*first.hexes, first.hexes[-2]])]
    version = table.state().version
    with pytest.raises(grpc.RpcError) as checked:
        check(table, broken)
    president = int(
        next(c for c in document(table.state())["corporations"] if c["id"] == corporation)[
            "president"
        ]
    )
    command = game_pb2.Command(run_routes=game_pb2.RunRoutes(routes=broken))
    with pytest.raises(grpc.RpcError) as submitted:
        table.games.SubmitCommand(
            game_pb2.SubmitCommandRequest(game_id=table.game_id, command=command),
            metadata=table.metadata(table.tokens[president]),
            timeout=10,
        )
    check_error, submit_error = (ShikokuError.from_rpc_error(e.value) for e in (checked, submitted))
    assert check_error.reason.startswith("ROUTE_"), check_error
    assert (check_error.reason, check_error.metadata) == (
        submit_error.reason,
        submit_error.metadata,
    )
    assert checked.value.code() == submitted.value.code()
    assert table.state().version == version


def test_a_train_the_corporation_does_not_own_is_named(
    at_routes: tuple[Table, str, routes_pb2.RouteSolution],
) -> None:
    table, _, best = at_routes
    route = best.routes[0]
    with pytest.raises(grpc.RpcError) as raised:
        check(table, [game_pb2.RouteRun(train="9", hexes=route.hexes)])
    error = ShikokuError.from_rpc_error(raised.value)
    assert (error.reason, error.metadata.get("train")) == ("TRAIN_NOT_OWNED", "9")
