"""The lobby service process: players, tables, seats and the credentials that go with them.

Handlers raise Rejected (or let a VersionConflict escape); the server's interceptor turns them
into statuses with ErrorInfo.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar, cast

import grpc
from redis.asyncio import Redis

from infra.announcements import GRANTS_CHANGED, announce
from infra.config import connect_redis, service_channel
from infra.deployment_token import RequiresDeploymentToken
from infra.eventstore import EventStore, VersionConflict
from infra.grpc_errors import from_rpc_error
from infra.grpc_server import Context, serve
from infra.leases import Lease
from infra.metadata import MISSING_CREDENTIAL, bearer_token, optional_bearer_token
from infra.observability import observe_process
from infra.settings import from_environment
from kernel.rejection import Kind, Rejected, quoted
from services.lobby.domain import chat, players, tables
from services.lobby.domain.access import (
    Caller,
    require_host,
    require_registered_host,
    require_seat,
    require_seat_in_game,
    require_tournament_host,
    watching_delay,
)
from services.lobby.domain.clocks import clocks
from services.lobby.shell.accounts import PlayerRepository, identify
from services.lobby.shell.at_once import each_at_once
from services.lobby.shell.chat import ChatFeed, ChatLog, watch
from services.lobby.shell.credentials import credential_hash, new_credential, new_id
from services.lobby.shell.keepers import (
    KEEPERS_LEASE,
    ClockKeeper,
    ResultKeeper,
    game_ticks,
    keep_running,
    watch_clock,
)
from services.lobby.shell.repository import TableRepository
from services.lobby.shell.request_ids import RequestIds, with_request_id
from services.lobby.shell.settings import LobbySettings
from services.lobby.shell.summary_feed import EVERYTHING, Subscription, SummaryFeed
from services.lobby.shell.tournaments_service import (
    TournamentRepository,
    Tournaments,
    clock_settings,
    spectating,
    tournament_to_proto,
)
from services.lobby.shell.wire import chat_message_to_proto, table_to_proto
from services.notify.address_guard import WebhookGuard
from services.notify.targets import notification_health, set_notification_target
from services.projections.game_summaries import GamePlayers, write_game_players
from shikoku.internal.v1 import lobby_pb2 as internal_lobby_pb2
from shikoku.internal.v1 import lobby_pb2_grpc as internal_lobby_pb2_grpc
from shikoku.internal.v1 import rules_pb2, rules_pb2_grpc
from shikoku.v1 import lobby_pb2, lobby_pb2_grpc

_Reply = TypeVar("_Reply")
MAX_ATTEMPTS = 5
DEFAULT_PAGE, MAX_PAGE = 50, 200
ROLES = {lobby_pb2.ROLE_UNSPECIFIED: "player", lobby_pb2.ROLE_PLAYER: "player"}
ROLES[lobby_pb2.ROLE_HOST] = "host"
DEFAULT_HEARTBEAT_SECONDS, MAX_HEARTBEAT_SECONDS = 15, 60
#: How often a watch looks again at what the feed does not carry (a round starting, a result,
#: a player's new table): one small read per watcher, never one per game.
RECHECK_SECONDS = 1.0


def live_key(player_id: str) -> str:
    """A player's started tables whose games have not ended (a sorted set: start times)."""
    return f"player:{{{player_id}}}:live"


def _heartbeat_seconds(requested: int) -> int:
    if not 0 <= requested <= MAX_HEARTBEAT_SECONDS:
        raise Rejected(
            "INVALID_HEARTBEAT",
            f"heartbeat_seconds is 1 to {MAX_HEARTBEAT_SECONDS}, or 0 for the default",
            Kind.INVALID_ARGUMENT,
            {"field": "heartbeat_seconds"},
        )
    return requested or DEFAULT_HEARTBEAT_SECONDS


def _has_credential(context: Context) -> bool:
    """Whether the call carries a bearer credential (an empty one counts as none, as at the
    gateway)."""
    return bool(optional_bearer_token(context.invocation_metadata()))


