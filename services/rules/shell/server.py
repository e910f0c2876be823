"""The rules service process: the only writer of game events."""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import grpc
from redis.asyncio import Redis

from infra.config import connect_redis, service_channel
from infra.deployment_token import RequiresDeploymentToken
from infra.eventstore import EventStore, StreamNote
from infra.grpc_server import Context, serve
from infra.observability import observe_process
from infra.settings import from_environment
from kernel.rejection import Kind, Rejected, quoted
from services.projections.game_summaries import change_note
from services.routes import wire as routes_wire
from services.routes.engine.graph import TrackGraph
from services.routes.engine.validation import Evaluation, SubmittedRoute
from services.rules import wire as rules_wire
from services.rules.board.title import DEFAULT_PROFILE
from services.rules.domain import route_pricing
from services.rules.domain.commands import Command, CreateGame, EndGame, RunRoutes
from services.rules.domain.decide import legal_actions
from services.rules.domain.events import SeatedPlayer
from services.rules.domain.state import GameState
from services.rules.domain.view import state_document
from services.rules.shell import metrics
from services.rules.shell.paging import page_of
from services.rules.shell.repository import Executed, GameRepository, Loaded
from services.rules.shell.settings import RulesSettings
from services.rules.shell.snapshots import SnapshotStore
from services.rules.shell.summaries import SummaryProjector
from services.rules.shell.titles import TitleServicer
from shikoku.internal.v1 import routes_pb2, routes_pb2_grpc, rules_pb2, rules_pb2_grpc
from shikoku.v1 import game_pb2, title_pb2, title_pb2_grpc
from shikoku.v1 import routes_pb2 as public_routes_pb2

ROUTE_CHECK_SECONDS = 10.0
MAX_COMMAND_ID = 64


class RulesServicer(rules_pb2_grpc.RulesServiceServicer):
    def __init__(
        self,
        games: GameRepository,
        routes: routes_pb2_grpc.RouteEngineAsyncStub,
        redis: Redis,
    ) -> None:
        self._games = games
        self._routes = routes
        self._redis = redis

    async def _prepare(self, state: GameState, command: Command) -> Command:
        """Routes are checked, and their revenue computed, by the routes service before
        deciding (rulebook 8.5); the events then record the revenue."""
        if not isinstance(command, RunRoutes):
            return command
        return await route_pricing.price_routes(state, command, self._evaluate)

    async def _evaluate(self, graph: TrackGraph, routes: Sequence[SubmittedRoute]) -> Evaluation:
        """The routes service's evaluation of `routes` on `graph`."""
        request = routes_pb2.EvaluateRequest(
            graph=routes_wire.graph_to_proto(graph), routes=routes_wire.submitted_to_proto(routes)
        )
        try:
            answer = await self._routes.Evaluate(request, timeout=ROUTE_CHECK_SECONDS)
        except grpc.aio.AioRpcError as error:
            raise Rejected(
                "ROUTES_UNAVAILABLE",
                f"the routes service could not check the routes: {error.details()}",
                Kind.UNAVAILABLE,
            ) from error
        return routes_wire.evaluation_from_proto(answer)

    async def Timeline(
        self, request: rules_pb2.TimelineRequest, context: Context
    ) -> rules_pb2.TimelineResponse:
        moments = await self._games.timeline(request.game_id)
        return rules_pb2.TimelineResponse(
            moments=[
                rules_pb2.Moment(
                    version=m.version,
                    at_ms=m.at_ms,
                    actor=m.actor or 0,
                    acting_after=m.acting_after,
                )
                for m in moments
            ]
        )

    async def CorporationGraph(
        self, request: rules_pb2.CorporationGraphRequest, context: Context
    ) -> routes_pb2.TrackGraph:
        loaded = await self._games.load(request.game_id)
        try:
            loaded.state.corporation(request.corporation)
        except KeyError:
            raise Rejected(
                "UNKNOWN_CORPORATION",
                f"there is no corporation {quoted(request.corporation)!r}",
                Kind.INVALID_ARGUMENT,
                {"field": "corporation", "corporation": quoted(request.corporation)},
            ) from None
        graph = route_pricing.corporation_graph(loaded.state, request.corporation)
        return routes_wire.graph_to_proto(graph)

    async def CheckRoutes(
        self, request: public_routes_pb2.CheckRoutesRequest, context: Context
    ) -> public_routes_pb2.RouteCheck:
        """The routes priced as a RunRoutes with them would be (`_prepare`), nothing decided."""
        loaded = await self._games.load(request.game_id)
        drawn = RunRoutes(seat=0, routes=rules_wire.route_submissions(request.routes))
        priced = await route_pricing.price_routes(loaded.state, drawn, self._evaluate)
        runs = priced.priced or ()
        return public_routes_pb2.RouteCheck(
            revenue=sum(run.revenue for run in runs),
            routes=[
                public_routes_pb2.TrainRoute(train=run.train, hexes=run.hexes, revenue=run.revenue)
                for run in runs
            ],
        )

    async def CreateGame(
        self, request: rules_pb2.CreateGameRequest, context: Context
    ) -> rules_pb2.CreateGameResponse:
        command = CreateGame(
            players=tuple(SeatedPlayer(seat=p.seat, name=p.name) for p in request.players),
            seed=secrets.randbits(63),
            beginner_game=request.beginner_game,
            fixed_seat_order=request.fixed_seat_order,
            trust_submitted_revenue=request.trust_submitted_revenue,
            undo_allowed=request.undo_allowed,
            rules_profile=request.rules_profile or DEFAULT_PROFILE,
        )
        try:
            executed = await self._games.execute(request.game_id, command)
            return rules_pb2.CreateGameResponse(version=executed.events[-1].version)
        except Rejected as rejection:
            if rejection.reason != "GAME_EXISTS":
                raise
            loaded = await self._games.load(request.game_id)
            return rules_pb2.CreateGameResponse(version=loaded.version)

    async def Submit(
        self, request: rules_pb2.SubmitRequest, context: Context
    ) -> game_pb2.SubmitCommandResponse:
        if len(request.command_id) > MAX_COMMAND_ID:
            raise Rejected(
                "INVALID_COMMAND_ID",
                f"a command id has at most {MAX_COMMAND_ID} characters",
                Kind.INVALID_ARGUMENT,
                {"field": "command_id"},
            )
        command = rules_wire.command_from_proto(request.seat, request.command)
        # Without the client's id, one of ours: a write whose reply Redis lost and the
        # client library retried is then recognised instead of applied twice.
        command_id = request.command_id or f"auto-{uuid.uuid4()}"
        executed = await self._games.execute(request.game_id, command, self._prepare, command_id)
        answer = _applied(request.game_id, executed)
        if request.include_legal_actions:
            after = executed.after or await self._games.load(request.game_id)
            answer.legal_actions.CopyFrom(_listing(after, 0, ""))
        return answer

    async def EndGame(
        self, request: rules_pb2.EndGameRequest, context: Context
    ) -> game_pb2.SubmitCommandResponse:
        return _applied(request.game_id, await self._games.execute(request.game_id, EndGame()))

    async def GetState(
        self, request: game_pb2.GetStateRequest, context: Context
    ) -> game_pb2.GameState:
        if request.version < 0:
            raise Rejected(
                "INVALID_VERSION",
                "version must be >= 0",
                Kind.INVALID_ARGUMENT,
                {"field": "version"},
            )
        loaded = await self._games.load(request.game_id, request.version or None)
        return game_pb2.GameState(
            game_id=request.game_id,
            version=loaded.version,
            acting_seats=loaded.state.acting_seats,
            state=rules_wire.struct(state_document(loaded.state)),
        )

    async def ListLegalActions(
        self, request: game_pb2.ListLegalActionsRequest, context: Context
    ) -> game_pb2.ListLegalActionsResponse:
        loaded = await self._games.load(request.game_id)
        return _listing(loaded, request.page_size, request.page_token)


