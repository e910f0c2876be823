"""Long values of wide characters in errors, in process: the request decoder counts a string's
bytes as well as its characters, an error quotes at most a short prefix of what it was sent, and
a refusal that would repeat a long value whole is still cut to fit gRPC's 8 KiB of trailing
metadata, over a real server and client on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

import grpc
import pytest
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from infra.call_chain import FailuresAsStatus
from infra.grpc_errors import DOMAIN, Metadata, reason_in, to_status
from infra.requests import (
    MAX_ID_BYTES,
    MAX_ID_CHARS,
    MAX_TEXT_BYTES,
    MAX_TEXT_CHARS,
    decoded,
)
from kernel.rejection import MAX_DETAIL_BYTES, MAX_MESSAGE_BYTES, Kind, Rejected, bounded, quoted
from shikoku.v1 import game_pb2, lobby_pb2, title_pb2, title_pb2_grpc
from shikoku_dev.redis_server import free_port

#: A character of each UTF-8 width.
WIDE = {1: "a", 2: "é", 3: "あ", 4: "𝄞"}
#: gRPC's default limit on a call's metadata (grpc.max_metadata_size).
METADATA_LIMIT = 8 * 1024


def refusal(message: Any) -> Rejected | None:
    try:
        decoded(message.SerializeToString(), type(message).FromString)
    except Rejected as refused:
        return refused
    return None


@pytest.mark.parametrize("width", sorted(WIDE))
def test_text_is_held_to_its_bytes_as_well_as_its_characters(width: int) -> None:
    char = WIDE[width]
    fits = min(MAX_TEXT_CHARS, MAX_TEXT_BYTES // width)
    assert refusal(title_pb2.GetTitleRequest(title=char * fits)) is None
    refused = refusal(title_pb2.GetTitleRequest(title=char * (fits + 1)))
    assert refused is not None and refused.reason == "FIELD_TOO_LONG"
    unit = "characters" if fits == MAX_TEXT_CHARS else "bytes"
    limit = MAX_TEXT_CHARS if unit == "characters" else MAX_TEXT_BYTES
    assert refused.details == {"field": "title", "limit": str(limit), "unit": unit}
    assert refused.message == f"title is at most {limit} {unit}"


@pytest.mark.parametrize("width", sorted(WIDE))
def test_ids_nested_in_oneofs_are_held_to_their_bytes(width: int) -> None:
    char = WIDE[width]
    fits = min(MAX_ID_CHARS, MAX_ID_BYTES // width)

    def submit(command_id: str) -> game_pb2.SubmitCommandRequest:
        exchange = game_pb2.ExchangePrivate(company="SR")
        return game_pb2.SubmitCommandRequest(
            game_id="t-1",
            command_id=command_id,
            command=game_pb2.Command(exchange_private=exchange),
        )

    assert refusal(submit(char * fits)) is None
    refused = refusal(submit(char * (fits + 1)))
    assert refused is not None and refused.details["field"] == "command_id"
    nested = lobby_pb2.CreateTableRequest(
        options=lobby_pb2.TableOptions(rules_profile=WIDE[4] * (MAX_TEXT_BYTES // 4 + 1))
    )
    found = refusal(nested)
    assert found is not None
    assert found.details == {
        "field": "options.rules_profile",
        "limit": str(MAX_TEXT_BYTES),
        "unit": "bytes",
    }


@pytest.mark.parametrize("width", sorted(WIDE))
def test_quoted_keeps_a_short_prefix_cut_between_characters(width: int) -> None:
    char = WIDE[width]
    assert quoted(char * 40) == char * 40
    assert quoted(char * 41) == char * 40 + "…"
    assert quoted(char * 5_000) == char * 40 + "…"
    assert quoted(7) == "7"


@pytest.mark.parametrize("width", sorted(WIDE))
def test_bounded_never_cuts_inside_a_character(width: int) -> None:
    text = WIDE[width] * 300
    for most in range(4, 64):
        cut = bounded(text, most)
        assert len(cut.encode()) <= most
        assert cut.endswith("…") and set(cut[:-1]) <= {WIDE[width]}
        assert len(cut.encode()) > most - width - 3  # no more cut than one character needs
    assert bounded("short", 10) == "short"
    assert bounded("\ud800x", 10) == "?x"  # a lone surrogate, which protobuf would refuse


def grpc_message_bytes(message: str) -> int:
    """The size of `message` in `grpc-message`, percent-encoded as gRPC sends it."""
    return sum(1 if 0x20 <= byte <= 0x7E and byte != 0x25 else 3 for byte in message.encode())


def trailer_bytes(status: grpc.Status) -> int:
    """The HPACK size of a status's trailers (name + value + 32 each), as gRPC counts them."""
    entries = [("grpc-status", "5"), ("grpc-message", "x" * grpc_message_bytes(status.details))]
    for key, value in status.trailing_metadata:
        size = len(value) * 4 // 3 + 4 if isinstance(value, bytes) else len(value)
        entries.append((key, "x" * size))
    return sum(len(key) + len(value) + 32 for key, value in entries)


