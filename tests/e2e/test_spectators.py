"""Spectators through the gateway: tables closed to them, and tables shown N actions behind."""

from __future__ import annotations

import grpc
import pytest

from shikoku.v1 import game_pb2, lobby_pb2
from tests.e2e.api import PASS, Client, auth, expect_error, started_table

pytestmark = pytest.mark.e2e


def running_table(client: Client, options: lobby_pb2.TableOptions) -> tuple[str, list[str], str]:
    """A started 2-seat table with these options: (game id, seat tokens, host token)."""
    options.fixed_seat_order = True
    return started_table(client, 2, options)


def state_version(client: Client, game_id: str, token: str = "", version: int = 0) -> int:
    request = game_pb2.GetStateRequest(game_id=game_id, version=version)
    return client.game.GetState(request, metadata=auth(token) if token else ()).version


def streamed_versions(client: Client, game_id: str) -> list[int]:
    """What an anonymous spectator's stream delivers within two seconds."""
    stream = client.game.StreamEvents(
        game_pb2.StreamEventsRequest(game_id=game_id, from_version=1), timeout=2
    )
    versions: list[int] = []
    with pytest.raises(grpc.RpcError) as ended:
        versions.extend(event.version for event in stream)
    assert ended.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    return versions


def test_spectators_watch_one_action_behind(client: Client) -> None:
    game_id, tokens, _host = running_table(
        client, lobby_pb2.TableOptions(spectator_delay_actions=1)
    )
    set_up = state_version(client, game_id)
    assert set_up == client.stream_length(game_id)  # nothing is held back before any action

    def act(token: str) -> int:
        request = game_pb2.SubmitCommandRequest(game_id=game_id, command=PASS)
        return client.game.SubmitCommand(request, metadata=auth(token)).version

    after_first = act(tokens[0])
    assert state_version(client, game_id) == set_up
    assert state_version(client, game_id, tokens[1]) == after_first  # seats see it live
    after_second = act(tokens[1])
    assert state_version(client, game_id) == after_first
    assert streamed_versions(client, game_id) == list(range(1, after_first + 1))
    expect_error(
        lambda: state_version(client, game_id, version=after_second),
        grpc.StatusCode.PERMISSION_DENIED,
        "BEYOND_SPECTATOR_DELAY",
    )
    expect_error(
        lambda: client.game.ListLegalActions(game_pb2.ListLegalActionsRequest(game_id=game_id)),
        grpc.StatusCode.PERMISSION_DENIED,
        "BEYOND_SPECTATOR_DELAY",
    )
    assert state_version(client, game_id, version=after_first) == after_first


def test_a_table_closed_to_spectators(client: Client) -> None:
    game_id, tokens, host = running_table(client, lobby_pb2.TableOptions(closed_to_spectators=True))
    _other_game, other_tokens, _other_host = running_table(client, lobby_pb2.TableOptions())
    latest = client.stream_length(game_id)
    assert state_version(client, game_id, tokens[0]) == latest
    assert state_version(client, game_id, host) == latest
    for outsider in ("", other_tokens[0]):
        expect_error(
            lambda: state_version(client, game_id, outsider),  # noqa: B023 (called at once)
            grpc.StatusCode.PERMISSION_DENIED,
            "CLOSED_TO_SPECTATORS",
        )
    stream = game_pb2.StreamEventsRequest(game_id=game_id, from_version=1)
    expect_error(
        lambda: list(client.game.StreamEvents(stream, timeout=2)),
        grpc.StatusCode.PERMISSION_DENIED,
        "CLOSED_TO_SPECTATORS",
    )
    table = client.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=game_id))
    assert table.options.closed_to_spectators


def test_a_negative_spectator_delay_is_refused(client: Client) -> None:
    expect_error(
        lambda: client.lobby.CreateTable(
            lobby_pb2.CreateTableRequest(
                seat_count=2, options=lobby_pb2.TableOptions(spectator_delay_actions=-1)
            )
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_SPECTATOR_DELAY",
    )
