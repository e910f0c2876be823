"""A small typed client for the Shikoku 1889 game server's public gRPC API.

    from shikoku_sdk import Client, game_pb2

    with Client("127.0.0.1:50051", api_key=...) as client:  # default: $SHIKOKU_API_KEY
        table = client.create_table(3)
        ...
        seat = client.with_credential(seat_token)
        seat.act(game_id, game_pb2.Command(pass_turn=game_pb2.Pass()))
        for update in client.watch(game_id, include_state=True):
            print(update.event.version, update.event.type)

Every refusal is raised as `ShikokuError` (`.code`, `.reason`, `.metadata`). The protobuf
message modules are re-exported: `game_pb2`, `lobby_pb2`, `routes_pb2`.
"""

from shikoku.v1 import game_pb2, lobby_pb2, routes_pb2
from shikoku_sdk.client import Client, Update, Watch, state_document
from shikoku_sdk.errors import ShikokuError

PASS = game_pb2.Command(pass_turn=game_pb2.Pass())

__all__ = [
    "PASS",
    "Client",
    "ShikokuError",
    "Update",
    "Watch",
    "game_pb2",
    "lobby_pb2",
    "routes_pb2",
    "state_document",
]
