"""The quickstart over asyncio (`shikoku_sdk.aio`): a table created and found in the listing,
then a whole game of random players at a table of three, watched as it plays.

    python examples/async_quickstart.py 127.0.0.1:50051   # the API key: $SHIKOKU_API_KEY
"""

import asyncio
import sys

from shikoku_sdk import aio, game_result


async def main(address: str) -> None:
    async with aio.Client(address) as client:
        created = await client.create_table(3)
        listed = [table.table_id async for table in client.list_tables()]
        print("listed:", created.table.table_id in listed)
        table = await aio.seat_table(client, 3)  # a new table, every seat ours, started
        player = asyncio.create_task(aio.RandomPlayer(table.game_id, table.seats, 1).play())
        events = [update.event.type async for update in client.watch(table.game_id)]
        print("actions:", await player, "events:", len(events), "last:", events[-1])
        print(game_result(await client.state(table.game_id)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
