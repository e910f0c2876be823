"""The SDK's random player (`shikoku_sdk.random_player`) playing in this process, on the
domain's legal actions: for property tests, benchmarks, `shikoku selfplay` and filling seats.

There is one random player: its choices (which action, and the parameters within the ranges
the action gives) are the SDK's, made on the public API's messages, as a client's would be.
Only the routes are found here, by the routes solver in this process, as the routes service
would find them.
"""

from __future__ import annotations

import random

from services.routes.engine.graph import route_hexes
from services.routes.engine.solver import solve
from services.rules.domain import commands as cmd
from services.rules.domain.events import TrainRun
from services.rules.domain.legal import LegalAction, RunRoutesOption
from services.rules.domain.route_pricing import corporation_graph
from services.rules.domain.state import GameState
from services.rules.domain.view import state_document
from services.rules.shell.titles import title_to_proto
from services.rules.wire import command_from_proto, legal_action_to_proto
from shikoku.v1 import game_pb2
from shikoku_sdk import heuristic, random_player
from shikoku_sdk.heuristic_facts import TitleFacts


def choose(options: list[LegalAction], rng: random.Random) -> LegalAction:
    """The option the SDK's random player picks among `options`."""
    listed = [legal_action_to_proto(option) for option in options]
    picked = random_player.choose(listed, rng)
    return options[next(i for i, message in enumerate(listed) if message is picked)]


def command_for(option: LegalAction, rng: random.Random, state: GameState) -> cmd.PlayerCommand:
    """The command the SDK's random player makes of `option`; for running trains, the best
    routes (from the routes solver), already priced."""
    if isinstance(option, RunRoutesOption):
        return best_routes(state, option.corporation, option.seat)
    message = random_player.command_for(legal_action_to_proto(option), rng, _no_routes)
    command = command_from_proto(option.seat, message)
    if isinstance(command, cmd.Undo):
        raise TypeError(f"{option} gave {command}")
    return command


def _no_routes(corporation: str) -> list[game_pb2.RouteRun]:
    raise AssertionError(f"routes for {corporation} are found in this process")


def best_routes(state: GameState, corporation: str, seat: int) -> cmd.RunRoutes:
    """The corporation's optimal routes, already priced."""
    graph = corporation_graph(state, corporation)
    solution = solve(graph)
    runs = tuple(
        TrainRun(graph.trains[r.train].name, route_hexes(graph, r), r.revenue)
        for r in solution.routes
    )
    submissions = tuple(cmd.RouteSubmission(run.train, run.hexes) for run in runs)
    return cmd.RunRoutes(seat, submissions, priced=runs)


STRATEGIES = ("random", "heuristic")


def _facts() -> TitleFacts:
    global _TITLE_FACTS
    if _TITLE_FACTS is None:
        _TITLE_FACTS = TitleFacts.from_title(title_to_proto("1889"))
    return _TITLE_FACTS


_TITLE_FACTS: TitleFacts | None = None


def heuristic_command(
    state: GameState, options: list[LegalAction], rng: random.Random
) -> cmd.PlayerCommand:
    """The SDK's heuristic player's command among `options` (all of one seat), on the public
    messages: the state document, the options as LegalAction messages, the title's data and
    the in-process solver's best routes."""
    listed = [legal_action_to_proto(option) for option in options]
    seat = options[0].seat

    def routes(corporation: str) -> list[game_pb2.RouteRun]:
        found = best_routes(state, corporation, seat)
        return [game_pb2.RouteRun(train=r.train, hexes=list(r.hexes)) for r in found.priced or ()]

    message = heuristic.decide(state_document(state), listed, _facts(), rng, routes)
    command = command_from_proto(seat, message)
    if isinstance(command, cmd.Undo):
        raise TypeError(f"the heuristic gave {command}")
    if isinstance(command, cmd.RunRoutes):
        return best_routes(state, command_corporation(options), seat)
    return command


def command_corporation(options: list[LegalAction]) -> str:
    return next(o.corporation for o in options if isinstance(o, RunRoutesOption))


def strategy_command(
    strategy: str, state: GameState, options: list[LegalAction], rng: random.Random
) -> cmd.PlayerCommand:
    """The command the named strategy makes among `options` (all of the acting seat)."""
    if strategy == "heuristic":
        return heuristic_command(state, options, rng)
    if strategy == "random":
        return command_for(choose(options, rng), rng, state)
    raise ValueError(f"unknown strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
