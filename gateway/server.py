"""The gateway: the only public surface. Its interceptors check rate limits, API keys and
credentials (gateway/auth.py). Every public method is served from its service's descriptor
(`serve_public_api`): forwarded to the same method of the service behind, unless a servicer
here defines it to add policy (the game's methods, which also stream game events straight from
the event log, and Optimize)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass

import grpc
from redis.asyncio import Redis

from gateway import metrics
from gateway.api_keys import KEYS_REMEMBERED, ApiKeys
from gateway.auth import Authorization, current_grant
from gateway.caching import remember
from gateway.public_api import public_services
from gateway.rate_limit import RateLimit, TokenBuckets, caller_key
from gateway.reflection import public_descriptors
from gateway.settings import GatewaySettings
from gateway.spectating import SpectatorView
from gateway.spectator_gate import SpectatorGate
from gateway.stream_quota import StreamQuota
from gateway.watching import GameWatchers
from infra.call_chain import Admission
from infra.config import connect_redis, service_channel
from infra.eventstore import EventStore, StoredEvent
from infra.forwarding import add_service, forward, forward_stream, passed_on, relay_error
from infra.grpc_server import Context, serve
from infra.metrics import watch_cache
from infra.observability import observe_process
from infra.open_files import raise_open_files_limit
from infra.settings import from_environment
from kernel.rejection import Kind, Rejected, quoted
from services.rules.wire import event_to_proto
from shikoku.internal.v1 import lobby_pb2_grpc as internal_lobby_pb2_grpc
from shikoku.internal.v1 import rules_pb2, rules_pb2_grpc
from shikoku.v1 import (
    game_pb2,
    lobby_pb2,
    lobby_pb2_grpc,
    routes_pb2,
)

STREAM_QUIET = 15.0
DEFAULT_HEARTBEAT_SECONDS = 15
MAX_HEARTBEAT_SECONDS = 60
EVENT_CACHE = 20_000  # recent events as sent, shared by all watchers
STATE_CACHE = 64  # states after recent actions, shared by all watchers of a game

# What a connection may hold and for how long: the settings (docs/operations.md, "Slow and
# idle clients").
#: Pings more often than the minimum a client may send before it is sent away (GOAWAY).
MAX_PING_STRIKES = 2

RULES = rules_pb2.DESCRIPTOR.services_by_name["RulesService"]
#: An upstream answer relayed as the bytes it came in (`infra.forwarding.passed_on`).
Relayed = bytes


class GameGateway:
    """GameService: every method adds policy (the seat acting, the spectator's view), and the
    streams are read from the event log itself."""

    def __init__(
        self,
        rules: grpc.aio.Channel,
        events: EventStore,
        spectators: SpectatorGate,
        streams: StreamQuota | None = None,
        trusted_proxies: frozenset[str] = frozenset(),
        proxy_token: str = "",
    ) -> None:
        self._rules = rules_pb2_grpc.RulesServiceStub(rules)
        # The answers these relay are passed on as their bytes.
        self._submit = passed_on(rules, RULES.methods_by_name["Submit"])
        self._get_state = passed_on(rules, RULES.methods_by_name["GetState"])
        self._list_legal_actions = passed_on(rules, RULES.methods_by_name["ListLegalActions"])
        self._events = events
        self._spectators = spectators
        self._streams = streams or StreamQuota()
        self._trusted_proxies = trusted_proxies
        self._proxy_token = proxy_token
        self._watchers = GameWatchers(events)
        self._event_messages: OrderedDict[tuple[str, int], game_pb2.GameEvent] = OrderedDict()
        self._states: OrderedDict[tuple[str, int], asyncio.Future[game_pb2.GameState]] = (
            OrderedDict()
        )

    def watch_metrics(self) -> None:
        """Reports its watchers, streams and caches whenever metrics are scraped."""
        metrics.watch(
            watched_games=lambda: self._watchers.feeds,
            watchers=lambda: self._watchers.watchers,
            open_streams=lambda: self._streams.open,
            caches={
                "gateway_events": (lambda: len(self._event_messages), EVENT_CACHE),
                "gateway_states": (lambda: len(self._states), STATE_CACHE),
            },
        )

    async def SubmitCommand(
        self, request: game_pb2.SubmitCommandRequest, context: Context
    ) -> Relayed:
        submit = rules_pb2.SubmitRequest(
            game_id=request.game_id,
            seat=current_grant().seat,
            command=request.command,
            command_id=request.command_id,
            include_legal_actions=request.include_legal_actions,
        )
        return await forward(self._submit, submit, context)

    async def GetState(self, request: game_pb2.GetStateRequest, context: Context) -> Relayed:
        version = await self._spectators.visible_version(request.game_id, request.version)
        request = game_pb2.GetStateRequest(game_id=request.game_id, version=version)
        return await forward(self._get_state, request, context)

    async def ListLegalActions(
        self, request: game_pb2.ListLegalActionsRequest, context: Context
    ) -> Relayed:
        await self._spectators.require_present(request.game_id)
        return await forward(self._list_legal_actions, request, context)

    async def StreamEvents(
        self, request: game_pb2.StreamEventsRequest, context: Context
    ) -> AsyncIterator[game_pb2.GameEvent]:
        first = max(request.from_version, 1)
        async for released in self._released(request.game_id, first, context, STREAM_QUIET):
            for event in released:
                yield self._event_message(request.game_id, event)

    async def WatchGame(
        self, request: game_pb2.WatchGameRequest, context: Context
    ) -> AsyncIterator[game_pb2.WatchGameResponse]:
        if not 0 <= request.heartbeat_seconds <= MAX_HEARTBEAT_SECONDS:
            raise Rejected(
                "INVALID_HEARTBEAT",
                f"heartbeat_seconds is 1 to {MAX_HEARTBEAT_SECONDS}, or 0 for the default",
                Kind.INVALID_ARGUMENT,
                {"field": "heartbeat_seconds"},
            )
        quiet = request.heartbeat_seconds or DEFAULT_HEARTBEAT_SECONDS
        sent = max(request.from_version, 1) - 1
        async for released in self._released(request.game_id, sent + 1, context, quiet):
            if not released:
                yield game_pb2.WatchGameResponse(heartbeat=game_pb2.Heartbeat(version=sent))
            for event in released:
                response = game_pb2.WatchGameResponse(
                    event=self._event_message(request.game_id, event)
                )
                if request.include_state and event is released[-1]:
                    state = await self._state_at(request.game_id, event.version, context)
                    response.state.CopyFrom(state)
                yield response
                sent = event.version

    async def _released(
        self, game_id: str, first: int, context: Context, quiet_seconds: float
    ) -> AsyncIterator[list[StoredEvent]]:
        """What the caller may be sent of the game from version `first` on, in order and
        forever; an empty batch when there is nothing new for them."""
        if await self._events.version(game_id) == 0:
            raise Rejected(
                "GAME_NOT_FOUND", f"no game {quoted(game_id)}", Kind.NOT_FOUND, {"game_id": game_id}
            )
        delay = current_grant().delay_actions
        view = SpectatorView(delay)
        held: deque[StoredEvent] = deque()
        caller = caller_key(
            context.invocation_metadata(), context.peer(), self._trusted_proxies, self._proxy_token
        )
        with self._streams.held(caller):
            # A delayed spectator's view depends on the whole log, so it is read from the start.
            watched = self._watchers.watch(game_id, 1 if delay else first, quiet_seconds)
            async for batch in watched:
                for event in batch:
                    view.see(event)
                    if event.version >= first:
                        held.append(event)
                released = []
                while held and held[0].version <= view.visible:
                    released.append(held.popleft())
                yield released

    def _event_message(self, game_id: str, event: StoredEvent) -> game_pb2.GameEvent:
        """The event as sent, built once for all of the game's watchers (a version's event
        never changes)."""
        key = (game_id, event.version)
        message = self._event_messages.get(key)
        if message is None:
            message = remember(
                self._event_messages, key, event_to_proto(game_id, event), EVENT_CACHE
            )
        return message

    async def _state_at(self, game_id: str, version: int, context: Context) -> game_pb2.GameState:
        """The state after `version`, asked of the rules service once for all watchers."""
        key = (game_id, version)
        pending = self._states.get(key)
        if pending is None:
            request = game_pb2.GetStateRequest(game_id=game_id, version=version)
            pending = remember(
                self._states,
                key,
                asyncio.ensure_future(self._rules.GetState(request, timeout=10)),
                STATE_CACHE,
            )
        try:
            return await asyncio.shield(pending)
        except grpc.aio.AioRpcError as error:
            self._states.pop(key, None)
            await relay_error(error, context)
            raise


class LobbyGateway:
    """LobbyService's streams, forwarded to the lobby within the caller's stream quota (one
    quota with the game streams: each holds a call here and a watch behind). Every other method
    of the service is forwarded as it is."""

    def __init__(
        self,
        lobby: grpc.aio.Channel,
        streams: StreamQuota,
        trusted_proxies: frozenset[str] = frozenset(),
        proxy_token: str = "",
    ) -> None:
        self._lobby = lobby_pb2_grpc.LobbyServiceStub(lobby)
        self._streams = streams
        self._trusted_proxies = trusted_proxies
        self._proxy_token = proxy_token

    async def WatchTournament(
        self, request: lobby_pb2.WatchTournamentRequest, context: Context
    ) -> AsyncIterator[lobby_pb2.WatchTournamentResponse]:
        with self._held(context):
            async for response in forward_stream(self._lobby.WatchTournament, request, context):
                yield response

    async def WatchPlayer(
        self, request: lobby_pb2.WatchPlayerRequest, context: Context
    ) -> AsyncIterator[lobby_pb2.WatchPlayerResponse]:
        with self._held(context):
            async for response in forward_stream(self._lobby.WatchPlayer, request, context):
                yield response

    async def WatchChat(
        self, request: lobby_pb2.WatchChatRequest, context: Context
    ) -> AsyncIterator[lobby_pb2.WatchChatResponse]:
        with self._held(context):
            async for response in forward_stream(self._lobby.WatchChat, request, context):
                yield response

    def _held(self, context: Context) -> contextlib.AbstractContextManager[None]:
        caller = caller_key(
            context.invocation_metadata(), context.peer(), self._trusted_proxies, self._proxy_token
        )
        return self._streams.held(caller)


class RoutesGateway:
    """RoutesService's methods that add policy: a game's routes, best or drawn, only for those
    who see its present board. Any other method of the service is forwarded to the routes
    service."""

    def __init__(self, routes: grpc.aio.Channel, spectators: SpectatorGate) -> None:
        service = routes_pb2.DESCRIPTOR.services_by_name["RoutesService"]
        self._optimize = passed_on(routes, service.methods_by_name["Optimize"])
        self._check_routes = passed_on(routes, service.methods_by_name["CheckRoutes"])
        self._spectators = spectators

    async def Optimize(self, request: routes_pb2.OptimizeRequest, context: Context) -> Relayed:
        if request.game_id:  # a game's present routes would show its present board
            await self._spectators.require_present(request.game_id)
        return await forward(self._optimize, request, context)

    async def CheckRoutes(
        self, request: routes_pb2.CheckRoutesRequest, context: Context
    ) -> Relayed:
        await self._spectators.require_present(request.game_id)
        return await forward(self._check_routes, request, context)


@dataclass(frozen=True)
class Served:
    """How the gateway serves one public service: a method `servicer` defines (it adds policy)
    wins; every other method is forwarded to the same method at `upstream`."""

    servicer: object = None
    upstream: grpc.aio.Channel | None = None


def serve_public_api(server: grpc.aio.Server, served: Mapping[str, Served]) -> list[str]:
    """Every service of the public API on `server`, each method built from its descriptor
    (`infra.forwarding.service_handlers`), so a method added to a public proto is served
    without a line here; a service or method that nothing serves stops the gateway at start.
    Returns the services' full names."""
    names = [service.full_name for service in public_services()]
    if missing := set(names) - set(served):
        raise LookupError(f"gateway: nothing serves {', '.join(sorted(missing))}")
    for service in public_services():
        how = served[service.full_name]
        add_service(server, service, how.servicer, how.upstream)
    return names


