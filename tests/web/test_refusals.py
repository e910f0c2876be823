"""What the web entrypoint refuses, over real HTTP: bodies over the size limit, malformed and
oversized input, calls without a valid key, and callers over their rate limit; each a Connect
error with the right HTTP status and our reason, never a 500."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from shikoku.v1 import lobby_pb2
from tests.e2e.api import System
from tests.e2e.launch import issue_api_key
from tests.web.wire import (
    Answer,
    api_headers,
    connect_json,
    connection,
    detail_types,
    error_info,
    grpc_web,
    post,
)

pytestmark = pytest.mark.e2e

LIMIT = 1024 * 1024
CREATE = "/shikoku.v1.LobbyService/CreateTable"


def json_body(conn: http.client.HTTPConnection, body: bytes, headers: dict[str, str]) -> Answer:
    return post(conn, CREATE, body, {**headers, "content-type": "application/json"})


def refused_with(answer: Answer, status: int, code: str, reason: str) -> dict[str, Any]:
    assert answer.status == status, answer.body[:500]
    assert answer.headers["content-type"] == "application/json"
    error = answer.json()
    assert error["code"] == code
    assert error_info(error)["reason"] == reason
    return dict(error)


def test_a_body_over_the_limit_is_refused_with_our_reason(web_api: System) -> None:
    conn = connection(web_api.web)
    headers = api_headers(web_api.api_key)
    padded = b'{"seatCount": 2}' + b" " * (LIMIT - 16)
    assert len(padded) == LIMIT
    accepted = json_body(conn, padded, headers)
    assert accepted.status == 200, accepted.body[:300]

    too_big = json_body(conn, padded + b" ", headers)
    error = refused_with(too_big, 429, "resource_exhausted", "REQUEST_TOO_LARGE")
    assert error_info(error)["metadata"] == {"limit": str(LIMIT)}

    # A new connection serves on: the refusal cost the server nothing lasting.
    again = connect_json(connection(web_api.web), "LobbyService/ListTables", {}, headers)
    assert again.status == 200


def test_a_grpc_web_body_over_the_limit_fails_with_a_grpc_status(web_api: System) -> None:
    request = lobby_pb2.CreateTableRequest(display_name="x" * LIMIT)
    answer = grpc_web(
        connection(web_api.web), "LobbyService/CreateTable", request, api_headers(web_api.api_key)
    )
    assert answer.status == 200
    assert answer.grpc_status == 8  # RESOURCE_EXHAUSTED
    assert "REQUEST_TOO_LARGE" in answer.rich_status().details[0].value.decode()


MALFORMED = [
    ("not json", b"seatCount=3", "INVALID_JSON"),
    ("not an object", b"[3]", "INVALID_JSON"),
    ("nested too deep", b"[" * 100_000 + b"]" * 100_000, "INVALID_JSON"),
    ("unknown field", b'{"seatCount": 3, "seatCont": 3}', "INVALID_FIELD"),
    ("wrong type", b'{"seatCount": "three"}', "INVALID_FIELD"),
    ("not utf-8", b'{"displayName": "\xff\xfe"}', "INVALID_JSON"),
]


@pytest.mark.parametrize(
    ("body", "reason"), [(b, r) for _, b, r in MALFORMED], ids=[name for name, _, _ in MALFORMED]
)
def test_a_malformed_json_body_is_invalid_argument(
    web_api: System, body: bytes, reason: str
) -> None:
    answer = json_body(connection(web_api.web), body, api_headers(web_api.api_key))
    error = refused_with(answer, 400, "invalid_argument", reason)
    assert "google.rpc.BadRequest" in detail_types(error)


def test_an_undecodable_binary_body_is_invalid_argument(web_api: System) -> None:
    headers = {**api_headers(web_api.api_key), "content-type": "application/proto"}
    answer = post(connection(web_api.web), CREATE, b"\xff\xff\xff\xff", headers)
    assert answer.status == 400
    assert answer.headers["content-type"] == "application/json"
    assert error_info(answer.json())["reason"] == "UNDECODABLE_REQUEST"


def test_an_oversized_id_is_invalid_argument_naming_the_field(web_api: System) -> None:
    conn = connection(web_api.web)
    headers = api_headers(web_api.api_key)
    for method, field in (
        ("LobbyService/GetTable", "table_id"),
        ("GameService/GetState", "game_id"),
    ):
        document = {field: "t-" + "x" * 20_000}
        error = refused_with(
            connect_json(conn, method, document, headers), 400, "invalid_argument", "FIELD_TOO_LONG"
        )
        violations = next(d for d in error["details"] if d["type"] == "google.rpc.BadRequest")
        assert violations["debug"]["fieldViolations"][0]["field"] == field


def test_an_oversized_or_garbled_credential_is_invalid_argument(web_api: System) -> None:
    conn = connection(web_api.web)
    long = api_headers(web_api.api_key, token="t-1~" + "x" * 5000)
    body = {"tableId": "t-1"}
    answer = connect_json(conn, "LobbyService/StartTable", body, long)
    error = refused_with(answer, 400, "invalid_argument", "HEADER_TOO_LONG")
    assert error_info(error)["metadata"]["header"] == "authorization"

    # Over the gateway's own limit on tokens, under ours: the gateway's reason.
    token = api_headers(web_api.api_key, token="t-1~" + "x" * 300)
    answer = connect_json(conn, "LobbyService/StartTable", body, token)
    refused_with(answer, 400, "invalid_argument", "FIELD_TOO_LONG")

    latin = {**api_headers(web_api.api_key), "authorization": "Bearer caf\xe9"}
    answer = connect_json(conn, "LobbyService/StartTable", body, latin)
    refused_with(answer, 400, "invalid_argument", "BAD_HEADER")


def test_a_call_without_a_valid_key_is_unauthenticated(web_api: System) -> None:
    conn = connection(web_api.web)
    body = {"seatCount": 3}
    missing = connect_json(conn, "LobbyService/CreateTable", body, api_headers())
    refused_with(missing, 401, "unauthenticated", "MISSING_API_KEY")
    invalid = connect_json(conn, "LobbyService/CreateTable", body, api_headers("k-nobody.secret"))
    refused_with(invalid, 401, "unauthenticated", "INVALID_API_KEY")
    unknown = connect_json(
        conn,
        "LobbyService/StartTable",
        {"tableId": "t-1"},
        api_headers(web_api.api_key, token="t-1~not-a-token"),
    )
    refused_with(unknown, 401, "unauthenticated", "INVALID_CREDENTIAL")


def from_address(web: str, source: str) -> http.client.HTTPConnection:
    """A connection from another loopback address: another browser, to the gateway."""
    host, _, port = web.rpartition(":")
    return http.client.HTTPConnection(host, int(port), timeout=15, source_address=(source, 0))


def test_a_browser_over_its_rate_limit_is_told_when_to_retry(web_api: System) -> None:
    key = issue_api_key(web_api.redis_url, "slow page", "--per-second", "0.05", "--burst", "2")
    browser = from_address(web_api.web, "127.0.0.41")
    # What the browser claims to forward for is not believed: its bucket is its address's.
    made_up = {**api_headers(key), "x-forwarded-for": "203.0.113.9"}
    statuses = [
        connect_json(browser, "LobbyService/ListTables", {}, made_up).status for _ in range(2)
    ]
    assert statuses == [200, 200]
    limited = connect_json(browser, "LobbyService/ListTables", {}, api_headers(key))
    error = refused_with(limited, 429, "resource_exhausted", "RATE_LIMITED")
    retry = next(d for d in error["details"] if d["type"] == "google.rpc.RetryInfo")
    delay = float(retry["debug"]["retryDelay"].rstrip("s"))
    assert 1 < delay <= 20
    assert int(limited.headers["retry-after"]) >= delay
    assert error_info(error)["metadata"] == {"limit_per_second": "0.05", "burst": "2"}

    # Another browser (another address) has a bucket of its own.
    other = from_address(web_api.web, "127.0.0.42")
    assert connect_json(other, "LobbyService/ListTables", {}, api_headers(key)).status == 200


def test_no_refusal_is_a_server_error(web_api: System) -> None:
    """Every case above, once more in one place: none of them may answer 5xx."""
    conn = connection(web_api.web)
    headers = api_headers(web_api.api_key)
    bodies = [body for _, body, _ in MALFORMED] + [json.dumps({"tableId": "x" * 50_000}).encode()]
    for body in bodies:
        answer = post(
            conn,
            "/shikoku.v1.LobbyService/GetTable",
            body,
            {**headers, "content-type": "application/json"},
        )
        assert answer.status < 500, answer.body[:300]
