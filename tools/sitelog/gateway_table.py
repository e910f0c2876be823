"""A table behind the gateway: the importer as a real client of the public API."""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import json_format

from infra.grpc_errors import from_rpc_error
from shikoku.v1 import game_pb2, game_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from tools.sitelog.export_format import SiteGame
from tools.sitelog.translate import Submit

CALL_SECONDS = 30.0


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


class GatewayTable:
    """Creates a table with the site game's players in its seat order, and starts it."""

    def __init__(self, game: SiteGame, channel: grpc.Channel) -> None:
        self._lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
        self._game = game_pb2_grpc.GameServiceStub(channel)
        options = lobby_pb2.TableOptions(
            beginner_game=game.beginner_game,
            fixed_seat_order=True,
            trust_submitted_revenue=game.stores_revenue,
        )
        created = self._call(
            self._lobby.CreateTable,
            lobby_pb2.CreateTableRequest(
                seat_count=len(game.players), options=options, display_name=f"import {game.id}"
            ),
        )
        self.table_id = created.table.table_id
        self._host = created.host_token
        self._seats: dict[int, str] = {}
        for seat, player in enumerate(game.players, start=1):
            joined = self._call(
                self._lobby.JoinTable,
                lobby_pb2.JoinTableRequest(
                    table_id=self.table_id, player_name=player.name, seat=seat
                ),
            )
            self._seats[seat] = joined.seat_token
        started = self._call(
            self._lobby.StartTable,
            lobby_pb2.StartTableRequest(table_id=self.table_id),
            _auth(self._host),
        )
        self.game_id = started.game_id

    @staticmethod
    def _call(method: Any, request: Any, metadata: Any = None) -> Any:
        try:
            return method(request, metadata=metadata, timeout=CALL_SECONDS)
        except grpc.RpcError as error:
            rejection = from_rpc_error(error)
            if rejection is not None:
                raise rejection from None
            raise

    def view(self) -> dict[str, Any]:
        state = self._call(self._game.GetState, game_pb2.GetStateRequest(game_id=self.game_id))
        return json_format.MessageToDict(state.state)

    def submit(self, seat: int, step: Submit) -> None:
        request = game_pb2.SubmitCommandRequest(game_id=self.game_id, command=step.command)
        self._call(self._game.SubmitCommand, request, _auth(self._seats[seat]))

    def can_pass(self) -> bool:
        request = game_pb2.ListLegalActionsRequest(game_id=self.game_id)
        actions = self._call(self._game.ListLegalActions, request).actions
        return any(action.HasField("pass_turn") for action in actions)

    def end_game(self) -> None:
        request = lobby_pb2.EndGameRequest(table_id=self.table_id)
        self._call(self._lobby.EndGame, request, _auth(self._host))
