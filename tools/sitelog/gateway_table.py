"""A table behind the gateway: the importer as a real client of the public API, through the
SDK (so it waits as a rate limit tells it to, retries transient failures with the same command
ids, and is refused exactly as any client is)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from google.protobuf import json_format

from kernel.reasons import REASON_CODES
from kernel.rejection import Kind, Rejected, reason_code
from shikoku.v1 import lobby_pb2
from shikoku_sdk import Client
from shikoku_sdk.errors import ShikokuError
from tools.sitelog.export_format import SiteGame
from tools.sitelog.replay import Caused
from tools.sitelog.translate import Submit

T = TypeVar("T")


def _refused(call: Callable[[], T]) -> T:
    """`call()`, with the server's refusal as the Rejected the replay reports."""
    try:
        return call()
    except ShikokuError as error:
        if error.reason not in REASON_CODES:
            raise  # not a refusal of the rules (the server unreachable, say): the replay stops
        kind = Kind.__members__.get(error.code.name, Kind.UNAVAILABLE)
        raise Rejected(reason_code(error.reason), error.message, kind, error.metadata) from None


class GatewayTable:
    """Creates a table with the site game's players in its seat order, and starts it."""

    def __init__(self, game: SiteGame, client: Client) -> None:
        options = lobby_pb2.TableOptions(
            beginner_game=game.beginner_game,
            fixed_seat_order=True,
            trust_submitted_revenue=game.stores_revenue,
            rules_profile=game.rules_profile,
        )
        created = _refused(
            lambda: client.create_table(len(game.players), options, f"import {game.id}")
        )
        self.table_id = created.table.table_id
        self._host = client.with_credential(created.host_token)
        self._seats: dict[int, Client] = {}
        for seat, player in enumerate(game.players, start=1):
            joined = _refused(partial(client.join_table, self.table_id, player.name, seat))
            self._seats[seat] = client.with_credential(joined.seat_token)
        self.game_id = _refused(lambda: self._host.start_table(self.table_id)).game_id
        self._reader = self._seats[1]

    def view(self) -> dict[str, Any]:
        return json_format.MessageToDict(_refused(lambda: self._reader.state(self.game_id)).state)

    def acting_seats(self) -> list[int]:
        return list(_refused(lambda: self._reader.state(self.game_id)).acting_seats)

    def submit(self, seat: int, step: Submit) -> list[Caused]:
        done = _refused(lambda: self._seats[seat].act(self.game_id, step.command))
        return [(event.type, json_format.MessageToDict(event.payload)) for event in done.events]

    def end_game(self) -> None:
        _refused(lambda: self._host.end_game(self.table_id))
