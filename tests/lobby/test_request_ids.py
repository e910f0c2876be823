"""Request ids make the lobby's creating calls safe to retry (real Redis)."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from infra.rejection import Kind, Rejected
from services.lobby.shell.request_ids import RequestIds
from shikoku.v1 import lobby_pb2

pytestmark = pytest.mark.client


class Creator:
    """Creates a table per call: numbered, so a second creation shows."""

    def __init__(self, fail_first: bool = False, pause: float = 0.0) -> None:
        self.calls = 0
        self._fail_first = fail_first
        self._pause = pause

    async def __call__(self) -> lobby_pb2.CreateTableResponse:
        self.calls += 1
        await asyncio.sleep(self._pause)
        if self._fail_first and self.calls == 1:
            raise Rejected("INVALID_SEAT_COUNT", "no", Kind.INVALID_ARGUMENT)
        return lobby_pb2.CreateTableResponse(host_token=f"token {self.calls}")


def create(seats: int = 3, request_id: str = "r-1") -> lobby_pb2.CreateTableRequest:
    return lobby_pb2.CreateTableRequest(seat_count=seats, request_id=request_id)


async def once(
    ids: RequestIds, request: lobby_pb2.CreateTableRequest, creator: Creator, caller: str = ""
) -> lobby_pb2.CreateTableResponse:
    return await ids.once("CreateTable", request, caller, lobby_pb2.CreateTableResponse, creator)


async def reason(awaitable: object) -> str:
    with pytest.raises(Rejected) as refused:
        await awaitable  # type: ignore[misc]
    return refused.value.reason


async def test_a_retry_gets_the_first_answer_and_creates_nothing(
    redis_client: redis.asyncio.Redis,
) -> None:
    ids, creator, caller = RequestIds(redis_client), Creator(), "host~1"
    first = await once(ids, create(), creator, caller)
    again = await once(ids, create(), creator, caller)
    assert first == again and creator.calls == 1
    other = await once(ids, create(request_id="r-2"), creator, caller)
    assert other.host_token == "token 2"
    unnamed = [await once(ids, create(request_id=""), creator, caller) for _ in range(2)]
    assert unnamed[0] != unnamed[1]  # no id: every call creates


async def test_an_id_is_bound_to_its_request_and_its_caller(
    redis_client: redis.asyncio.Redis,
) -> None:
    ids, creator = RequestIds(redis_client), Creator()
    await once(ids, create(3), creator, "host~1")
    assert await reason(once(ids, create(4), creator, "host~1")) == "REQUEST_ID_REUSED"
    assert await reason(once(ids, create(3), creator, "thief~2")) == "REQUEST_ID_REUSED"
    assert creator.calls == 1
    too_long = create(request_id="x" * 65)
    assert await reason(once(ids, too_long, creator, "")) == "INVALID_REQUEST_ID"


async def test_a_refused_request_is_not_remembered(redis_client: redis.asyncio.Redis) -> None:
    ids, creator = RequestIds(redis_client), Creator(fail_first=True)
    assert await reason(once(ids, create(), creator, "")) == "INVALID_SEAT_COUNT"
    assert (await once(ids, create(), creator, "")).host_token == "token 2"


async def test_the_same_id_twice_at_once_creates_once(redis_client: redis.asyncio.Redis) -> None:
    ids, creator = RequestIds(redis_client), Creator(pause=0.2)
    results = await asyncio.gather(
        *(once(ids, create(), creator, "") for _ in range(5)), return_exceptions=True
    )
    assert creator.calls == 1
    answered = [r for r in results if isinstance(r, lobby_pb2.CreateTableResponse)]
    busy = [r for r in results if isinstance(r, Rejected)]
    assert len(answered) == 1 and all(r.reason == "REQUEST_IN_PROGRESS" for r in busy)
    assert all(r.kind == Kind.ABORTED for r in busy)  # clients retry ABORTED
    assert await once(ids, create(), creator, "") == answered[0]
