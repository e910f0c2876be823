"""`shikoku_sdk.aio` against the real system, with the scenarios of the sync client's tests
(tests/e2e/test_sdk.py): whole games played by its players (the same games as the sync
players', seed for seed), a watch that resumes after dropped connections, errors, safe
retries, paging, tournaments (tests/sdk/test_shared_logic.py checks that every method of
`Client` is there, awaited)."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio
import pytest
from google.rpc import code_pb2, error_details_pb2, status_pb2

import shikoku_sdk
from shikoku_sdk import PASS, ShikokuError, aio, game_pb2, game_result, lobby_pb2
from shikoku_sdk.heuristic import HeuristicPlayer
from shikoku_sdk.random_player import command_for
from tests.e2e.api import System

pytestmark = pytest.mark.e2e


def client_of(system: System, *interceptors: Any) -> aio.Client:
    return aio.Client(system.gateway, api_key=system.api_key, interceptors=interceptors)


@pytest.mark.parametrize("players", [3, 4, 6])
async def test_the_async_random_player_plays_the_sync_ones_game(
    system: System, players: int
) -> None:
    """Seed for seed, at tables in seat order, the async player sends the sync one's commands."""
    fixed = lobby_pb2.TableOptions(fixed_seat_order=True)
    async with client_of(system) as client:
        table = await aio.seat_table(client, players, fixed)
        assert await aio.RandomPlayer(table.game_id, table.seats, players).play() > 100
        final = await client.state(table.game_id)
        events = [u.event for u in [update async for update in client.watch(table.game_id)]]
    with shikoku_sdk.Client(system.gateway, api_key=system.api_key) as sync:
        twin = shikoku_sdk.seat_table(sync, players, fixed)
        shikoku_sdk.RandomPlayer(twin.game_id, twin.seats, players).play()
        twin_final = sync.state(twin.game_id)
    result = game_result(final)
    assert not final.acting_seats and result is not None
    assert result.reason in {"bank", "bankrupt"}
    assert result == game_result(twin_final) and final.version == twin_final.version
    assert len(events) == final.version and events[-1].type == "GameEnded"


async def test_the_async_heuristic_player_plays_the_sync_ones_game(system: System) -> None:
    fixed = lobby_pb2.TableOptions(fixed_seat_order=True)
    async with client_of(system) as client:
        table = await aio.seat_table(client, 3, fixed)
        await aio.HeuristicPlayer(table.game_id, table.seats, 2).play()
        final = await client.state(table.game_id)
    with shikoku_sdk.Client(system.gateway, api_key=system.api_key) as sync:
        twin = shikoku_sdk.seat_table(sync, 3, fixed)
        HeuristicPlayer(twin.game_id, twin.seats, 2).play()
        twin_final = sync.state(twin.game_id)
    assert game_result(final) is not None and not final.acting_seats
    assert game_result(final) == game_result(twin_final)
    assert final.version == twin_final.version


async def test_a_watch_that_loses_its_connection_resumes_without_gaps_or_repeats(
    system: System,
) -> None:
    async with client_of(system) as client:
        table = await aio.seat_table(client, 3)
        game_id = table.game_id
        player = asyncio.create_task(aio.RandomPlayer(game_id, table.seats, 1).play())
        rng = random.Random(2)
        updates: list[aio.Update] = []
        async with client.watch(game_id, include_state=True, heartbeat_seconds=1) as watch:
            async with asyncio.timeout(180):  # should the game never end
                hang_up_after = rng.randint(1, 30)
                async for update in watch:
                    updates.append(update)
                    hang_up_after -= 1
                    if hang_up_after == 0:
                        watch.disconnect()  # the connection drops; the watch reconnects
                        hang_up_after = rng.randint(1, 30)
        await asyncio.wait_for(player, 60)
        latest = await client.state(game_id)
        assert watch.connections > 5
        assert [u.event.version for u in updates] == list(range(1, latest.version + 1))
        assert updates[-1].event.type == "GameEnded"
        assert updates[-1].state == latest
        stated = [u for u in updates if u.state is not None]
        assert len(stated) > 20  # live: one per action
        for update in random.Random(3).sample(stated, 3):
            assert update.state == await client.state(game_id, update.event.version)
        after_the_end = client.watch(game_id, from_version=latest.version + 1)
        assert [update async for update in after_the_end] == []


