"""A small typed client for the Shikoku 1889 game server's public gRPC API.

    from shikoku_sdk import Client, seat_table

    with Client("127.0.0.1:50051", api_key=...) as client:  # default: $SHIKOKU_API_KEY
        table = seat_table(client, 3)  # a started table whose every seat we hold
        action = client.legal_actions(table.game_id).actions[0]
        table.seats[action.seat].act(table.game_id, action)  # to_command's defaults
        for update in client.watch(table.game_id, include_state=True):
            print(update.event.version, update.event.type)

`python -m shikoku_sdk.bot ADDRESS PLAYERS` plays a whole game of random players. Every refusal
is raised as a `ShikokuError` (`.code`, `.reason` a `Reason`, `.metadata`) of its reason's family
(`RuleError`, `AccessError`, ...). The protobuf message modules are
re-exported: `game_pb2`, `lobby_pb2`, `routes_pb2`. `shikoku_sdk.aio` is the same over grpc.aio
for asyncio programs (`async with shikoku_sdk.aio.Client(...) as client:`).
"""

from shikoku.v1 import game_pb2, lobby_pb2, routes_pb2
from shikoku_sdk import aio
from shikoku_sdk.client import Client
from shikoku_sdk.commands import PAYOUT, WITHHOLD, Choices, to_command
from shikoku_sdk.documents import GameResult, game_result, state_document
from shikoku_sdk.errors import (
    AccessError,
    LobbyError,
    RequestError,
    RuleError,
    ServiceError,
    ShikokuError,
    SpectatingError,
)
from shikoku_sdk.random_player import RandomPlayer
from shikoku_sdk.reasons import Family, Reason
from shikoku_sdk.tables import SeatedTable, seat_table
from shikoku_sdk.version import VERSION
from shikoku_sdk.watch import Update, Watch

__version__ = VERSION

# The command that passes (or ends a stock round turn).
PASS = game_pb2.Command(pass_turn=game_pb2.Pass())

__all__ = [
    "PASS",
    "PAYOUT",
    "WITHHOLD",
    "AccessError",
    "Choices",
    "Client",
    "Family",
    "GameResult",
    "LobbyError",
    "RandomPlayer",
    "Reason",
    "RequestError",
    "RuleError",
    "SeatedTable",
    "ServiceError",
    "ShikokuError",
    "SpectatingError",
    "Update",
    "Watch",
    "__version__",
    "aio",
    "game_pb2",
    "game_result",
    "lobby_pb2",
    "routes_pb2",
    "seat_table",
    "state_document",
    "to_command",
]