def _listing(loaded: Loaded, page_size: int, page_token: str) -> game_pb2.ListLegalActionsResponse:
    """The page of the legal actions at `loaded` that `page_size` and `page_token` ask for."""
    actions, next_page_token = page_of(
        legal_actions(loaded.state), loaded.version, page_size, page_token
    )
    return game_pb2.ListLegalActionsResponse(
        version=loaded.version,
        actions=[rules_wire.legal_action_to_proto(a) for a in actions],
        next_page_token=next_page_token,
    )


def _applied(game_id: str, executed: Executed) -> game_pb2.SubmitCommandResponse:
    """The answer to an accepted command: the events it caused and the version after them."""
    return game_pb2.SubmitCommandResponse(
        version=executed.events[-1].version,
        events=[rules_wire.event_to_proto(game_id, event) for event in executed.events],
    )


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules service composed from its settings: its servicers and its summary projector
    (run one in each rules process: `projector.run`)."""

    games: GameRepository
    servicer: RulesServicer
    projector: SummaryProjector

    def register(self, server: grpc.aio.Server) -> Iterable[str]:
        rules_pb2_grpc.add_RulesServiceServicer_to_server(self.servicer, server)
        # The public TitleService is answered here, from the data the rules play by; the
        # gateway forwards it like the game reads.
        title_pb2_grpc.add_TitleServiceServicer_to_server(TitleServicer(), server)
        return [
            rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name,
            title_pb2.DESCRIPTOR.services_by_name["TitleService"].full_name,
        ]


def build_rules(
    settings: RulesSettings,
    redis: Redis,
    routes: routes_pb2_grpc.RouteEngineAsyncStub,
    consumer: str,
) -> Rules:
    """The rules service on `redis`, checking routes with `routes`; `consumer` names this
    process in the summary projector's group."""
    active = metrics.ActiveGames()

    def note(game_id: str) -> StreamNote:
        return change_note(game_id, settings.summary_shards)

    events = EventStore(redis, "game", settings.replication.policy)
    games = GameRepository(events, SnapshotStore(redis), active.played, settings.cached_games, note)
    metrics.watch(
        active, lambda: games.cached_games, lambda: games.cached_timelines, settings.cached_games
    )
    projector = SummaryProjector(redis, games, consumer, shards=settings.summary_shards)
    return Rules(games, RulesServicer(games, routes, redis), projector)


async def main() -> None:
    settings = from_environment(RulesSettings, RulesSettings.NAME)
    observe_process(settings.NAME, settings.process.observability)
    redis = await connect_redis(settings.NAME, settings.redis.url)
    routes_channel = service_channel(settings.process.addresses.routes, settings.process.token)
    rules = build_rules(
        settings,
        redis,
        routes_pb2_grpc.RouteEngineStub(routes_channel),
        f"rules-{socket.gethostname()}-{os.getpid()}",
    )
    stopping = asyncio.Event()
    projecting = asyncio.create_task(rules.projector.run(stopping))

    async def stop() -> None:
        stopping.set()
        await projecting
        await routes_channel.close(None)
        await redis.aclose()

    await serve(
        settings.NAME,
        settings.listen_address,
        rules.register,
        on_stop=stop,
        observability=settings.process.observability,
        admissions=[RequiresDeploymentToken(settings.process.token)],
    )


if __name__ == "__main__":
    asyncio.run(main())
