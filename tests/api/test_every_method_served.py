"""Every method of the public API, as its descriptors list them (`gateway.public_api`), is served
on both public surfaces, the gRPC gateway and the web entrypoint (Connect JSON), by what stands
behind them. Each is called on the whole system (`shikoku run`, real processes) with a resource
and a credential its access rule admits, so the call passes the gateway's checks and reaches
the method itself: it must be answered, or refused by the method, never UNIMPLEMENTED (nothing
serves it, here or behind) nor 404. A method added to a proto is a new case here, served by
the forwarding built from the descriptors or failing until something serves it."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from gateway import auth
from gateway.auth import RULES
from gateway.public_api import public_methods
from shikoku.v1 import lobby_pb2
from shikoku_sdk.errors import ShikokuError
from tests.e2e.api import Client, System, started_table
from tests.e2e.api import auth as bearer
from tests.e2e.launch import start_system, stop_system
from tests.web.wire import END_STREAM, api_headers, connection, envelope, read_frame

pytestmark = pytest.mark.e2e

Outcome = tuple[str, str]  # (gRPC code in lower case, ErrorInfo reason); ("ok", "") answered
ANSWERED: Outcome = ("ok", "")


@pytest.fixture(scope="module")
def system(redis_url: str) -> Iterator[System]:
    system = start_system(redis_url, SHIKOKU_RATE_PER_SECOND="10000", SHIKOKU_RATE_BURST="10000")
    yield system
    stop_system(system)


@pytest.fixture
def client(system: System) -> Iterator[Client]:
    client = Client(system)
    yield client
    client.channel.close()
    client.redis.close()


def registered(client: Client, name: str, host: bool = False) -> lobby_pb2.RegisterPlayerResponse:
    role = lobby_pb2.ROLE_HOST if host else lobby_pb2.ROLE_UNSPECIFIED
    answer: lobby_pb2.RegisterPlayerResponse = client.lobby.RegisterPlayer(
        lobby_pb2.RegisterPlayerRequest(display_name=name, role=role)
    )
    return answer


def admitted(client: Client, path: str) -> tuple[Message, str]:
    """A request to `path` naming a fresh resource, and a credential its access rule admits on
    it (fresh, so that a call that spends it, such as a revocation, spoils no other case)."""
    rule = RULES[path]
    request = public_methods()[path].request()
    if rule.permission is None:
        return request, ""
    if rule.permission in (auth.SIGNED_IN, auth.REGISTERED_HOST):
        return request, registered(client, "host", host=True).credential
    if rule.permission == auth.HOST_TOURNAMENT:
        host = registered(client, "director", host=True)
        players = [registered(client, f"player {n}").player_id for n in range(2)]
        tournament = client.lobby.CreateTournament(
            lobby_pb2.CreateTournamentRequest(name="cup", player_ids=players, table_size=2),
            metadata=bearer(host.credential),
        )
        setattr(request, rule.resource, tournament.tournament_id)
        return request, host.credential
    game, seats, host_token = started_table(client)  # a game's id is its table's
    setattr(request, rule.resource, game)
    if path.endswith("/WatchChat"):  # a chat with a message answers at once, not at a heartbeat
        client.lobby.PostMessage(
            lobby_pb2.PostMessageRequest(table_id=game, text="hello"), metadata=bearer(seats[0])
        )
    if rule.permission == auth.HOST_TABLE:
        return request, host_token
    if rule.permission in (auth.HOLD_SEAT, auth.ACT_IN_GAME, auth.WATCH_GAME):
        return request, seats[0]
    raise AssertionError(f"{path}: this test knows no caller that permission {rule} admits")


def over_grpc(system: System, path: str, request: Message, token: str) -> Outcome:
    method = public_methods()[path]
    metadata: tuple[tuple[str, str], ...] = (("x-api-key", system.api_key),)
    if token:
        metadata += (("authorization", f"Bearer {token}"),)
    serializers = (method.request.SerializeToString, method.response.FromString)
    with grpc.insecure_channel(system.gateway) as channel:
        try:
            if method.streaming:
                stream: Any = channel.unary_stream(path, *serializers)(
                    request, metadata=metadata, timeout=10
                )
                next(stream)
                stream.cancel()
            else:
                channel.unary_unary(path, *serializers)(request, metadata=metadata, timeout=10)
        except grpc.RpcError as error:
            return error.code().name.lower(), ShikokuError.from_rpc_error(error).reason
    return ANSWERED


def _connect_outcome(error: dict[str, Any]) -> Outcome:
    reasons = [d["debug"]["reason"] for d in error.get("details", []) if "reason" in d["debug"]]
    return error["code"], reasons[0] if reasons else ""


def over_web(system: System, path: str, request: Message, token: str) -> Outcome:
    method = public_methods()[path]
    body = json.dumps(json_format.MessageToDict(request)).encode()
    headers = api_headers(system.api_key, token=token)
    conn = connection(system.web)
    try:
        if method.streaming:
            headers["content-type"] = "application/connect+json"
            conn.request("POST", path, body=envelope(body), headers=headers)
        else:
            headers["content-type"] = "application/json"
            conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        if (
            method.streaming and response.status == 200
        ):  # the first message, or the end of the stream with its error
            flags, payload = read_frame(response)
            return (
                _connect_outcome(json.loads(payload)["error"]) if flags & END_STREAM else ANSWERED
            )
        answer = response.read()
        if response.status == 200:
            return ANSWERED
        try:  # a Connect error (NOT_FOUND is 404 too), or an HTTP 404: no such path here
            return _connect_outcome(json.loads(answer))
        except ValueError:
            return f"http_{response.status}", ""
    except http.client.HTTPException as error:
        raise AssertionError(f"{path}: {error!r}") from error
    finally:
        conn.close()


#: What the method itself may answer to a bare request: its own refusals. Codes that say the
#: call never reached a method that serves it (or never passed the gateway's checks) fail.
NOT_SERVED = {"unimplemented", "http_404"}
NOT_ADMITTED = {"unauthenticated", "permission_denied"}


@pytest.mark.parametrize("surface", ["grpc", "web"])
@pytest.mark.parametrize("path", sorted(public_methods()))
def test_every_public_method_is_served_on_both_surfaces(
    system: System, client: Client, path: str, surface: str
) -> None:
    request, token = admitted(client, path)
    call = over_grpc if surface == "grpc" else over_web
    code, reason = call(system, path, request, token)
    assert code not in NOT_SERVED, f"{path} is not served over {surface}: {code} {reason}"
    assert code not in NOT_ADMITTED, f"{path} over {surface} did not reach the method: {reason}"
