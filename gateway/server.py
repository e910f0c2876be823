"""The gateway: the only public surface. Its interceptors check rate limits, API keys and
credentials (gateway/auth.py). Every public method is served from its service's descriptor
(`serve_public_api`): forwarded to the same method of the service behind, unless a servicer
here defines it to add policy (the game's methods, which also stream game events straight from
the event log, and Optimize)."""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass

import grpc

from gateway import metrics
from gateway.auth import current_grant
from gateway.caching import remember
from gateway.public_api import public_services
from gateway.rate_limit import Limits, caller_key
from gateway.reflection import public_descriptors
from gateway.spectating import SpectatorView
from gateway.spectator_gate import SpectatorGate
from gateway.stream_quota import StreamQuota
from gateway.watching import GameWatchers
from infra.config import Addresses, connect_redis, listen_address, service_channel
from infra.eventstore import EventStore, StoredEvent
from infra.forwarding import add_service, forward, relay_error
from infra.grpc_server import Context, serve
from infra.metrics import watch_cache
from infra.observability import observe_process
from infra.open_files import raise_open_files_limit
from kernel.rejection import Kind, Rejected, quoted
from services.rules.wire import event_to_proto
from shikoku.internal.v1 import lobby_pb2_grpc as internal_lobby_pb2_grpc
from shikoku.internal.v1 import rules_pb2, rules_pb2_grpc
from shikoku.v1 import (
    game_pb2,
    routes_pb2,
    routes_pb2_grpc,
)

STREAM_QUIET = 15.0
DEFAULT_HEARTBEAT_SECONDS = 15
MAX_HEARTBEAT_SECONDS = 60
EVENT_CACHE = 20_000  # recent events as sent, shared by all watchers
STATE_CACHE = 64  # states after recent actions, shared by all watchers of a game

# What a connection may hold and for how long (docs/operations.md, "Slow and idle clients").
DEFAULT_MAX_CONNECTION_IDLE_SECONDS = 120.0
DEFAULT_HANDSHAKE_TIMEOUT_SECONDS = 10.0
#: At least the web entrypoint's SHIKOKU_WEB_MAX_REQUESTS_IN_FLIGHT: its calls share one
#: connection to each gateway process.
DEFAULT_MAX_CONCURRENT_STREAMS = 4_000
DEFAULT_KEEPALIVE_MIN_PING_SECONDS = 10.0
#: Pings more often than the minimum a client may send before it is sent away (GOAWAY).
MAX_PING_STRIKES = 2


class GameGateway:
    """GameService: every method adds policy (the seat acting, the spectator's view), and the
    streams are read from the event log itself."""

    def __init__(
        self,
        rules: rules_pb2_grpc.RulesServiceAsyncStub,
        events: EventStore,
        spectators: SpectatorGate,
        streams: StreamQuota | None = None,
        trusted_proxies: frozenset[str] = frozenset(),
    ) -> None:
        self._rules = rules
        self._events = events
        self._spectators = spectators
        self._streams = streams or StreamQuota()
        self._trusted_proxies = trusted_proxies
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
    ) -> game_pb2.SubmitCommandResponse:
        submit = rules_pb2.SubmitRequest(
            game_id=request.game_id,
            seat=current_grant().seat,
            command=request.command,
            command_id=request.command_id,
        )
        return await forward(self._rules.Submit, submit, context)

    async def GetState(
        self, request: game_pb2.GetStateRequest, context: Context
    ) -> game_pb2.GameState:
        version = await self._spectators.visible_version(request.game_id, request.version)
        request = game_pb2.GetStateRequest(game_id=request.game_id, version=version)
        return await forward(self._rules.GetState, request, context)

    async def ListLegalActions(
        self, request: game_pb2.ListLegalActionsRequest, context: Context
    ) -> game_pb2.ListLegalActionsResponse:
        await self._spectators.require_present(request.game_id)
        return await forward(self._rules.ListLegalActions, request, context)

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
        caller = caller_key(context.invocation_metadata(), context.peer(), self._trusted_proxies)
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


class RoutesGateway:
    """RoutesService's one method that adds policy: a game's routes only for those who see its
    present board. Any other method of the service is forwarded to the routes service."""

    def __init__(
        self, routes: routes_pb2_grpc.RoutesServiceAsyncStub, spectators: SpectatorGate
    ) -> None:
        self._routes = routes
        self._spectators = spectators

    async def Optimize(
        self, request: routes_pb2.OptimizeRequest, context: Context
    ) -> routes_pb2.RouteSolution:
        if request.game_id:  # a game's present routes would show its present board
            await self._spectators.require_present(request.game_id)
        return await forward(self._routes.Optimize, request, context)


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