class LobbyServicer(lobby_pb2_grpc.LobbyServiceServicer):
    def __init__(
        self,
        tables_repo: TableRepository,
        players_repo: PlayerRepository,
        rules: rules_pb2_grpc.RulesServiceAsyncStub,
        tournaments: Tournaments,
        redis: Redis,
        secret: bytes | None = None,
        feed: SummaryFeed | None = None,
        webhooks: WebhookGuard | None = None,
    ) -> None:
        """`secret` keys the ids and credentials derived from request ids (RequestIds); `feed`
        tells the watches which games changed; `webhooks` checks notification targets."""
        self._tables = tables_repo
        self._players = players_repo
        self._rules = rules
        self._tournaments = tournaments
        self._redis = redis
        self._feed = feed or SummaryFeed(redis)
        self._webhooks = webhooks or WebhookGuard()
        self.request_ids = RequestIds(redis, secret)
        self._chat = ChatLog(redis)
        self._chat_feed = ChatFeed(redis)

    async def close(self) -> None:
        """Ends the feeds' readers (the lobby stopping)."""
        await self._chat_feed.close()
        await self._feed.close()

    async def _caller(self, context: Context, table_id: str = "") -> Caller:
        credential = bearer_token(context.invocation_metadata())
        return await identify(credential, self._tables, self._players, table_id)

    # ---- players ---------------------------------------------------------------------------

    @with_request_id(lobby_pb2.RegisterPlayerResponse)
    async def RegisterPlayer(
        self, request: lobby_pb2.RegisterPlayerRequest, context: Context
    ) -> lobby_pb2.RegisterPlayerResponse:
        player, credential = await self._players.register(
            request.display_name, ROLES.get(request.role, "?")
        )
        return lobby_pb2.RegisterPlayerResponse(
            player_id=player.player_id, credential=credential, expires_at_ms=player.expires_at_ms
        )

    async def RevokeCredential(
        self, request: lobby_pb2.RevokeCredentialRequest, context: Context
    ) -> lobby_pb2.RevokeCredentialResponse:
        caller = await self._caller(context)
        if caller.player is None:
            raise Rejected(
                "NOT_A_PLAYER_CREDENTIAL",
                "only a registered player's credential is revoked this way",
                Kind.PERMISSION_DENIED,
            )
        await self._players.revoke(caller.player, caller.player_version)
        await announce(self._redis, GRANTS_CHANGED, caller.player.player_id)
        return lobby_pb2.RevokeCredentialResponse()

    # ---- tables ----------------------------------------------------------------------------

    @with_request_id(lobby_pb2.CreateTableResponse)
    async def CreateTable(
        self, request: lobby_pb2.CreateTableRequest, context: Context
    ) -> lobby_pb2.CreateTableResponse:
        table_id = new_id("t-")
        host_credential = new_credential(table_id)
        host = (await self._caller(context)).player if _has_credential(context) else None
        events = tables.create(
            table_id,
            request.seat_count,
            request.display_name,
            request.options.beginner_game,
            request.options.fixed_seat_order,
            credential_hash(host_credential),
            request.options.trust_submitted_revenue,
            request.options.undo_allowed,
            host_player_id=host.player_id if host and host.role == "host" else "",
            clock=clock_settings(request.options),
            spectating=spectating(request.options),
            rules_profile=request.options.rules_profile,
        )
        try:
            table = await self._tables.append(table_id, 0, events)
        except VersionConflict:
            # The same request again (its id and credential derived from it): the same table.
            _version, table = await self._tables.load(table_id)
            if table.host_credential_hash != credential_hash(host_credential):
                raise
        await self._tables.index(table_id)
        return lobby_pb2.CreateTableResponse(
            table=table_to_proto(table), host_token=host_credential
        )

    async def GetTable(
        self, request: lobby_pb2.GetTableRequest, context: Context
    ) -> lobby_pb2.Table:
        _version, table = await self._tables.load(request.table_id)
        summary = await self._tables.summary(table)
        if table.clock is None or not table.started or not await self._sees_live(context, table):
            return table_to_proto(table, summary)
        ticks = await _call_rules(game_ticks(self._rules, table.game_id))
        now = int(time.time() * 1000)
        seats = [seat.number for seat in table.seats if seat.taken]
        return table_to_proto(table, summary, clocks(table.clock, seats, ticks, now), now)

    async def _sees_live(self, context: Context, table: tables.Table) -> bool:
        """Whether the caller sees the table's game as it stands (a running clock says who
        must act now, which spectators kept some actions behind must not learn)."""
        caller = (await self._caller(context)) if _has_credential(context) else None
        try:
            return watching_delay(caller, table) == 0
        except Rejected:  # closed to spectators
            return False

    async def ListTables(
        self, request: lobby_pb2.ListTablesRequest, context: Context
    ) -> lobby_pb2.ListTablesResponse:
        size = request.page_size or DEFAULT_PAGE
        if not 1 <= size <= MAX_PAGE or (request.page_token and not request.page_token.isdigit()):
            raise Rejected(
                "INVALID_PAGE",
                f"page_size is 1 to {MAX_PAGE} and page_token comes from a previous page",
                Kind.INVALID_ARGUMENT,
                {"field": "page_size" if not 1 <= size <= MAX_PAGE else "page_token"},
            )
        position = int(request.page_token or 0)
        in_tournament = await self._tournament_tables(request.tournament_id)
        found: list[lobby_pb2.Table] = []
        more = True
        while more and len(found) < size:
            if in_tournament is None:
                ids = await self._tables.page(position, size)
            else:
                ids = in_tournament[position : position + size]
            more = len(ids) == size
            for message in await self._listed_all(ids):
                position += 1
                if request.status in (lobby_pb2.TABLE_STATUS_UNSPECIFIED, message.status):
                    found.append(message)
                    if len(found) == size:
                        break
        total = await self._tables.count() if in_tournament is None else len(in_tournament)
        return lobby_pb2.ListTablesResponse(
            tables=found, next_page_token=str(position) if found and position < total else ""
        )

    async def _listed_all(self, table_ids: list[str]) -> list[lobby_pb2.Table]:
        return [
            table_to_proto(table, summary)
            for table, summary in await self._tables.listed(table_ids)
        ]

    async def _tournament_tables(self, tournament_id: str) -> list[str] | None:
        """The tables of a tournament, round by round; None for no tournament."""
        if not tournament_id:
            return None
        _version, found = await self._tournaments.load(tournament_id)
        return [table_id for round_ in found.rounds for table_id in round_.table_ids]

    @with_request_id(lobby_pb2.JoinTableResponse)
    async def JoinTable(
        self, request: lobby_pb2.JoinTableRequest, context: Context
    ) -> lobby_pb2.JoinTableResponse:
        player = (await self._caller(context)).player if _has_credential(context) else None
        seat_credential = new_credential(request.table_id)
        name = request.player_name or (player.display_name if player else "")
        for _attempt in range(MAX_ATTEMPTS):
            version, table = await self._tables.load(request.table_id)
            if (seated := table.seat_of(credential_hash(seat_credential))) is not None:
                # The same request again (its credential derived from it): the same seat.
                return lobby_pb2.JoinTableResponse(
                    table=table_to_proto(table), seat=seated.number, seat_token=seat_credential
                )
            events = tables.join(
                table,
                name,
                request.seat,
                credential_hash(seat_credential),
                player.player_id if player else "",
            )
            try:
                table = await self._tables.append(request.table_id, version, events)
            except VersionConflict:
                continue
            return lobby_pb2.JoinTableResponse(
                table=table_to_proto(table), seat=events[0][1]["seat"], seat_token=seat_credential
            )
        raise Rejected("CONTENDED", "the table changed while joining; try again", Kind.ABORTED)

    async def LeaveTable(
        self, request: lobby_pb2.LeaveTableRequest, context: Context
    ) -> lobby_pb2.Table:
        caller = await self._caller(context, request.table_id)
        table, seat = require_seat(caller)
        events = tables.leave(table, seat)
        return table_to_proto(
            await self._tables.append(request.table_id, caller.table_version, events)
        )

    async def SetReady(
        self, request: lobby_pb2.SetReadyRequest, context: Context
    ) -> lobby_pb2.Table:
        caller = await self._caller(context, request.table_id)
        table, seat = require_seat(caller)
        events = tables.set_ready(table, seat, request.ready)
        table = await self._tables.append(request.table_id, caller.table_version, events)
        if table.all_ready:
            table = await self._start(table, caller.table_version + len(events))
        return table_to_proto(table)

    async def AbandonTable(
        self, request: lobby_pb2.AbandonTableRequest, context: Context
    ) -> lobby_pb2.Table:
        caller = await self._host(context, request.table_id)
        assert caller.table is not None
        events = tables.abandon(caller.table)
        if caller.table.started:
            # Ended before the abandonment is recorded, so that a retry after a failure here
            # finds the table still to abandon.
            try:
                await self._end_game(caller.table.game_id)
            except Rejected as rejection:
                if rejection.reason != "GAME_OVER":
                    raise
        table = await self._tables.append(request.table_id, caller.table_version, events)
        return table_to_proto(table, await self._tables.summary(table))

    @with_request_id(lobby_pb2.JoinTableResponse)
    async def ReplaceSeat(
        self, request: lobby_pb2.ReplaceSeatRequest, context: Context
    ) -> lobby_pb2.JoinTableResponse:
        caller = await self._host(context, request.table_id)
        assert caller.table is not None
        _player_version, player = await self._players.load(request.player_id)
        seat_credential = new_credential(request.table_id)
        if (seated := caller.table.seat_of(credential_hash(seat_credential))) is not None:
            # The same request again (its credential derived from it): already replaced.
            return lobby_pb2.JoinTableResponse(
                table=table_to_proto(caller.table), seat=seated.number, seat_token=seat_credential
            )
        events = tables.replace(
            caller.table,
            request.seat,
            player.display_name,
            credential_hash(seat_credential),
            player.player_id,
        )
        table = await self._tables.append(request.table_id, caller.table_version, events)
        if table.started:
            await self._record_players(table)
        return lobby_pb2.JoinTableResponse(
            table=table_to_proto(table), seat=request.seat, seat_token=seat_credential
        )

    async def StartTable(
        self, request: lobby_pb2.StartTableRequest, context: Context
    ) -> lobby_pb2.StartTableResponse:
        caller = await self._host(context, request.table_id)
        assert caller.table is not None
        table = await self._start(caller.table, caller.table_version)
        return lobby_pb2.StartTableResponse(table=table_to_proto(table), game_id=table.game_id)

    async def EndGame(self, request: lobby_pb2.EndGameRequest, context: Context) -> lobby_pb2.Table:
        caller = await self._host(context, request.table_id)
        assert caller.table is not None
        if not caller.table.started:
            raise Rejected("TABLE_NOT_STARTED", f"table {quoted(request.table_id)} has no game yet")
        await self._end_game(caller.table.game_id)
        return table_to_proto(caller.table)

    async def ForfeitSeat(
        self, request: lobby_pb2.ForfeitSeatRequest, context: Context
    ) -> lobby_pb2.Table:
        caller = await self._host(context, request.table_id)
        table = caller.table
        assert table is not None
        out_of_time = game_over = False
        if table.clock is not None and table.started:
            ticks = await _call_rules(game_ticks(self._rules, table.game_id))
            game_over = bool(ticks) and not ticks[-1].acting_after
            now = int(time.time() * 1000)
            seats = [seat.number for seat in table.seats if seat.taken]
            clock = clocks(table.clock, seats, ticks, now).get(request.seat)
            out_of_time = clock is not None and clock.ran_out
        events = tables.forfeit(table, request.seat, out_of_time, game_over)
        if events:
            table = await self._tables.append(request.table_id, caller.table_version, events)
        try:  # a retry after a failure here finds the seat forfeited and ends the game
            await self._end_game(table.game_id)
        except Rejected as rejection:
            if rejection.reason != "GAME_OVER":
                raise
        await self._record_players(table)
        return table_to_proto(table, await self._tables.summary(table))

    async def _start(self, table: tables.Table, version: int) -> tables.Table:
        """Creates the table's game (one game per table, with the table's id: a retried start
        cannot create two), records the start, and has the table's clock watched."""
        events = tables.start(table, table.table_id)
        await self._record_players(table)  # before the game exists, so before its first command
        players = [
            rules_pb2.GamePlayer(seat=s.number, name=s.player_name) for s in table.seats if s.taken
        ]
        await _call_rules(
            self._rules.CreateGame(
                rules_pb2.CreateGameRequest(
                    game_id=table.table_id,
                    players=players,
                    beginner_game=table.beginner_game,
                    fixed_seat_order=table.fixed_seat_order,
                    trust_submitted_revenue=table.trust_submitted_revenue,
                    undo_allowed=table.undo_allowed,
                    rules_profile=table.rules_profile,
                ),
                timeout=10,
            )
        )
        started = await self._tables.append(table.table_id, version, events)
        if started.clock is not None:
            await watch_clock(self._redis, started.table_id)
        return started

    async def _record_players(self, table: tables.Table) -> None:
        """Who plays the table's game (the game players record), and each registered player's
        index of live tables."""
        round_ = 0
        if table.tournament_id:
            _version, found = await self._tournaments.load(table.tournament_id)
            round_ = next((r.number for r in found.rounds if table.table_id in r.table_ids), 0)
            if not round_ and found.current_round is not None:
                round_ = found.current_round.number  # tables are assigned after they start
        seats = {s.number: s.player_id for s in table.seats if s.player_id}
        record = GamePlayers(table.table_id, table.tournament_id, round_, seats)
        await write_game_players(self._redis, table.table_id, record)
        for player_id in seats.values():
            await self._redis.zadd(live_key(player_id), {table.table_id: time.time()})

    async def _end_game(self, game_id: str) -> None:
        await _call_rules(
            self._rules.EndGame(rules_pb2.EndGameRequest(game_id=game_id), timeout=10)
        )

    # ---- tournaments -----------------------------------------------------------------------

    @with_request_id(lobby_pb2.Tournament)
    async def CreateTournament(
        self, request: lobby_pb2.CreateTournamentRequest, context: Context
    ) -> lobby_pb2.Tournament:
        created = await self._tournaments.create(await self._caller(context), request)
        return tournament_to_proto(created)

    @with_request_id(lobby_pb2.Tournament)
    async def StartRound(
        self, request: lobby_pb2.StartRoundRequest, context: Context
    ) -> lobby_pb2.Tournament:
        """Sent again while a round is in progress (a lost reply, a crash between its
        writes), it finishes and answers that round, never a second one."""
        caller = await self._caller(context)
        found, seated = await self._tournaments.seat_round(caller, request.tournament_id)
        await each_at_once(seated, lambda seat: self._start_in_round(seat[1], seat[0]))
        return tournament_to_proto(found)

    async def _start_in_round(self, table: tables.Table, version: int) -> None:
        """Starts a table of a tournament round unless an earlier attempt did; each step is
        one the next attempt recognises (the game has the table's id, a started table is not
        started again, watching a clock twice is watching it)."""
        if not table.started:
            try:
                await self._start(table, version)
                return
            except VersionConflict:
                _version, table = await self._tables.load(table.table_id)
                if not table.started:
                    raise
        if table.clock is not None:  # its starter may have stopped short of watching it
            await watch_clock(self._redis, table.table_id)

    async def GetTournament(
        self, request: lobby_pb2.GetTournamentRequest, context: Context
    ) -> lobby_pb2.Tournament:
        return tournament_to_proto((await self._tournaments.load(request.tournament_id))[1])

    async def ExportStandings(
        self, request: lobby_pb2.ExportStandingsRequest, context: Context
    ) -> lobby_pb2.ExportStandingsResponse:
        as_json = request.format == lobby_pb2.STANDINGS_FORMAT_JSON
        content_type, content = await self._tournaments.export(request.tournament_id, as_json)
        return lobby_pb2.ExportStandingsResponse(content_type=content_type, content=content)

    async def WatchTournament(
        self, request: lobby_pb2.WatchTournamentRequest, context: Context
    ) -> AsyncIterator[lobby_pb2.WatchTournamentResponse]:
        quiet = _heartbeat_seconds(request.heartbeat_seconds)
        version, found = await self._tournaments.load(request.tournament_id)
        yield lobby_pb2.WatchTournamentResponse(tournament=tournament_to_proto(found))
        shown: dict[str, lobby_pb2.Table] = {}
        with self._feed.subscribed() as subscription:
            current = found.current_round
            subscription.follow(current.table_ids if current else ())
            changed: set[str] = set(subscription.games)
            loop = asyncio.get_running_loop()
            said_at = loop.time()
            while True:
                for table_id in sorted(changed & subscription.games):
                    message = await self._table_as_host_sees_it(table_id)
                    if shown.get(table_id) != _without_clock_times(message):
                        shown[table_id] = _without_clock_times(message)
                        said_at = loop.time()
                        yield lobby_pb2.WatchTournamentResponse(table=message)
                changed = await _changes(subscription, RECHECK_SECONDS)
                now_version = (await self._tournaments.load(request.tournament_id))[0]
                if now_version != version:
                    version, found = await self._tournaments.load(request.tournament_id)
                    said_at = loop.time()
                    yield lobby_pb2.WatchTournamentResponse(tournament=tournament_to_proto(found))
                    current = found.current_round
                    subscription.follow(current.table_ids if current else ())
                    changed = set(subscription.games)
                if loop.time() - said_at >= quiet:
                    said_at = loop.time()
                    heartbeat = lobby_pb2.TournamentHeartbeat(at_ms=int(time.time() * 1000))
                    yield lobby_pb2.WatchTournamentResponse(heartbeat=heartbeat)

    async def _table_as_host_sees_it(self, table_id: str) -> lobby_pb2.Table:
        _version, table = await self._tables.load(table_id)
        summary = await self._tables.summary(table)
        if table.clock is None or not table.started:
            return table_to_proto(table, summary)
        ticks = await _call_rules(game_ticks(self._rules, table.game_id))
        now = int(time.time() * 1000)
        seats = [seat.number for seat in table.seats if seat.taken]
        return table_to_proto(table, summary, clocks(table.clock, seats, ticks, now), now)

    async def WatchPlayer(
        self, request: lobby_pb2.WatchPlayerRequest, context: Context
    ) -> AsyncIterator[lobby_pb2.WatchPlayerResponse]:
        quiet = _heartbeat_seconds(request.heartbeat_seconds)
        player = self._registered(await self._caller(context))
        with self._feed.subscribed() as subscription:
            loop = asyncio.get_running_loop()
            said: lobby_pb2.WatchPlayerResponse | None = None
            said_at = loop.time()
            while True:
                answer = await self._live_tables(player.player_id)
                subscription.follow(t.table.game_id for t in answer.tables)
                if answer != said or loop.time() - said_at >= quiet:
                    said, said_at = answer, loop.time()
                    yield answer
                await _changes(subscription, RECHECK_SECONDS)

    async def _live_tables(self, player_id: str) -> lobby_pb2.WatchPlayerResponse:
        """The player's started tables whose games have not ended, newest first; those that
        have ended leave the player's index."""
        raw = cast(list[bytes], await self._redis.zrevrange(live_key(player_id), 0, -1))
        table_ids = [table_id.decode() for table_id in raw]
        live: list[lobby_pb2.PlayerTable] = []
        ended: list[str] = []
        for table, summary in await self._tables.listed(table_ids):
            seat = table.seat_of_player(player_id)
            message = table_to_proto(table, summary)
            if seat is None or message.status != lobby_pb2.TABLE_STATUS_STARTED:
                ended.append(table.table_id)
                continue
            your_turn = seat.number in message.game.acting_seats
            live.append(lobby_pb2.PlayerTable(table=message, seat=seat.number, your_turn=your_turn))
        if ended:
            await self._redis.zrem(live_key(player_id), *ended)
        return lobby_pb2.WatchPlayerResponse(
            tables=live, your_turn_count=sum(t.your_turn for t in live)
        )

    # ---- chat ------------------------------------------------------------------------------

    @with_request_id(lobby_pb2.ChatMessage)
    async def PostMessage(
        self, request: lobby_pb2.PostMessageRequest, context: Context
    ) -> lobby_pb2.ChatMessage:
        text = chat.checked_text(request.text)
        caller = await self._caller(context)  # not for the table: another's token is no seat
        _version, table = await self._tables.load(request.table_id)
        author = chat.author_of(caller, table)
        request_key = new_id("m-") if request.request_id else ""  # derived from the request
        return chat_message_to_proto(await self._chat.post(table, author, text, request_key))

    async def WatchChat(
        self, request: lobby_pb2.WatchChatRequest, context: Context
    ) -> AsyncIterator[lobby_pb2.WatchChatResponse]:
        quiet = _heartbeat_seconds(request.heartbeat_seconds)
        caller = (await self._caller(context)) if _has_credential(context) else None
        _version, table = await self._tables.load(request.table_id)
        chat.require_reader(caller, table)
        watched = watch(self._chat, self._chat_feed, table.table_id, request.from_position, quiet)
        async for response in watched:
            yield response

    async def HideMessage(
        self, request: lobby_pb2.HideMessageRequest, context: Context
    ) -> lobby_pb2.ChatMessage:
        await self._host(context, request.table_id)
        return chat_message_to_proto(await self._chat.hide(request.table_id, request.number))

    # ---- notifications ---------------------------------------------------------------------

    async def SetNotificationTarget(
        self, request: lobby_pb2.SetNotificationTargetRequest, context: Context
    ) -> lobby_pb2.NotificationTarget:
        player = self._registered(await self._caller(context))
        return await set_notification_target(self._redis, player.player_id, request, self._webhooks)

    async def GetNotificationHealth(
        self, request: lobby_pb2.GetNotificationHealthRequest, context: Context
    ) -> lobby_pb2.GetNotificationHealthResponse:
        _version, found = await self._tournaments.load(request.tournament_id)
        require_tournament_host(await self._caller(context), found)
        players = sorted((p.player_id, p.display_name) for p in found.players)
        return lobby_pb2.GetNotificationHealthResponse(
            players=await notification_health(self._redis, players)
        )

    @staticmethod
    def _registered(caller: Caller) -> players.Player:
        if caller.player is None:
            raise Rejected(
                "NOT_A_PLAYER_CREDENTIAL",
                "only a registered player's credential may do this",
                Kind.PERMISSION_DENIED,
            )
        return caller.player

    async def _host(self, context: Context, table_id: str) -> Caller:
        caller = await self._caller(context, table_id)
        require_host(caller)
        return caller


