"""The SDK over grpc.aio, for asyncio programs: the same calls, retries, errors, watches and
bots as `shikoku_sdk`, awaited.

    import asyncio
    from shikoku_sdk import aio

    async def main() -> None:
        async with aio.Client("127.0.0.1:50051", api_key=...) as client:
            created = await client.create_table(3)
            async for table in client.list_tables():
                print(table.table_id, table.status)
            seated = await aio.seat_table(client, 3)
            await aio.RandomPlayer(seated.game_id, seated.seats, seed=1).play()
            async for update in client.watch(seated.game_id):
                print(update.event.version, update.event.type)

    asyncio.run(main())

Create a `Client` inside the event loop that uses it.
"""

from shikoku_sdk.aio_channel import keyed_aio_channel
from shikoku_sdk.aio_client import Client
from shikoku_sdk.aio_players import HeuristicPlayer, RandomPlayer, SeatPlayer
from shikoku_sdk.aio_tables import SeatedTable, seat_table
from shikoku_sdk.aio_watch import Watch
from shikoku_sdk.watch import Update

__all__ = [
    "Client",
    "HeuristicPlayer",
    "RandomPlayer",
    "SeatPlayer",
    "SeatedTable",
    "Update",
    "Watch",
    "keyed_aio_channel",
    "seat_table",
]