def connection_options() -> list[tuple[str, int]]:
    """The gRPC server options that bound what a connection holds: an idle one is closed
    (GOAWAY) after SHIKOKU_GATEWAY_MAX_CONNECTION_IDLE_SECONDS without a call, one that never
    sends the HTTP/2 preface after SHIKOKU_GATEWAY_HANDSHAKE_TIMEOUT_SECONDS; at most
    SHIKOKU_GATEWAY_MAX_CONCURRENT_STREAMS calls at once on one connection (more wait in the
    client); keep-alive pings are welcome, with or without calls, at most every
    SHIKOKU_GATEWAY_KEEPALIVE_MIN_PING_SECONDS."""

    def milliseconds(name: str, default: float) -> int:
        seconds = float(os.environ.get(f"SHIKOKU_GATEWAY_{name}", default))
        if not seconds > 0:
            raise SystemExit(f"gateway: SHIKOKU_GATEWAY_{name} must be a positive number")
        return max(round(seconds * 1000), 1)

    streams = int(
        os.environ.get("SHIKOKU_GATEWAY_MAX_CONCURRENT_STREAMS", DEFAULT_MAX_CONCURRENT_STREAMS)
    )
    if streams < 1:
        raise SystemExit("gateway: SHIKOKU_GATEWAY_MAX_CONCURRENT_STREAMS must be 1 or more")
    return [
        (
            "grpc.max_connection_idle_ms",
            milliseconds("MAX_CONNECTION_IDLE_SECONDS", DEFAULT_MAX_CONNECTION_IDLE_SECONDS),
        ),
        (
            "grpc.server_handshake_timeout_ms",
            milliseconds("HANDSHAKE_TIMEOUT_SECONDS", DEFAULT_HANDSHAKE_TIMEOUT_SECONDS),
        ),
        ("grpc.max_concurrent_streams", streams),
        (
            "grpc.http2.min_ping_interval_without_data_ms",
            milliseconds("KEEPALIVE_MIN_PING_SECONDS", DEFAULT_KEEPALIVE_MIN_PING_SECONDS),
        ),
        ("grpc.http2.max_ping_strikes", MAX_PING_STRIKES),
        ("grpc.keepalive_permit_without_calls", 1),
    ]


async def main() -> None:
    from gateway.api_keys import KEYS_REMEMBERED, ApiKeys
    from gateway.auth import GRANTS_KEPT, UNKNOWN_KEPT, Authorization
    from gateway.rate_limit import RateLimit, TokenBuckets

    observe_process("gateway")
    raise_open_files_limit()  # every connection is a file: thousands of clients
    options = connection_options()
    addresses = Addresses.from_env()
    redis = await connect_redis("gateway")
    lobby_channel = service_channel(addresses.lobby)
    rules_channel = service_channel(addresses.rules)
    routes_channel = service_channel(addresses.routes)

    limits = Limits.from_env()

    def register(server: grpc.aio.Server) -> Iterable[str]:
        events = EventStore(redis, "game")
        spectators = SpectatorGate(events)
        games = GameGateway(
            rules_pb2_grpc.RulesServiceStub(rules_channel),
            events,
            spectators,
            StreamQuota.from_env(),
            limits.trusted_proxies,
        )
        games.watch_metrics()
        routes = RoutesGateway(routes_pb2_grpc.RoutesServiceStub(routes_channel), spectators)
        return serve_public_api(
            server,
            {
                # The lobby serves the public LobbyService itself: every method is forwarded.
                "shikoku.v1.LobbyService": Served(upstream=lobby_channel),
                "shikoku.v1.GameService": Served(games),
                "shikoku.v1.RoutesService": Served(routes, routes_channel),
                # The rules service answers from the very data it plays by.
                "shikoku.v1.TitleService": Served(upstream=rules_channel),
            },
        )

    async def stop() -> None:
        revocations.cancel()
        for channel in (lobby_channel, rules_channel, routes_channel):
            await channel.close(None)
        await redis.aclose()

    # Rate limits first: a flood of bad keys or credentials must not reach the lobby (a
    # credential the lobby has not vouched for is charged to its API key's bucket). Both share
    # one key cache, so a key costs one Redis read per gateway every few seconds; revoked keys
    # are forgotten as soon as their revocation is announced.
    api_keys = ApiKeys(redis)
    revocations = asyncio.create_task(api_keys.follow_revocations())
    authorization = Authorization(
        api_keys, internal_lobby_pb2_grpc.CredentialServiceStub(lobby_channel)
    )
    rate_limit = RateLimit(TokenBuckets(redis, limits), api_keys, authorization.vouches_for)
    watch_cache("gateway_grants", lambda: authorization.credentials_remembered, GRANTS_KEPT)
    watch_cache(
        "gateway_unknown_credentials", lambda: authorization.unknown_remembered, UNKNOWN_KEPT
    )
    watch_cache("gateway_api_keys", lambda: api_keys.remembered, KEYS_REMEMBERED)
    await serve(
        "gateway",
        listen_address("gateway"),
        register,
        on_stop=stop,
        interceptors=[rate_limit, authorization],
        descriptors=public_descriptors(),
        options=options,
    )


if __name__ == "__main__":
    asyncio.run(main())