async def _changes(subscription: Subscription, seconds: float) -> set[str]:
    """The games of `subscription` the feed says changed, waiting up to `seconds` for one."""
    changed: set[str] = set()
    with contextlib.suppress(TimeoutError):
        changed.add(await asyncio.wait_for(subscription.changed.get(), seconds))
    while not subscription.changed.empty():
        changed.add(subscription.changed.get_nowait())
    return set(subscription.games) if EVERYTHING in changed else changed


def _without_clock_times(message: lobby_pb2.Table) -> lobby_pb2.Table:
    """The table as a change is judged: running clocks tick without anything happening."""
    judged = lobby_pb2.Table()
    judged.CopyFrom(message)
    for seat in judged.seats:
        if seat.HasField("clock"):
            seat.clock.remaining_ms = seat.clock.used_ms = seat.clock.as_of_ms = 0
    return judged


async def _call_rules(call: Awaitable[_Reply]) -> _Reply:
    """A rules call; its rejection passes on to our caller intact."""
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise from_rpc_error(error) or Rejected(
            "RULES_UNAVAILABLE", f"the rules service failed: {error.details()}", Kind.UNAVAILABLE
        ) from error


class CredentialServicer(internal_lobby_pb2_grpc.CredentialServiceServicer):
    """The gateway's one question: may this credential do this to that resource?"""

    def __init__(
        self,
        tables_repo: TableRepository,
        players_repo: PlayerRepository,
        tournaments_repo: TournamentRepository,
    ) -> None:
        self._tables = tables_repo
        self._players = players_repo
        self._tournaments = tournaments_repo

    async def Authorize(
        self, request: internal_lobby_pb2.AuthorizeRequest, context: Context
    ) -> internal_lobby_pb2.Grant:
        if request.permission == internal_lobby_pb2.PERMISSION_WATCH_GAME:
            return await self._watching(request.token, request.resource_id)
        if not request.token:
            raise MISSING_CREDENTIAL
        needs_table = request.permission in TABLE_PERMISSIONS
        caller = await identify(
            request.token, self._tables, self._players, request.resource_id if needs_table else ""
        )
        match request.permission:
            case internal_lobby_pb2.PERMISSION_HOST_TABLE:
                require_host(caller)
            case internal_lobby_pb2.PERMISSION_HOLD_SEAT:
                require_seat(caller)
            case internal_lobby_pb2.PERMISSION_ACT_IN_GAME:
                require_seat_in_game(caller, request.resource_id)
            case internal_lobby_pb2.PERMISSION_REGISTERED_HOST:
                require_registered_host(caller)
            case internal_lobby_pb2.PERMISSION_HOST_TOURNAMENT:
                _version, found = await self._tournaments.load(request.resource_id)
                require_tournament_host(caller, found)
            case internal_lobby_pb2.PERMISSION_SIGNED_IN:
                pass
            case _:
                raise Rejected(
                    "UNKNOWN_PERMISSION",
                    f"no permission {request.permission}",
                    Kind.INVALID_ARGUMENT,
                    {"field": "permission"},
                )
        return internal_lobby_pb2.Grant(
            principal=_principal(caller),
            valid_until_ms=caller.player.expires_at_ms if caller.player else 0,
        )

    async def _watching(self, token: str, game_id: str) -> internal_lobby_pb2.Grant:
        caller = await identify(token, self._tables, self._players) if token else None
        principal = _principal(caller) if caller else None
        try:
            _version, table = await self._tables.load(game_id)  # the game is the table's
        except Rejected:
            return internal_lobby_pb2.Grant(principal=principal)  # imported: no table, public
        return internal_lobby_pb2.Grant(
            principal=principal, delay_actions=watching_delay(caller, table)
        )


