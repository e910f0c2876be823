"""The walking skeleton through the gateway: lobby, game creation, the first auction commands,
the event stream, state, legal actions and rejections, against real processes and Redis."""

from __future__ import annotations

import threading
import time
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from shikoku.v1 import game_pb2, lobby_pb2
from shikoku_sdk import Client as SdkClient
from shikoku_sdk import RandomPlayer
from tests.e2e.api import (
    PASS,
    Client,
    System,
    auth,
    document,
    expect_error,
    started_table,
)

pytestmark = pytest.mark.e2e


def test_gateway_answers_health_and_reflection(system: System) -> None:
    with system.channel() as channel:
        health = health_pb2_grpc.HealthStub(channel)
        assert health.Check(health_pb2.HealthCheckRequest()).status == (
            health_pb2.HealthCheckResponse.SERVING
        )
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        (response,) = list(reflection.ServerReflectionInfo(iter([request])))
        names = {service.name for service in response.list_services_response.service}
        assert {
            "shikoku.v1.LobbyService",
            "shikoku.v1.GameService",
            "shikoku.v1.RoutesService",
        } <= names


def test_the_slice(client: Client) -> None:
    game_id, tokens, host = started_table(client)

    received: list[game_pb2.GameEvent] = []
    got_all = threading.Event()

    def watch() -> None:
        stream = client.game.StreamEvents(
            game_pb2.StreamEventsRequest(game_id=game_id, from_version=1)
        )
        for event in stream:
            received.append(event)
            if event.type == "BidPlaced":
                got_all.set()
                stream.cancel()
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()

    state = client.game.GetState(game_pb2.GetStateRequest(game_id=game_id))
    assert state.version == 4
    state_document = document(state.state)
    assert state_document["bank"] == 7000 - 3 * 420
    assert [p["cash"] for p in state_document["players"]] == [420, 420, 420]
    assert [o["company"] for o in state_document["round"]["offer"]] == [
        "TR",
        "MF",
        "ER",
        "SMR",
        "DR",
        "SIR",
    ]
    first, second, third = (int(p["seat"]) for p in state_document["players"])
    assert list(state.acting_seats) == [first]
    token_of = {seat: tokens[seat - 1] for seat in (1, 2, 3)}

    legal = client.game.ListLegalActions(game_pb2.ListLegalActionsRequest(game_id=game_id))
    kinds = [a.WhichOneof("action") for a in legal.actions]
    assert kinds == ["buy_private"] + ["place_bid"] * 5 + ["pass_turn"]
    assert {a.seat for a in legal.actions} == {first}
    assert legal.actions[0].buy_private.price == 20
    assert legal.actions[1].place_bid.min_price == 35

    def submit(seat: int, command: game_pb2.Command) -> game_pb2.SubmitCommandResponse:
        request = game_pb2.SubmitCommandRequest(game_id=game_id, command=command)
        return client.game.SubmitCommand(request, metadata=auth(token_of[seat]))

    bought = submit(first, game_pb2.Command(buy_private=game_pb2.BuyPrivate(company="TR")))
    assert [e.type for e in bought.events] == ["PrivateBought"]
    assert bought.version == 5

    length = client.stream_length(game_id)
    bad_bid = game_pb2.Command(place_bid=game_pb2.PlaceBid(company="ER", price=47))
    rejections = [
        (
            lambda: submit(first, PASS),
            grpc.StatusCode.FAILED_PRECONDITION,
            "NOT_YOUR_TURN",
        ),
        (
            lambda: submit(second, bad_bid),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BID_NOT_MULTIPLE_OF_5",
        ),
        (
            lambda: submit(
                second, game_pb2.Command(place_bid=game_pb2.PlaceBid(company="ER", price=-5))
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_PRICE",
        ),
        (
            lambda: submit(second, game_pb2.Command()),
            grpc.StatusCode.INVALID_ARGUMENT,
            "MISSING_ACTION",
        ),
        (
            lambda: submit(
                second, game_pb2.Command(place_bid=game_pb2.PlaceBid(company="ER", price=500))
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "INSUFFICIENT_CASH",
        ),
        (
            lambda: client.game.SubmitCommand(
                game_pb2.SubmitCommandRequest(game_id=game_id, command=PASS),
                metadata=auth(host),
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_A_SEAT",
        ),
        (
            lambda: client.game.SubmitCommand(
                game_pb2.SubmitCommandRequest(game_id=game_id, command=PASS),
                metadata=auth("t-nope~forged"),
            ),
            grpc.StatusCode.UNAUTHENTICATED,
            "INVALID_CREDENTIAL",
        ),
        (
            lambda: client.game.SubmitCommand(
                game_pb2.SubmitCommandRequest(game_id=game_id, command=PASS)
            ),
            grpc.StatusCode.UNAUTHENTICATED,
            "MISSING_CREDENTIAL",
        ),
    ]
    for call, code, reason in rejections:
        expect_error(call, code, reason)
        assert client.stream_length(game_id) == length, reason

    passed = submit(second, PASS)
    assert [e.type for e in passed.events] == ["Passed"]
    bid = submit(third, game_pb2.Command(place_bid=game_pb2.PlaceBid(company="ER", price=45)))
    assert [e.type for e in bid.events] == ["BidPlaced"]
    assert document(bid.events[0].payload)["price"] == 45

    assert got_all.wait(10), [e.type for e in received]
    assert [e.version for e in received] == list(range(1, 8))
    assert [e.type for e in received] == [
        "GameCreated",
        "PlayerOrderDrawn",
        "StartingCapitalDealt",
        "PrivateAuctionStarted",
        "PrivateBought",
        "Passed",
        "BidPlaced",
    ]
    state = client.game.GetState(game_pb2.GetStateRequest(game_id=game_id))
    assert state.version == 7
    assert list(state.acting_seats) == [first]
    players = {int(p["seat"]): p for p in document(state.state)["players"]}
    assert players[first]["privates"] == ["TR"]
    assert players[first]["cash"] == 400
    earlier = client.game.GetState(game_pb2.GetStateRequest(game_id=game_id, version=4))
    assert earlier.version == 4 and list(earlier.acting_seats) == [first]


def test_unknown_table_and_game_are_not_found(client: Client) -> None:
    expect_error(
        lambda: client.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id="t-missing", player_name="x")
        ),
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
    )
    expect_error(
        lambda: client.game.GetState(game_pb2.GetStateRequest(game_id="t-missing")),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )
    expect_error(
        lambda: client.game.ListLegalActions(game_pb2.ListLegalActionsRequest(game_id="t-missing")),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )
    expect_error(
        lambda: next(
            iter(client.game.StreamEvents(game_pb2.StreamEventsRequest(game_id="t-missing")))
        ),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )


def test_lobby_rejections(client: Client) -> None:
    expect_error(
        lambda: client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=7)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_SEAT_COUNT",
    )
    created = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=2))
    table_id = created.table.table_id
    first = client.lobby.JoinTable(
        lobby_pb2.JoinTableRequest(table_id=table_id, player_name="a", seat=2)
    )
    assert first.seat == 2
    expect_error(
        lambda: client.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=table_id, player_name="b", seat=2)
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SEAT_TAKEN",
    )
    expect_error(
        lambda: client.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(created.host_token)
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TOO_FEW_PLAYERS",
    )
    client.lobby.JoinTable(lobby_pb2.JoinTableRequest(table_id=table_id, player_name="b"))
    expect_error(
        lambda: client.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=table_id, player_name="c")
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TABLE_FULL",
    )
    expect_error(
        lambda: client.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(first.seat_token)
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_HOST",
    )
    left = client.lobby.LeaveTable(
        lobby_pb2.LeaveTableRequest(table_id=table_id), metadata=auth(first.seat_token)
    )
    assert not left.seats[1].taken


