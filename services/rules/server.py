"""The rules service process: the only writer of game events."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterable

import grpc
from redis.asyncio import Redis

from services.rules import codec
from services.rules.domain.commands import Command, CreateGame, EndGame, RunRoutes
from services.rules.domain.decide import legal_actions
from services.rules.domain.events import SeatedPlayer
from services.rules.domain.state import GameState
from services.rules.domain.view import state_document
from services.rules.repository import GameRepository
from shikoku.config import Addresses, redis_url
from shikoku.eventstore import EventStore
from shikoku.grpc_errors import abort
from shikoku.grpc_server import Context, serve
from shikoku.internal.v1 import rules_pb2, rules_pb2_grpc
from shikoku.rejection import Kind, Rejected
from shikoku.v1 import game_pb2


class RulesServicer(rules_pb2_grpc.RulesServiceServicer):
    def __init__(self, games: GameRepository) -> None:
        self._games = games

    async def _prepare(self, state: GameState, command: Command) -> Command:
        """Routes are checked, and their revenue computed, before deciding (rulebook 8.5)."""
        if isinstance(command, RunRoutes):
            raise Rejected(
                "ROUTE_CHECK_UNAVAILABLE",
                "routes cannot be checked yet: the board model is not wired in",
                Kind.UNIMPLEMENTED,
            )
        return command

    async def CreateGame(
        self, request: rules_pb2.CreateGameRequest, context: Context
    ) -> rules_pb2.CreateGameResponse:
        command = CreateGame(
            players=tuple(SeatedPlayer(seat=p.seat, name=p.name) for p in request.players),
            seed=secrets.randbits(63),
            beginner_game=request.beginner_game,
            fixed_seat_order=request.fixed_seat_order,
        )
        try:
            stored = await self._games.execute(request.game_id, command)
            return rules_pb2.CreateGameResponse(version=stored[-1].version)
        except Rejected as rejection:
            if rejection.reason == "GAME_EXISTS":
                loaded = await self._games.load(request.game_id)
                return rules_pb2.CreateGameResponse(version=loaded.version)
            await abort(context, rejection)
            raise

    async def Submit(
        self, request: rules_pb2.SubmitRequest, context: Context
    ) -> game_pb2.SubmitCommandResponse:
        try:
            command = codec.command_from_proto(request.seat, request.command)
            stored = await self._games.execute(request.game_id, command, self._prepare)
        except Rejected as rejection:
            await abort(context, rejection)
            raise
        return game_pb2.SubmitCommandResponse(
            version=stored[-1].version,
            events=[codec.event_to_proto(request.game_id, event) for event in stored],
        )

    async def EndGame(
        self, request: rules_pb2.EndGameRequest, context: Context
    ) -> game_pb2.SubmitCommandResponse:
        try:
            stored = await self._games.execute(request.game_id, EndGame())
        except Rejected as rejection:
            await abort(context, rejection)
            raise
        return game_pb2.SubmitCommandResponse(
            version=stored[-1].version,
            events=[codec.event_to_proto(request.game_id, event) for event in stored],
        )

    async def GetState(
        self, request: game_pb2.GetStateRequest, context: Context
    ) -> game_pb2.GameState:
        try:
            if request.version < 0:
                raise Rejected("INVALID_VERSION", "version must be >= 0", Kind.INVALID_ARGUMENT)
            loaded = await self._games.load(request.game_id, request.version or None)
        except Rejected as rejection:
            await abort(context, rejection)
            raise
        return game_pb2.GameState(
            game_id=request.game_id,
            version=loaded.version,
            acting_seats=loaded.state.acting_seats,
            state=codec.struct(state_document(loaded.state)),
        )

    async def ListLegalActions(
        self, request: game_pb2.ListLegalActionsRequest, context: Context
    ) -> game_pb2.ListLegalActionsResponse:
        try:
            loaded = await self._games.load(request.game_id)
        except Rejected as rejection:
            await abort(context, rejection)
            raise
        return game_pb2.ListLegalActionsResponse(
            version=loaded.version,
            actions=[codec.legal_action_to_proto(a) for a in legal_actions(loaded.state)],
        )


async def main() -> None:
    redis = Redis.from_url(redis_url())
    servicer = RulesServicer(GameRepository(EventStore(redis, "game")))

    def register(server: grpc.aio.Server) -> Iterable[str]:
        rules_pb2_grpc.add_RulesServiceServicer_to_server(servicer, server)
        return [rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name]

    await serve("rules", Addresses.from_env().rules, register, on_stop=redis.aclose)


if __name__ == "__main__":
    asyncio.run(main())