TABLE_PERMISSIONS = (
    internal_lobby_pb2.PERMISSION_HOST_TABLE,
    internal_lobby_pb2.PERMISSION_HOLD_SEAT,
    internal_lobby_pb2.PERMISSION_ACT_IN_GAME,
)


def _principal(caller: Caller) -> internal_lobby_pb2.Principal:
    Principal = internal_lobby_pb2.Principal
    role = Principal.ROLE_PLAYER
    if caller.seat is not None:
        role = Principal.ROLE_SEAT
    elif caller.is_host:
        role = Principal.ROLE_HOST
    return Principal(
        role=role,
        table_id=caller.table.table_id if caller.table else "",
        seat=caller.seat.number if caller.seat else 0,
        game_id=caller.table.game_id if caller.table else "",
        player_id=caller.player.player_id if caller.player else "",
    )


@dataclass(frozen=True, slots=True)
class Lobby:
    """The lobby composed from its settings: its servicers, and the passes its keepers run (in
    the replica that holds their lease: `keep`)."""

    servicer: LobbyServicer
    credentials: CredentialServicer
    keepers: list[Callable[[], Awaitable[None]]]
    redis: Redis

    def register(self, server: grpc.aio.Server) -> Iterable[str]:
        lobby_pb2_grpc.add_LobbyServiceServicer_to_server(self.servicer, server)
        internal_lobby_pb2_grpc.add_CredentialServiceServicer_to_server(self.credentials, server)
        return [
            lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name,
            internal_lobby_pb2.DESCRIPTOR.services_by_name["CredentialService"].full_name,
        ]

    async def keep(self, stopping: asyncio.Event, replica: str) -> None:
        await keep_running(stopping, self.keepers, Lease(self.redis, KEEPERS_LEASE, replica))


