"""What each call of the SDK's clients sends, shared by `Client` and `shikoku_sdk.aio.Client`:
the service and method, the request (with the request or command id that makes a retry safe)
and whether it is retried. The clients only perform them, over grpc or grpc.aio."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from google.protobuf.message import Message

from shikoku.v1 import game_pb2, lobby_pb2, routes_pb2, title_pb2
from shikoku_sdk.commands import Choices, command_with
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.retries import new_id

Response = TypeVar("Response")
Route = game_pb2.RouteRun | routes_pb2.TrainRoute


@dataclass(frozen=True)
class Call(Generic[Response]):
    """One unary call: `method` of the client's stub `service` ("lobby", "games", "routes",
    "titles") with `request`, answered by a `Response`; with `retry`, sent again (the same
    request) on transient errors."""

    service: str
    method: str
    request: Message
    retry: bool = False


# -- players and hosts ------------------------------------------------------------------------


def register_player(
    display_name: str, role: lobby_pb2.Role.ValueType
) -> Call[lobby_pb2.RegisterPlayerResponse]:
    """RegisterPlayer with a fresh request id."""
    request = lobby_pb2.RegisterPlayerRequest(
        display_name=display_name, role=role, request_id=new_id()
    )
    return Call("lobby", "RegisterPlayer", request, retry=True)


def revoke_credential() -> Call[lobby_pb2.RevokeCredentialResponse]:
    """RevokeCredential (not retried)."""
    return Call("lobby", "RevokeCredential", lobby_pb2.RevokeCredentialRequest())


# -- tables -----------------------------------------------------------------------------------


def create_table(
    seat_count: int, options: lobby_pb2.TableOptions | None, display_name: str
) -> Call[lobby_pb2.CreateTableResponse]:
    """CreateTable with a fresh request id."""
    request = lobby_pb2.CreateTableRequest(
        seat_count=seat_count, options=options, display_name=display_name, request_id=new_id()
    )
    return Call("lobby", "CreateTable", request, retry=True)


def join_table(table_id: str, player_name: str, seat: int) -> Call[lobby_pb2.JoinTableResponse]:
    """JoinTable with a fresh request id."""
    request = lobby_pb2.JoinTableRequest(
        table_id=table_id, player_name=player_name, seat=seat, request_id=new_id()
    )
    return Call("lobby", "JoinTable", request, retry=True)


def leave_table(table_id: str) -> Call[lobby_pb2.Table]:
    """LeaveTable (not retried)."""
    return Call("lobby", "LeaveTable", lobby_pb2.LeaveTableRequest(table_id=table_id))


def set_ready(table_id: str, ready: bool) -> Call[lobby_pb2.Table]:
    """SetReady (retried: setting the same flag twice is setting it once)."""
    request = lobby_pb2.SetReadyRequest(table_id=table_id, ready=ready)
    return Call("lobby", "SetReady", request, retry=True)


def start_table(table_id: str, retry: bool) -> Call[lobby_pb2.StartTableResponse]:
    """StartTable: tried once, then, if that failure is worth retrying, with `retry` (a
    refusal of the retried one may mean the first started the table: `started_elsewhere`)."""
    return Call("lobby", "StartTable", lobby_pb2.StartTableRequest(table_id=table_id), retry)


def started_elsewhere(error: ShikokuError) -> bool:
    """Whether a retried StartTable's refusal says an earlier attempt, whose answer was lost,
    started the table: then the table's game is the answer."""
    return error.reason == "TABLE_STARTED"


def started(table: lobby_pb2.Table) -> lobby_pb2.StartTableResponse:
    """The answer StartTable would have given for a table it started."""
    return lobby_pb2.StartTableResponse(table=table, game_id=table.game_id)


def end_game(table_id: str) -> Call[lobby_pb2.Table]:
    """EndGame (not retried)."""
    return Call("lobby", "EndGame", lobby_pb2.EndGameRequest(table_id=table_id))


def abandon_table(table_id: str) -> Call[lobby_pb2.Table]:
    """AbandonTable (not retried)."""
    return Call("lobby", "AbandonTable", lobby_pb2.AbandonTableRequest(table_id=table_id))


def replace_seat(table_id: str, seat: int, player_id: str) -> Call[lobby_pb2.JoinTableResponse]:
    """ReplaceSeat with a fresh request id."""
    request = lobby_pb2.ReplaceSeatRequest(
        table_id=table_id, seat=seat, player_id=player_id, request_id=new_id()
    )
    return Call("lobby", "ReplaceSeat", request, retry=True)


def get_table(table_id: str) -> Call[lobby_pb2.Table]:
    """GetTable."""
    return Call("lobby", "GetTable", lobby_pb2.GetTableRequest(table_id=table_id), retry=True)


def list_tables(
    status: lobby_pb2.TableStatus.ValueType, tournament_id: str, page_size: int, token: str
) -> Call[lobby_pb2.ListTablesResponse]:
    """ListTables: the page after `token` ("" for the first); the answer's `next_page_token`
    is the next one's, "" after the last."""
    request = lobby_pb2.ListTablesRequest(
        page_size=page_size, page_token=token, status=status, tournament_id=tournament_id
    )
    return Call("lobby", "ListTables", request, retry=True)


