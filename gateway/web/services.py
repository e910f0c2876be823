"""The public API's services for Connect: every method passed on to the same method of the
gRPC gateway (`gateway.web.upstream`). One class per service of `shikoku.v1`, each the Protocol
its generated Connect stub (`shikoku/server/*_connect.py`) declares, so mypy holds them to the
protos: a method added there and not here fails `make lint`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from gateway.web.upstream import Context, stream, unary
from shikoku.v1 import (
    game_pb2,
    game_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
    routes_pb2,
    routes_pb2_grpc,
    title_pb2,
    title_pb2_grpc,
)


class LobbyServiceForwarder:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._lobby = lobby_pb2_grpc.LobbyServiceStub(channel)

    async def register_player(
        self, request: lobby_pb2.RegisterPlayerRequest, ctx: Context
    ) -> lobby_pb2.RegisterPlayerResponse:
        return await unary(self._lobby.RegisterPlayer, request, ctx)

    async def revoke_credential(
        self, request: lobby_pb2.RevokeCredentialRequest, ctx: Context
    ) -> lobby_pb2.RevokeCredentialResponse:
        return await unary(self._lobby.RevokeCredential, request, ctx)

    async def replace_seat(
        self, request: lobby_pb2.ReplaceSeatRequest, ctx: Context
    ) -> lobby_pb2.JoinTableResponse:
        return await unary(self._lobby.ReplaceSeat, request, ctx)

    async def create_tournament(
        self, request: lobby_pb2.CreateTournamentRequest, ctx: Context
    ) -> lobby_pb2.Tournament:
        return await unary(self._lobby.CreateTournament, request, ctx)

    async def start_round(
        self, request: lobby_pb2.StartRoundRequest, ctx: Context
    ) -> lobby_pb2.Tournament:
        return await unary(self._lobby.StartRound, request, ctx)

    async def get_tournament(
        self, request: lobby_pb2.GetTournamentRequest, ctx: Context
    ) -> lobby_pb2.Tournament:
        return await unary(self._lobby.GetTournament, request, ctx)

    async def export_standings(
        self, request: lobby_pb2.ExportStandingsRequest, ctx: Context
    ) -> lobby_pb2.ExportStandingsResponse:
        return await unary(self._lobby.ExportStandings, request, ctx)

    async def create_table(
        self, request: lobby_pb2.CreateTableRequest, ctx: Context
    ) -> lobby_pb2.CreateTableResponse:
        return await unary(self._lobby.CreateTable, request, ctx)

    async def get_table(self, request: lobby_pb2.GetTableRequest, ctx: Context) -> lobby_pb2.Table:
        return await unary(self._lobby.GetTable, request, ctx)

    async def list_tables(
        self, request: lobby_pb2.ListTablesRequest, ctx: Context
    ) -> lobby_pb2.ListTablesResponse:
        return await unary(self._lobby.ListTables, request, ctx)

    async def join_table(
        self, request: lobby_pb2.JoinTableRequest, ctx: Context
    ) -> lobby_pb2.JoinTableResponse:
        return await unary(self._lobby.JoinTable, request, ctx)

    async def leave_table(
        self, request: lobby_pb2.LeaveTableRequest, ctx: Context
    ) -> lobby_pb2.Table:
        return await unary(self._lobby.LeaveTable, request, ctx)

    async def set_ready(self, request: lobby_pb2.SetReadyRequest, ctx: Context) -> lobby_pb2.Table:
        return await unary(self._lobby.SetReady, request, ctx)

    async def abandon_table(
        self, request: lobby_pb2.AbandonTableRequest, ctx: Context
    ) -> lobby_pb2.Table:
        return await unary(self._lobby.AbandonTable, request, ctx)

    async def start_table(
        self, request: lobby_pb2.StartTableRequest, ctx: Context
    ) -> lobby_pb2.StartTableResponse:
        return await unary(self._lobby.StartTable, request, ctx)

    async def end_game(self, request: lobby_pb2.EndGameRequest, ctx: Context) -> lobby_pb2.Table:
        return await unary(self._lobby.EndGame, request, ctx)


class GameServiceForwarder:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._games = game_pb2_grpc.GameServiceStub(channel)

    async def submit_command(
        self, request: game_pb2.SubmitCommandRequest, ctx: Context
    ) -> game_pb2.SubmitCommandResponse:
        return await unary(self._games.SubmitCommand, request, ctx)

    async def get_state(
        self, request: game_pb2.GetStateRequest, ctx: Context
    ) -> game_pb2.GameState:
        return await unary(self._games.GetState, request, ctx)

    async def list_legal_actions(
        self, request: game_pb2.ListLegalActionsRequest, ctx: Context
    ) -> game_pb2.ListLegalActionsResponse:
        return await unary(self._games.ListLegalActions, request, ctx)

    def stream_events(
        self, request: game_pb2.StreamEventsRequest, ctx: Context
    ) -> AsyncIterator[game_pb2.GameEvent]:
        return stream(self._games.StreamEvents, request, ctx)

    def watch_game(
        self, request: game_pb2.WatchGameRequest, ctx: Context
    ) -> AsyncIterator[game_pb2.WatchGameResponse]:
        return stream(self._games.WatchGame, request, ctx)


class RoutesServiceForwarder:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._routes = routes_pb2_grpc.RoutesServiceStub(channel)

    async def optimize(
        self, request: routes_pb2.OptimizeRequest, ctx: Context
    ) -> routes_pb2.RouteSolution:
        return await unary(self._routes.Optimize, request, ctx)


class TitleServiceForwarder:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._titles = title_pb2_grpc.TitleServiceStub(channel)

    async def get_title(self, request: title_pb2.GetTitleRequest, ctx: Context) -> title_pb2.Title:
        return await unary(self._titles.GetTitle, request, ctx)