async def test_a_dropped_watch_resumes_and_close_ends_it(system: System) -> None:
    """Without until_end a watch goes on; after a dropped connection the next event comes over
    a new one; closing the watch ends the iteration."""
    async with client_of(system) as client:
        table = await aio.seat_table(client, 2)
        watch = client.watch(table.game_id, heartbeat_seconds=1, until_end=False)
        latest = (await client.state(table.game_id)).version
        seen = [update async for update in _first(watch, latest)]
        watch.disconnect()
        seat, command = await first_command(client, table.game_id)
        answer = await table.seats[seat].act(table.game_id, command)
        seen += [update async for update in _first(watch, answer.version - latest)]
        await watch.close()
        assert [u.event.version for u in seen] == list(range(1, answer.version + 1))
        assert watch.connections == 2
        with pytest.raises(StopAsyncIteration):
            await anext(watch)


async def test_closing_a_watch_from_another_task_ends_its_iteration(system: System) -> None:
    async with client_of(system) as client:
        table = await aio.seat_table(client, 2)
        watch = client.watch(table.game_id, heartbeat_seconds=1, until_end=False)
        seen: list[aio.Update] = []

        async def follow() -> None:
            async for update in watch:
                seen.append(update)

        following = asyncio.create_task(follow())
        version = (await client.state(table.game_id)).version
        async with asyncio.timeout(10):
            while len(seen) < version:  # caught up; now waiting on a live stream
                await asyncio.sleep(0.05)
        await watch.close()
        await asyncio.wait_for(following, 5)  # ended, not cancelled
        assert [u.event.version for u in seen] == list(range(1, version + 1))


async def _first(watch: aio.Watch, count: int) -> AsyncIterator[aio.Update]:
    """The watch's next `count` updates."""
    for _ in range(count):
        yield await asyncio.wait_for(anext(watch), 10)


async def test_acting_out_of_turn_is_a_shikoku_error_and_writes_nothing(system: System) -> None:
    async with client_of(system) as client:
        table = await aio.seat_table(client, 3)
        game_id, seats = table.game_id, table.seats
        before = await client.state(game_id)
        idle = next(seat for seat in seats if seat not in before.acting_seats)
        with pytest.raises(ShikokuError) as raised:
            await seats[idle].act(game_id, PASS)
        assert raised.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert raised.value.reason == "NOT_YOUR_TURN"
        assert (await client.state(game_id)).version == before.version
        with pytest.raises(ShikokuError) as missing:
            await client.get_table("t-nope")
        assert (missing.value.code, missing.value.reason) == (
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )


def aio_error(code: grpc.StatusCode, details: list[Any]) -> grpc.aio.AioRpcError:
    """What a lost answer or a rate limit looks like to a grpc.aio client."""
    status = status_pb2.Status(code=getattr(code_pb2, code.name), message="injected")
    for detail in details:
        status.details.add().Pack(detail)
    trailing = grpc.aio.Metadata(("grpc-status-details-bin", status.SerializeToString()))
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailing, "injected", None)