def test_auction_to_stock_round_through_the_gateway(client: Client) -> None:
    game_id, tokens, host = started_table(client)

    def acting() -> int:
        state = client.game.GetState(game_pb2.GetStateRequest(game_id=game_id))
        (seat,) = state.acting_seats
        return seat

    def submit(command: game_pb2.Command) -> game_pb2.SubmitCommandResponse:
        request = game_pb2.SubmitCommandRequest(game_id=game_id, command=command)
        return client.game.SubmitCommand(request, metadata=auth(tokens[acting() - 1]))

    for company in ["TR", "MF", "ER", "SMR", "DR", "SIR"]:
        submit(game_pb2.Command(buy_private=game_pb2.BuyPrivate(company=company)))
    legal = client.game.ListLegalActions(game_pb2.ListLegalActionsRequest(game_id=game_id))
    starts = [a.start_corporation for a in legal.actions if a.HasField("start_corporation")]
    assert {s.corporation for s in starts} == {"AR", "IR", "SR", "KO", "TR", "KU", "UR"}
    start = game_pb2.StartCorporation(corporation="KO", par=70)
    response = submit(game_pb2.Command(start_corporation=start))
    assert [e.type for e in response.events] == ["CorporationStarted", "TurnEnded"]
    buy = game_pb2.BuyShare(corporation="KO", source=game_pb2.SHARE_SOURCE_INITIAL_OFFERING)
    length = client.stream_length(game_id)
    expect_error(
        lambda: submit(game_pb2.Command(buy_share=game_pb2.BuyShare(corporation="KO"))),
        grpc.StatusCode.INVALID_ARGUMENT,
        "MISSING_SOURCE",
    )
    expect_error(
        lambda: submit(
            game_pb2.Command(sell_shares=game_pb2.SellShares(corporation="KO", count=1))
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NO_SALES_IN_FIRST_STOCK_ROUND",
    )
    assert client.stream_length(game_id) == length
    assert [e.type for e in submit(game_pb2.Command(buy_share=buy)).events] == [
        "ShareBought",
        "TurnEnded",
    ]
    state = document(client.game.GetState(game_pb2.GetStateRequest(game_id=game_id)).state)
    ko = next(c for c in state["corporations"] if c["id"] == "KO")
    assert (ko["initial_offering"], ko["share_price"]) == (7, 70)

    expect_error(
        lambda: client.lobby.EndGame(
            lobby_pb2.EndGameRequest(table_id=game_id), metadata=auth(tokens[0])
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_HOST",
    )
    client.lobby.EndGame(lobby_pb2.EndGameRequest(table_id=game_id), metadata=auth(host))
    state = document(client.game.GetState(game_pb2.GetStateRequest(game_id=game_id)).state)
    assert state["result"]["reason"] == "ended"
    assert len(state["result"]["net_worths"]) == 3
    late_pass = game_pb2.SubmitCommandRequest(game_id=game_id, command=PASS)
    expect_error(
        lambda: client.game.SubmitCommand(late_pass, metadata=auth(tokens[0])),
        grpc.StatusCode.FAILED_PRECONDITION,
        "GAME_OVER",
    )


def test_undo_through_the_gateway(client: Client) -> None:
    options = lobby_pb2.TableOptions(undo_allowed=True, fixed_seat_order=True)
    created = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=2, options=options))
    table_id = created.table.table_id
    tokens = [
        client.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(table_id=table_id, player_name=f"p{n}")
        ).seat_token
        for n in (1, 2)
    ]
    game_id = client.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(created.host_token)
    ).game_id

    def submit(seat: int, command: game_pb2.Command) -> game_pb2.SubmitCommandResponse:
        request = game_pb2.SubmitCommandRequest(game_id=game_id, command=command)
        return client.game.SubmitCommand(request, metadata=auth(tokens[seat - 1]))

    def state() -> dict[str, Any]:
        return document(client.game.GetState(game_pb2.GetStateRequest(game_id=game_id)).state)

    before = state()
    submit(1, game_pb2.Command(buy_private=game_pb2.BuyPrivate(company="TR")))
    assert state()["players"][0]["privates"] == ["TR"]
    undo = game_pb2.Command(undo=game_pb2.Undo())
    expect_error(lambda: submit(2, undo), grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_ACTION")
    undone = submit(1, undo)
    assert [e.type for e in undone.events] == ["Undone"]
    assert state() == before
    length = client.stream_length(game_id)
    assert length == undone.version  # the log only grew
    submit(1, PASS)
    assert state()["players"][0]["privates"] == []


def test_the_rules_profile_travels_from_the_table_to_the_game(client: Client) -> None:
    options = lobby_pb2.TableOptions(rules_profile="18xx.games")
    created = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=2, options=options))
    assert created.table.options.rules_profile == "18xx.games"
    table_id = created.table.table_id
    for n in (1, 2):
        client.lobby.JoinTable(lobby_pb2.JoinTableRequest(table_id=table_id, player_name=f"p{n}"))
    game_id = client.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table_id), metadata=auth(created.host_token)
    ).game_id
    state = document(client.game.GetState(game_pb2.GetStateRequest(game_id=game_id)).state)
    assert state["rules_profile"] == "18xx.games"
    plain = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=2)).table
    assert plain.options.rules_profile == "rulebook"
    unknown = lobby_pb2.TableOptions(rules_profile="house")
    expect_error(
        lambda: client.lobby.CreateTable(
            lobby_pb2.CreateTableRequest(seat_count=2, options=unknown)
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "UNKNOWN_RULES_PROFILE",
    )


def test_tables_are_listed_with_their_games_summaries(client: Client) -> None:
    game_id, _tokens, host = started_table(client)
    client.lobby.EndGame(lobby_pb2.EndGameRequest(table_id=game_id), metadata=auth(host))
    open_table = client.lobby.CreateTable(lobby_pb2.CreateTableRequest(seat_count=4)).table

    def listed(
        status: lobby_pb2.TableStatus.ValueType = lobby_pb2.TABLE_STATUS_UNSPECIFIED,
    ) -> list[lobby_pb2.Table]:
        tables, token = [], ""
        while True:
            page = client.lobby.ListTables(
                lobby_pb2.ListTablesRequest(page_size=2, page_token=token, status=status)
            )
            tables += list(page.tables)
            if not page.next_page_token:
                return tables
            token = page.next_page_token

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the summary follows the game's stream
        finished = [t for t in listed(lobby_pb2.TABLE_STATUS_FINISHED) if t.table_id == game_id]
        if finished:
            break
        time.sleep(0.2)
    assert finished, "the ended game never showed as finished"
    (table,) = finished
    assert table.game.finished and table.game.end_reason == "ended"
    assert sorted(table.game.net_worths) == [1, 2, 3]
    everything = listed()
    assert [t.table_id for t in everything].index(open_table.table_id) < [
        t.table_id for t in everything
    ].index(game_id)  # newest first
    assert open_table.table_id in {t.table_id for t in listed(lobby_pb2.TABLE_STATUS_OPEN)}
    expect_error(
        lambda: client.lobby.ListTables(lobby_pb2.ListTablesRequest(page_size=500)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_PAGE",
    )


def test_random_players_finish_a_game_through_the_gateway(system: System) -> None:
    client = Client(system)
    try:
        game_id, tokens, _host = started_table(client, seats=4)
        with SdkClient(system.gateway, api_key=system.api_key) as sdk:
            seats = {seat: sdk.with_credential(tokens[seat - 1]) for seat in (1, 2, 3, 4)}
            taken = RandomPlayer(game_id, seats, seed=4).play()
        state = document(client.game.GetState(game_pb2.GetStateRequest(game_id=game_id)).state)
        assert state["result"]["reason"] in {"bank", "bankrupt"}
        assert taken > 100
    finally:
        client.channel.close()
        client.redis.close()


def test_legal_actions_come_in_pages_of_one_version(client: Client) -> None:
    game_id, tokens, _host = started_table(client)
    seat_of = auth(tokens[0])
    whole = client.game.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id=game_id), metadata=seat_of
    )
    assert len(whole.actions) > 2 and not whole.next_page_token
    paged: list[game_pb2.LegalAction] = []
    token = ""
    while True:
        page = client.game.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id=game_id, page_size=2, page_token=token),
            metadata=seat_of,
        )
        assert len(page.actions) <= 2 and page.version == whole.version
        paged += page.actions
        token = page.next_page_token
        if not token:
            break
    assert paged == list(whole.actions)

    first = client.game.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id=game_id, page_size=1), metadata=seat_of
    )
    acting = whole.actions[0].seat
    client.game.SubmitCommand(
        game_pb2.SubmitCommandRequest(game_id=game_id, command=PASS),
        metadata=auth(tokens[acting - 1]),
    )
    expect_error(
        lambda: client.game.ListLegalActions(
            game_pb2.ListLegalActionsRequest(
                game_id=game_id, page_size=1, page_token=first.next_page_token
            ),
            metadata=seat_of,
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "STALE_PAGE_TOKEN",
    )
