"""`shikoku import FILE`: replay an 18xx.games export (through the gateway, on the domain in this
process, or on a system of its own) and compare scores; `shikoku export GAME_ID`: a game of ours
in the 18xx.games export format."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format

from kernel.rejection import Rejected
from services.rules.domain.events import Event, event_from_payload
from shikoku.v1 import game_pb2, game_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from shikoku_sdk import Client
from shikoku_sdk.channel import keyed_channel
from tools.launchers import OWN_SYSTEM_NEEDS_A_CHECKOUT, launchers_missing
from tools.progress import Progress
from tools.sitelog.compare import StateLog
from tools.sitelog.export_format import ExportError, SiteGame, load
from tools.sitelog.exporter import Said, batches_from, export
from tools.sitelog.gateway_table import GatewayTable
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import Outcome, Table, replay, replay_viewed

CONNECT_SECONDS = 10
#: How long reading a table's chat to its end may take (5,000 messages and a heartbeat).
CHAT_SECONDS = 60
#: The seat of the host's messages, which the site's format has no entity for.
HOST_SEAT = 0


class ReplayOn(Enum):
    """Where `shikoku import` plays the game."""

    GATEWAY = "gateway"  # a running system's gateway, as any client
    IN_PROCESS = "in-process"  # the domain code in this process: no services, no Redis
    OWN_SYSTEM = "own-system"  # Redis and the services started for this command, on free ports


def import_game(
    path: Path,
    on: ReplayOn,
    gateway: str,
    as_json: bool,
    api_key: str | None = None,
    states: Path | None = None,
) -> int:
    """Exit status: 0 when the replay ends as the site's game did, 1 when it diverges, 2 when
    it cannot start."""
    try:
        game = load(path)
    except (OSError, ExportError) as error:
        print(f"shikoku import: {path}: {error}", file=sys.stderr)
        return 2
    if on is ReplayOn.IN_PROCESS:
        return replay_on(game, InProcessTable(game), as_json, states)
    if on is ReplayOn.OWN_SYSTEM:
        # The development launchers' (shikoku_dev): imported only here, so that the server's
        # install, which lacks them, still imports and exports.
        try:
            from shikoku_dev.supervisor import System
        except ModuleNotFoundError as missing:
            if not launchers_missing(missing):
                raise
            print(OWN_SYSTEM_NEEDS_A_CHECKOUT, file=sys.stderr)
            return 2
        system = System.on_free_ports(log=sys.stderr)
        system.env["SHIKOKU_RATE_PER_SECOND"] = "0"  # a system of its own: nobody to share with
        with system:
            return replay_through(game, system.gateway, as_json, system.api_key, states)
    return replay_through(game, gateway, as_json, api_key, states)


def replay_through(
    game: SiteGame, gateway: str, as_json: bool, api_key: str | None, states: Path | None = None
) -> int:
    """Replays `game` as a client of the gateway at `gateway`."""
    with keyed_channel(gateway, api_key) as channel:
        if not _answers(channel, gateway, "import"):
            return 2
    with Client(gateway, api_key=api_key) as client:
        try:
            table = GatewayTable(game, client)
        except Rejected as refused:  # a missing or revoked API key, say: one line, no trace
            print(f"shikoku import: {refused.reason}: {refused.message}", file=sys.stderr)
            return 2
        return replay_on(game, table, as_json, states)


def replay_on(game: SiteGame, table: Table, as_json: bool, states: Path | None = None) -> int:
    """Replays `game` on `table`, writes its states to `states` if given, and prints the
    outcome (a report, or one JSON object): 0 when it matches the site's game, else 1."""
    with (
        _state_log(states) as write,
        Progress("shikoku import", "actions", enabled=not as_json) as bar,
    ):
        progress = bar.update
        if states:
            log = StateLog(game)
            outcome = replay_viewed(
                game,
                table,
                lambda action_id, view, acting: write(log.state(action_id, view, acting)),
                progress,
            )
        else:
            outcome = replay(game, table, progress)
    if as_json:
        print(json.dumps(as_document(outcome)))
    else:
        print(report(game, outcome))
    return 0 if outcome.matches(game) else 1


@contextlib.contextmanager
def _state_log(path: Path | None) -> Iterator[Callable[[dict[str, Any]], None]]:
    """Writes one JSON line per state to `path` (nothing without one)."""
    if path is None:
        yield lambda _state: None
        return
    with path.open("w") as out:

        def write(state: dict[str, Any]) -> None:
            out.write(json.dumps(state, separators=(",", ":")) + "\n")

        yield write


