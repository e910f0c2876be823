"""Many independent awaits, some at a time: a round's tables are created and started so, each
step of each table being one a retry recognises, so their order does not matter."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar, cast

Item = TypeVar("Item")
Result = TypeVar("Result")

#: Enough to keep Redis and the rules service busy without a thousand calls in flight at once.
AT_ONCE = 32


async def each_at_once(
    items: Sequence[Item], work: Callable[[Item], Awaitable[Result]], limit: int = AT_ONCE
) -> list[Result]:
    """`work(item)` for every item, at most `limit` at a time; the results in items' order.
    The first failure is raised once all that were started have ended."""
    room = asyncio.Semaphore(limit)

    async def one(item: Item) -> Result:
        async with room:
            return await work(item)

    ended = await asyncio.gather(*(one(item) for item in items), return_exceptions=True)
    for outcome in ended:
        if isinstance(outcome, BaseException):
            raise outcome
    return cast(list[Result], ended)