def build_lobby(
    settings: LobbySettings, redis: Redis, rules: rules_pb2_grpc.RulesServiceAsyncStub
) -> Lobby:
    """The lobby on `redis`, creating and ending games with `rules`."""
    replication = settings.replication.policy
    tables_repo = TableRepository(EventStore(redis, "table", replication), redis)
    players_repo = PlayerRepository(EventStore(redis, "player", replication))
    tournaments_repo = TournamentRepository(EventStore(redis, "tournament", replication), redis)
    tournaments = Tournaments(tournaments_repo, tables_repo, players_repo, settings.secret)
    clock_keeper = ClockKeeper(redis, tables_repo, rules, settings.summaries.count)
    result_keeper = ResultKeeper(tournaments_repo, tournaments)
    feed = SummaryFeed(redis, settings.summaries.count)
    webhooks = WebhookGuard(allow_loopback=settings.webhooks.allow_loopback)
    servicer = LobbyServicer(
        tables_repo, players_repo, rules, tournaments, redis, settings.secret, feed, webhooks
    )
    return Lobby(
        servicer,
        CredentialServicer(tables_repo, players_repo, tournaments_repo),
        [clock_keeper.run_once, result_keeper.run_once],
        redis,
    )


async def main() -> None:
    settings = from_environment(LobbySettings, LobbySettings.NAME)
    observe_process(settings.NAME, settings.process.observability)
    redis = await connect_redis(settings.NAME, settings.redis.url)
    channel = service_channel(settings.process.addresses.rules, settings.process.token)
    lobby = build_lobby(settings, redis, rules_pb2_grpc.RulesServiceStub(channel))
    stopping = asyncio.Event()
    keeping = asyncio.create_task(
        lobby.keep(stopping, f"lobby-{socket.gethostname()}-{os.getpid()}")
    )

    async def stop() -> None:
        stopping.set()
        await keeping
        await lobby.servicer.close()
        await channel.close(None)
        await redis.aclose()

    await serve(
        settings.NAME,
        settings.listen_address,
        lobby.register,
        on_stop=stop,
        observability=settings.process.observability,
        admissions=[RequiresDeploymentToken(settings.process.token)],
    )


if __name__ == "__main__":
    asyncio.run(main())