def _answers(channel: grpc.Channel, gateway: str, command: str) -> bool:
    """Whether the gateway accepts the connection in time (if not, says so on stderr)."""
    try:
        grpc.channel_ready_future(channel).result(timeout=CONNECT_SECONDS)
    except grpc.FutureTimeoutError:
        print(f"shikoku {command}: no gateway answers at {gateway}", file=sys.stderr)
        return False
    return True


def as_document(outcome: Outcome) -> dict[str, object]:
    return {
        "game_id": outcome.game_id,
        "players": outcome.net_worths,
        "end_reason": outcome.end_reason,
        "actions": outcome.actions,
    }


def report(game: SiteGame, outcome: Outcome) -> str:
    lines = []
    if (divergence := outcome.divergence) is not None:
        lines.append(f"diverged at action {divergence.action_id}: {json.dumps(divergence.action)}")
        lines.append(f"  our game refused it: {divergence.reason}")
    lines.append(f"{'player':<28} {'ours':>8} {'site':>8}")
    for player in game.players:
        ours, site = outcome.net_worths.get(player.id), game.result.get(player.id)
        mark = "" if ours == site else "  <- differs"
        lines.append(f"{player.name + ' (' + player.id + ')':<28} {ours!s:>8} {site!s:>8}{mark}")
    lines.append(
        f"end: ours {outcome.end_reason or '-'}, site {game.end_reason or '-'}; "
        f"{outcome.actions} actions replayed"
    )
    return "\n".join(lines)


def export_game(
    game_id: str,
    gateway: str,
    out: Path | None,
    api_key: str | None = None,
    messages: bool = False,
) -> int:
    """Writes the game's 18xx.games export (JSON) to `out` or stdout; with `messages`, its
    table's chat as the site's `message` actions (neither hidden messages nor the host's)."""
    said: list[Said] = []
    with keyed_channel(gateway, api_key) as channel:
        if not _answers(channel, gateway, "export"):
            return 2
        try:
            with Progress("shikoku export", "events") as bar:
                stored = read_log(game_pb2_grpc.GameServiceStub(channel), game_id, bar.update)
            if messages:
                said = read_chat(lobby_pb2_grpc.LobbyServiceStub(channel), game_id)
        except grpc.RpcError as error:
            print(f"shikoku export: {error.details()}", file=sys.stderr)
            return 2
    document = export(game_id, batches_from(stored), said)
    text = json.dumps(document, indent=1)
    if out is None:
        print(text)
    else:
        out.write_text(text + "\n")
    return 0


def read_chat(lobby: lobby_pb2_grpc.LobbyServiceStub, table_id: str) -> list[Said]:
    """The table's chat as it stands, to its end (the first heartbeat after what it holds):
    the players' messages that are not hidden, in the order said. A game without a table (an
    imported one) has no chat."""
    request = lobby_pb2.WatchChatRequest(table_id=table_id, heartbeat_seconds=1)
    latest: dict[int, lobby_pb2.ChatMessage] = {}
    stream = lobby.WatchChat(request, timeout=CHAT_SECONDS)
    try:
        for item in stream:
            if item.heartbeat:
                break
            latest[item.message.number] = item.message  # a later item: hidden since
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.NOT_FOUND:
            raise
    finally:
        stream.cancel()
    return [
        Said(m.seat, m.text, m.posted_at_ms, m.game_version)
        for _number, m in sorted(latest.items())
        if not m.hidden and m.seat != HOST_SEAT
    ]


def read_log(
    games: game_pb2_grpc.GameServiceStub,
    game_id: str,
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[dict[str, Any] | None, Event]]:
    """Every event of the game so far, with the command stored on each batch's first;
    `progress` is told how many of them have come."""
    version = games.GetState(game_pb2.GetStateRequest(game_id=game_id), timeout=30).version
    stored: list[tuple[dict[str, Any] | None, Event]] = []
    stream = games.StreamEvents(game_pb2.StreamEventsRequest(game_id=game_id, from_version=1))
    for message in stream:
        payload = _integral(json_format.MessageToDict(message.payload))
        event = event_from_payload(message.type, message.schema_version, payload)
        cause = (
            _integral(json_format.MessageToDict(message.command))
            if message.HasField("command")
            else None
        )
        stored.append((cause, event))
        if progress is not None:
            progress(message.version, version)
        if message.version >= version:
            stream.cancel()
            break
    return stored


def _integral(value: Any) -> Any:
    """JSON numbers come back as floats: whole ones were ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral(item) for item in value]
    return value