@pytest.mark.parametrize("width", sorted(WIDE))
def test_a_refusal_repeating_a_long_value_whole_still_fits_the_metadata_limit(width: int) -> None:
    value = WIDE[width] * 5_000
    rejection = Rejected(
        "UNKNOWN_TITLE",
        f"there is no title {value!r}",
        Kind.INVALID_ARGUMENT,
        {"field": "title", "title": value},
    )
    status = to_status(rejection)
    assert trailer_bytes(status) < METADATA_LIMIT / 2
    rich = status_pb2.Status.FromString(status.trailing_metadata[0][1])
    assert len(rich.message.encode()) <= MAX_MESSAGE_BYTES
    assert rich.message.startswith("there is no title '" + WIDE[width])
    assert rich.message.endswith("…")
    assert len(rejection.details["title"].encode()) <= MAX_DETAIL_BYTES


@pytest.mark.parametrize("width", sorted(WIDE))
@pytest.mark.parametrize(
    ("field", "max_chars", "max_bytes"),
    [("title", MAX_TEXT_CHARS, MAX_TEXT_BYTES), ("game_id", MAX_ID_CHARS, MAX_ID_BYTES)],
)
def test_the_byte_limits_alone_keep_a_whole_echo_under_the_metadata_limit(
    width: int, field: str, max_chars: int, max_bytes: int
) -> None:
    """Without `quoted` and without the cut: the longest value the decoder lets through,
    repeated whole in the message, the BadRequest's description and the ErrorInfo metadata."""
    value = WIDE[width] * min(max_chars, max_bytes // width)
    message = f"there is no {field} {value!r}"
    info = error_details_pb2.ErrorInfo(
        reason="UNKNOWN_" + field.upper(), domain=DOMAIN, metadata={"field": field, field: value}
    )
    violation = error_details_pb2.BadRequest.FieldViolation(
        field=field, description=message, reason=info.reason
    )
    status = status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=message)
    status.details.add().Pack(info)
    status.details.add().Pack(error_details_pb2.BadRequest(field_violations=[violation]))
    assert trailer_bytes(rpc_status.to_status(status)) < METADATA_LIMIT


class Echoing(title_pb2_grpc.TitleServiceServicer):
    """A handler that forgets to quote: it repeats the title whole, in its message and
    metadata."""

    async def GetTitle(self, request: title_pb2.GetTitleRequest, context: Any) -> title_pb2.Title:
        raise Rejected(
            "UNKNOWN_TITLE",
            f"there is no title {request.title!r}, nor {request.title!r}",
            Kind.NOT_FOUND,
            {"field": "title", "title": request.title, "again": request.title},
        )


@pytest.fixture
async def echoing_server() -> AsyncIterator[str]:
    server = grpc.aio.server(interceptors=[FailuresAsStatus()])
    title_pb2_grpc.add_TitleServiceServicer_to_server(Echoing(), server)
    address = f"127.0.0.1:{free_port()}"
    server.add_insecure_port(address)
    await server.start()
    yield address
    await server.stop(0)


@pytest.mark.parametrize("width", sorted(WIDE))
async def test_an_unquoted_echo_reaches_the_client_as_the_refusal_it_is(
    echoing_server: str, width: int
) -> None:
    title = WIDE[width] * min(MAX_TEXT_CHARS, MAX_TEXT_BYTES // width)
    async with grpc.aio.insecure_channel(echoing_server) as channel:
        stub = title_pb2_grpc.TitleServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.GetTitle(title_pb2.GetTitleRequest(title=title))
    error = raised.value
    assert error.code() == grpc.StatusCode.NOT_FOUND, error.details()
    assert reason_in(cast(Metadata, error.trailing_metadata())) == "UNKNOWN_TITLE"
    assert len((error.details() or "").encode()) <= MAX_MESSAGE_BYTES