class FirstCallFails(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[type-arg, unused-ignore]
    """Fails the first call of `method` with `error`: after sending it (its answer is lost)
    when `deliver`, else without sending it. Records the ids (`id_field`) sent."""

    def __init__(
        self,
        error: grpc.aio.AioRpcError,
        deliver: bool,
        method: str = "SubmitCommand",
        id_field: str = "command_id",
    ) -> None:
        self.error = error
        self.deliver = deliver
        self.method = f"/{method}"
        self.id_field = id_field
        self.sent: list[str] = []

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        name = details.method.decode() if isinstance(details.method, bytes) else details.method
        submit = name.endswith(self.method)
        if submit and not self.sent and not self.deliver:
            self.sent.append("")
            raise self.error
        call = await continuation(details, request)
        if submit:
            self.sent.append(getattr(request, self.id_field))
            if len(self.sent) == 1:
                await call  # stored by the server; the client never hears so
                raise self.error
        return call


class CountsCalls(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[type-arg, unused-ignore]
    """Counts the calls made, by method name."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        method = details.method.decode() if isinstance(details.method, bytes) else details.method
        name = method.rsplit("/", 1)[-1]
        self.calls[name] = self.calls.get(name, 0) + 1
        return await continuation(details, request)


async def first_command(client: aio.Client, game_id: str) -> tuple[int, game_pb2.Command]:
    action = (await client.legal_actions(game_id)).actions[0]
    return action.seat, command_for(action, random.Random(0), lambda _corporation: [])


async def test_a_retried_command_is_applied_once(system: System) -> None:
    lost = FirstCallFails(aio_error(grpc.StatusCode.UNAVAILABLE, []), deliver=True)
    async with client_of(system, lost) as client:
        table = await aio.seat_table(client, 3)
        game_id, seats = table.game_id, table.seats
        before = (await client.state(game_id)).version
        seat, command = await first_command(client, game_id)
        answer = await seats[seat].act(game_id, command)
        assert len(lost.sent) == 2 and lost.sent[0] == lost.sent[1]  # the same command id
        assert answer.version == before + len(answer.events)
        assert answer.version == (await client.state(game_id)).version
        again = await seats[seat].act(game_id, command, command_id=lost.sent[0])
        assert again == answer
        assert (await client.state(game_id)).version == answer.version


async def test_a_command_answers_with_the_legal_actions_after_it_when_asked(
    system: System,
) -> None:
    async with client_of(system) as client:
        table = await aio.seat_table(client, 3)
        game_id, seats = table.game_id, table.seats
        seat, command = await first_command(client, game_id)
        plain = await seats[seat].act(game_id, command)
        assert not plain.HasField("legal_actions")
        seat, command = await first_command(client, game_id)
        answer = await seats[seat].act(
            game_id, command, command_id=f"c-{uuid.uuid4()}", include_legal_actions=True
        )
        listed = await client.legal_actions(game_id)
        assert answer.legal_actions == listed and listed.actions
        assert answer.legal_actions.version == answer.version


async def test_the_async_players_take_one_call_a_step(system: System) -> None:
    counted = CountsCalls()
    async with client_of(system, counted) as client:
        table = await aio.seat_table(client, 3)
        counted.calls.clear()
        steps = await aio.RandomPlayer(table.game_id, table.seats, 7).play()
        calls = dict(counted.calls)
        assert (await client.state(table.game_id)).acting_seats == []
    assert calls["SubmitCommand"] == steps > 100
    assert calls["ListLegalActions"] == 1
    assert set(calls) <= {"SubmitCommand", "ListLegalActions", "Optimize"}


@pytest.mark.parametrize("method", ["CreateTable", "JoinTable"])
async def test_a_lobby_call_whose_answer_was_lost_is_retried_safely(
    system: System, method: str
) -> None:
    lost = FirstCallFails(
        aio_error(grpc.StatusCode.UNAVAILABLE, []), True, method, id_field="request_id"
    )
    async with client_of(system, lost) as client:
        created = await client.create_table(3)
        joined = await client.join_table(created.table.table_id, "Ada")
        assert len(lost.sent) == 2 and lost.sent[0] == lost.sent[1]  # the same request id
        table = await client.get_table(created.table.table_id)
        assert [seat.player_name for seat in table.seats if seat.player_name] == ["Ada"]
        assert joined.seat_token
        seat = client.with_credential(joined.seat_token)
        assert (await seat.set_ready(created.table.table_id)).seats[0].ready
        host = client.with_credential(created.host_token)
        assert (await host.get_table(created.table.table_id)).table_id == created.table.table_id


async def test_the_same_request_id_with_another_request_is_refused(system: System) -> None:
    """The stubs of the client, used directly, send the API key too."""
    request_id = str(uuid.uuid4())
    async with client_of(system) as client:

        async def create(seats: int) -> lobby_pb2.CreateTableResponse:
            request = lobby_pb2.CreateTableRequest(seat_count=seats, request_id=request_id)
            return await client.lobby.CreateTable(request)

        first = await create(3)
        assert await create(3) == first
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await create(4)
        assert ShikokuError.from_rpc_error(refused.value).reason == "REQUEST_ID_REUSED"


async def test_a_rate_limited_command_waits_as_told(system: System) -> None:
    retry = error_details_pb2.RetryInfo()
    retry.retry_delay.FromMilliseconds(300)
    limited = aio_error(grpc.StatusCode.RESOURCE_EXHAUSTED, [retry])
    async with client_of(system, FirstCallFails(limited, deliver=False)) as client:
        table = await aio.seat_table(client, 3)
        game_id, seats = table.game_id, table.seats
        before = (await client.state(game_id)).version
        seat, command = await first_command(client, game_id)
        started = time.monotonic()
        answer = await seats[seat].act(game_id, command)
        assert time.monotonic() - started >= 0.3
        assert answer.version == before + len(answer.events)


async def test_list_tables_pages_through_all_of_them(system: System) -> None:
    async with aio.Client(system.gateway, api_key=system.api_key) as client:
        mine = {(await client.create_table(2)).table.table_id for _ in range(5)}
        listed = [table.table_id async for table in client.list_tables(page_size=2)]
    assert len(listed) == len(set(listed))
    assert mine <= set(listed)


async def test_malformed_input_names_the_field_to_fix(system: System) -> None:
    async with client_of(system) as client:
        table = await aio.seat_table(client, 3)
        game_id, seats = table.game_id, table.seats
        seat = (await client.legal_actions(game_id)).actions[0].seat
        with pytest.raises(ShikokuError) as refused:
            await seats[seat].act(game_id, game_pb2.Command())
        assert refused.value.reason == "MISSING_ACTION"
        assert list(refused.value.field_violations) == ["command.action"]
        with pytest.raises(ValueError, match="LegalAction"):
            await seats[seat].act(game_id, PASS, price=5)  # checked before anything is sent


async def test_a_tournament_run_through_the_async_sdk(system: System) -> None:
    """A host and four players registered through the SDK; one round of one table played by
    the async random player with the players' own credentials, watched as it plays; the
    standings and their export."""
    async with client_of(system) as client:
        host = client.with_credential((await client.register_host("Director")).credential)
        entrants = {}
        for name in ("Ada", "Brunel", "Clara", "Dai"):
            registered = await client.register_player(name)
            entrants[registered.player_id] = client.with_credential(registered.credential)
        created = await host.create_tournament("Async cup", list(entrants), table_size=4)
        with pytest.raises(ShikokuError) as refused:
            await next(iter(entrants.values())).start_round(created.tournament_id)
        assert refused.value.reason == "NOT_HOST"
        watched = client.watch_tournament(created.tournament_id, heartbeat_seconds=1)
        first = await anext(watched)
        assert first.tournament.tournament_id == created.tournament_id
        (table,) = (await host.start_round(created.tournament_id)).rounds[0].tables
        seats = {seat: entrants[p] for seat, p in enumerate(table.player_ids, start=1)}
        assert await aio.RandomPlayer(table.table_id, seats, seed=5).play() > 50
        async with asyncio.timeout(20):  # the result is recorded, and the watch says so
            async for item in watched:
                if item.HasField("tournament") and item.tournament.rounds[0].finished:
                    break
        await watched.aclose()
        standings = await client.standings(created.tournament_id)
        result = game_result(await client.state(table.table_id))
        assert result is not None
        worth = {p: result.net_worths[seat] for seat, p in enumerate(table.player_ids, start=1)}
        assert {s.player_id: s.net_worth for s in standings} == worth
        assert [s.position for s in standings] == [1, 2, 3, 4]
        rows = (await client.export_standings(created.tournament_id)).splitlines()
        assert rows[0].startswith("position,player_id") and len(rows) == 5


async def test_seats_ready_up_and_the_host_ends_the_game(system: System) -> None:
    async with client_of(system) as client:
        created = await client.create_table(2, lobby_pb2.TableOptions(fixed_seat_order=True))
        table_id = created.table.table_id
        seats = {}
        for name in ("Ada", "Brunel"):
            joined = await client.join_table(table_id, name)
            seats[joined.seat] = client.with_credential(joined.seat_token)
        assert (await seats[1].set_ready(table_id)).status == lobby_pb2.TABLE_STATUS_OPEN
        assert (await seats[2].set_ready(table_id)).status == lobby_pb2.TABLE_STATUS_STARTED
        game_id = (await client.get_table(table_id)).game_id
        bid = next(
            a
            for a in (await client.legal_actions(game_id)).actions
            if a.WhichOneof("action") == "place_bid"
        )
        with pytest.raises(ValueError, match="outside"):
            await seats[bid.seat].act(game_id, bid, price=bid.place_bid.max_price + 5)
        answer = await seats[bid.seat].act(game_id, bid, price=bid.place_bid.min_price + 5)
        assert answer.events[0].payload["price"] == bid.place_bid.min_price + 5
        await client.with_credential(created.host_token).end_game(table_id)
        result = game_result(await client.state(game_id))
        assert result is not None and result.reason == "ended"


async def test_a_start_whose_answer_was_lost_returns_the_game_it_started(system: System) -> None:
    lost = FirstCallFails(
        aio_error(grpc.StatusCode.UNAVAILABLE, []), True, "StartTable", "table_id"
    )
    async with client_of(system, lost) as client:
        created = await client.create_table(2)
        table_id = created.table.table_id
        for name in ("Ada", "Brunel"):
            await client.join_table(table_id, name)
        started = await client.with_credential(created.host_token).start_table(table_id)
        assert lost.sent == [table_id, table_id]
        assert started.game_id == table_id
        assert started.table.status == lobby_pb2.TABLE_STATUS_STARTED


async def test_a_seated_tables_tokens_act_for_its_seats_from_another_client(
    system: System,
) -> None:
    async with client_of(system) as client:
        table = await aio.seat_table(client, 3)
        assert sorted(table.seat_tokens) == [1, 2, 3] == sorted(table.seats)
        assert table.host_token == table.host.credential
        action = (await client.legal_actions(table.game_id)).actions[0]
    token = table.seat_tokens[action.seat]
    with shikoku_sdk.Client(system.gateway, token, api_key=system.api_key) as other:
        answer = other.act(table.game_id, action)
        assert answer.version == other.state(table.game_id).version