def connection_options(settings: GatewaySettings) -> list[tuple[str, int]]:
    """The gRPC server options that bound what a connection holds: an idle one is closed
    (GOAWAY) after SHIKOKU_GATEWAY_MAX_CONNECTION_IDLE_SECONDS without a call, one that never
    sends the HTTP/2 preface after SHIKOKU_GATEWAY_HANDSHAKE_TIMEOUT_SECONDS; at most
    SHIKOKU_GATEWAY_MAX_CONCURRENT_STREAMS calls at once on one connection (more wait in the
    client); keep-alive pings are welcome, with or without calls, at most every
    SHIKOKU_GATEWAY_KEEPALIVE_MIN_PING_SECONDS."""

    def milliseconds(seconds: float) -> int:
        return max(round(seconds * 1000), 1)

    return [
        ("grpc.max_connection_idle_ms", milliseconds(settings.max_connection_idle_seconds)),
        ("grpc.server_handshake_timeout_ms", milliseconds(settings.handshake_timeout_seconds)),
        ("grpc.max_concurrent_streams", settings.max_concurrent_streams),
        (
            "grpc.http2.min_ping_interval_without_data_ms",
            milliseconds(settings.keepalive_min_ping_seconds),
        ),
        ("grpc.http2.max_ping_strikes", MAX_PING_STRIKES),
        ("grpc.keepalive_permit_without_calls", 1),
    ]


