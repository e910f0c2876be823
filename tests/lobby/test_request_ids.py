"""Request ids make the lobby's creating calls safe to retry (real Redis)."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from kernel.rejection import Kind, Rejected
from services.lobby.shell.credentials import new_credential, new_id
from services.lobby.shell.request_ids import RequestIds
from shikoku.v1 import lobby_pb2


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


async def test_a_request_done_again_makes_the_same_ids_and_credentials(
    redis_client: redis.asyncio.Redis,
) -> None:
    """Inside a call sent with a request id, ids and credentials come from the request: doing
    it again (its answer lost, say the process died before storing it) makes the same ones, so
    the handler finds the table or seat it made the first time. Nothing is locked meanwhile."""
    ids = RequestIds(redis_client, secret=b"the deployment's secret")
    made: list[tuple[str, str]] = []

    async def make() -> lobby_pb2.CreateTableResponse:
        made.append((new_id("t-"), new_credential("t-x")))
        return lobby_pb2.CreateTableResponse(host_token=made[-1][1])

    async def ask(request_id: str, caller: str = "") -> lobby_pb2.CreateTableResponse:
        request = create(request_id=request_id)
        return await ids.once("CreateTable", request, caller, lobby_pb2.CreateTableResponse, make)

    first = await ask("r-1")
    await redis_client.delete("lobby:request:{CreateTable:r-1}")  # the answer was never kept
    assert await ask("r-1") == first and made[0] == made[1]
    await ask("r-2")
    assert made[2] != made[0]  # another request, other ids
    await ask("r-3", caller="someone~else")
    assert made[3] not in made[:3]
    # Concurrent copies of one request all get an answer (the handlers make them one table).
    copies = await asyncio.gather(*(ask("r-4") for _ in range(5)))
    assert len({copy.host_token for copy in copies}) == 1
    done_again = made[4:]  # each copy that did not find the answer kept did the call again
    assert done_again and all(copy == done_again[0] for copy in done_again)