# -- tournaments ------------------------------------------------------------------------------


def create_tournament(
    name: str,
    player_ids: Sequence[str],
    table_size: int,
    first_round: lobby_pb2.SeatingMethod.ValueType,
    seed_order: Sequence[str],
    table_options: lobby_pb2.TableOptions | None,
    rounds: int,
) -> Call[lobby_pb2.Tournament]:
    """CreateTournament with a fresh request id."""
    request = lobby_pb2.CreateTournamentRequest(
        name=name,
        player_ids=player_ids,
        table_size=table_size,
        first_round=first_round,
        seed_order=seed_order,
        table_options=table_options,
        request_id=new_id(),
        rounds=rounds,
    )
    return Call("lobby", "CreateTournament", request, retry=True)


def start_round(tournament_id: str) -> Call[lobby_pb2.Tournament]:
    """StartRound with a fresh request id."""
    request = lobby_pb2.StartRoundRequest(tournament_id=tournament_id, request_id=new_id())
    return Call("lobby", "StartRound", request, retry=True)


def get_tournament(tournament_id: str) -> Call[lobby_pb2.Tournament]:
    """GetTournament."""
    request = lobby_pb2.GetTournamentRequest(tournament_id=tournament_id)
    return Call("lobby", "GetTournament", request, retry=True)


def export_standings(
    tournament_id: str, format: lobby_pb2.StandingsFormat.ValueType
) -> Call[lobby_pb2.ExportStandingsResponse]:
    """ExportStandings."""
    request = lobby_pb2.ExportStandingsRequest(tournament_id=tournament_id, format=format)
    return Call("lobby", "ExportStandings", request, retry=True)


def watch_tournament(
    tournament_id: str, heartbeat_seconds: int
) -> lobby_pb2.WatchTournamentRequest:
    """WatchTournament's request (the same for every reconnection: the stream starts with the
    tournament, so nothing is lost)."""
    return lobby_pb2.WatchTournamentRequest(
        tournament_id=tournament_id, heartbeat_seconds=heartbeat_seconds
    )


# -- notifications ----------------------------------------------------------------------------


def set_notification_target(
    url: str, format: lobby_pb2.NotificationFormat.ValueType
) -> Call[lobby_pb2.NotificationTarget]:
    """SetNotificationTarget."""
    request = lobby_pb2.SetNotificationTargetRequest(url=url, format=format)
    return Call("lobby", "SetNotificationTarget", request, retry=True)


def notification_health(tournament_id: str) -> Call[lobby_pb2.GetNotificationHealthResponse]:
    """GetNotificationHealth."""
    request = lobby_pb2.GetNotificationHealthRequest(tournament_id=tournament_id)
    return Call("lobby", "GetNotificationHealth", request, retry=True)


# -- games ------------------------------------------------------------------------------------


def state(game_id: str, version: int) -> Call[game_pb2.GameState]:
    """GetState."""
    request = game_pb2.GetStateRequest(game_id=game_id, version=version)
    return Call("games", "GetState", request, retry=True)


def legal_actions(game_id: str) -> Call[game_pb2.ListLegalActionsResponse]:
    """ListLegalActions."""
    request = game_pb2.ListLegalActionsRequest(game_id=game_id)
    return Call("games", "ListLegalActions", request, retry=True)


def routes_needed(
    action: game_pb2.Command | game_pb2.LegalAction, routes: Sequence[Route] | None
) -> str:
    """The corporation whose best routes `act` must ask for first ("" for none): a run_routes
    option taken without routes runs the best ones."""
    if not isinstance(action, game_pb2.LegalAction) or routes is not None:
        return ""
    return str(action.run_routes.corporation) if action.HasField("run_routes") else ""


def act(
    game_id: str,
    action: game_pb2.Command | game_pb2.LegalAction,
    command_id: str | None,
    choices: Choices,
    include_legal_actions: bool,
) -> Call[game_pb2.SubmitCommandResponse]:
    """SubmitCommand of `action` (a Command, or a LegalAction taken with `choices`), with
    `command_id` or a fresh one for every attempt. Raises ValueError for choices given with
    a Command, or outside what the LegalAction allows, before anything is sent."""
    if isinstance(action, game_pb2.LegalAction):
        command = command_with(action, choices)
    elif choices.given():
        raise ValueError("choices go with a LegalAction, not with a Command")
    else:
        command = action
    request = game_pb2.SubmitCommandRequest(
        game_id=game_id,
        command=command,
        command_id=command_id or new_id(),
        include_legal_actions=include_legal_actions,
    )
    return Call("games", "SubmitCommand", request, retry=True)


def best_routes(game_id: str, corporation: str) -> Call[routes_pb2.RouteSolution]:
    """RoutesService.Optimize at the game's latest version."""
    request = routes_pb2.OptimizeRequest(game_id=game_id, corporation=corporation)
    return Call("routes", "Optimize", request, retry=True)


def title(name: str) -> Call[title_pb2.Title]:
    """TitleService.GetTitle."""
    return Call("titles", "GetTitle", title_pb2.GetTitleRequest(title=name), retry=True)