@dataclass(frozen=True)
class Gateway:
    """The gateway composed from its settings: the public API's servicers, the interceptors
    every call goes through (rate limits first, then access), and what they follow: the API keys'
    revocations (`api_keys.follow_revocations`) and the lobby's grant changes
    (`authorization.follow_grant_changes`)."""

    served: Mapping[str, Served]
    admissions: list[Admission]
    api_keys: ApiKeys
    authorization: Authorization

    def register(self, server: grpc.aio.Server) -> Iterable[str]:
        return serve_public_api(server, self.served)


def build_gateway(
    settings: GatewaySettings,
    redis: Redis,
    lobby: grpc.aio.Channel,
    rules: grpc.aio.Channel,
    routes: grpc.aio.Channel,
) -> Gateway:
    """The gateway on `redis` (game streams, rate limits, API keys), in front of the channels
    to the services."""
    events = EventStore(redis, "game")
    spectators = SpectatorGate(events)
    limits = settings.limits
    streams = StreamQuota(settings.streams_per_caller)
    games = GameGateway(
        rules,
        events,
        spectators,
        streams,
        limits.trusted_proxies,
        limits.proxy_token,
    )
    lobby_gateway = LobbyGateway(lobby, streams, limits.trusted_proxies, limits.proxy_token)
    games.watch_metrics()
    routes_gateway = RoutesGateway(routes, spectators)
    served = {
        # The lobby serves the public LobbyService itself: every method is forwarded, its
        # streams within the stream quota.
        "shikoku.v1.LobbyService": Served(lobby_gateway, lobby),
        "shikoku.v1.GameService": Served(games),
        "shikoku.v1.RoutesService": Served(routes_gateway, routes),
        # The rules service answers from the very data it plays by.
        "shikoku.v1.TitleService": Served(upstream=rules),
    }
    # Rate limits first: a flood of bad keys or credentials must not reach the lobby (a
    # credential the lobby has not vouched for is charged to its API key's bucket). Both share
    # one key cache, so a key costs one Redis read per gateway every few seconds; revoked keys
    # are forgotten as soon as their revocation is announced.
    api_keys = ApiKeys(redis)
    authorization = Authorization(
        api_keys,
        internal_lobby_pb2_grpc.CredentialServiceStub(lobby),
        settings.grant_seconds,
        settings.grants_kept,
        settings.unknown_seconds,
        settings.unknown_kept,
        settings.grant_followed_seconds,
        redis,
    )
    rate_limit = RateLimit(TokenBuckets(redis, limits), api_keys, authorization.vouches_for)
    watch_cache(
        "gateway_grants", lambda: authorization.credentials_remembered, settings.grants_kept
    )
    watch_cache(
        "gateway_unknown_credentials",
        lambda: authorization.unknown_remembered,
        settings.unknown_kept,
    )
    watch_cache("gateway_api_keys", lambda: api_keys.remembered, KEYS_REMEMBERED)
    return Gateway(served, [rate_limit, authorization], api_keys, authorization)


async def main() -> None:
    settings = from_environment(GatewaySettings, GatewaySettings.NAME)
    observe_process(settings.NAME, settings.process.observability)
    raise_open_files_limit()  # every connection is a file: thousands of clients
    addresses, token = settings.process.addresses, settings.process.token
    redis = await connect_redis(settings.NAME, settings.redis.url)
    channels = [
        service_channel(addresses.lobby, token),
        service_channel(addresses.rules, token),
        service_channel(addresses.routes, token),
    ]
    gateway = build_gateway(settings, redis, *channels)
    followers = [
        asyncio.create_task(gateway.api_keys.follow_revocations()),
        asyncio.create_task(gateway.authorization.follow_grant_changes()),
    ]

    async def stop() -> None:
        for follower in followers:
            follower.cancel()
        for channel in channels:
            await channel.close(None)
        await redis.aclose()

    await serve(
        settings.NAME,
        settings.listen_address,
        gateway.register,
        on_stop=stop,
        observability=settings.process.observability,
        admissions=gateway.admissions,
        descriptors=public_descriptors(),
        options=connection_options(settings),
    )


if __name__ == "__main__":
    asyncio.run(main())
