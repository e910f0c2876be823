"""Requests checked before any handler sees them: bytes that are no message of the method's
request type, and strings over their documented length, are refused as INVALID_ARGUMENT with a
BadRequest naming the field, in every service.

A string's length is held both in characters and in bytes of UTF-8: a handler's refusal may name
the value it was given, and a value of 1,000 four-byte characters, repeated in an error's
`grpc-message` (percent-encoded, three bytes a byte) and twice in its details, would be over
gRPC's 8 KiB of trailing metadata. Under these limits one value repeated whole in a message, the
BadRequest's description and the ErrorInfo metadata takes at most 7,000 bytes of it (an id
1,792), even before `kernel.rejection.quoted` shortens it.

gRPC decodes a request before any interceptor runs, and a message it cannot decode ends the call
as UNKNOWN with nothing said; so the call chain (`infra.call_chain`) takes the bytes as they
came and decodes them itself, with `decoded`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

from kernel.rejection import Kind, Rejected

#: Longest id (any string field named `*_id`, a token or a credential) a request may carry,
#: in characters and in bytes of UTF-8.
MAX_ID_CHARS = 128
MAX_ID_BYTES = 256
#: Longest of any other string field (names, free text), in characters and in bytes: past
#: ASCII, the bytes are what binds (1,000 bytes are 500 two-byte or 333 three-byte characters).
MAX_TEXT_CHARS = 1_000
MAX_TEXT_BYTES = 1_000
ID_SUFFIXES = ("_id", "token", "credential")

Decode = Callable[[bytes], Any]


def limits(field: FieldDescriptor) -> tuple[int, int]:
    """The most characters and the most bytes a string `field` may hold."""
    if field.name.endswith(ID_SUFFIXES):
        return MAX_ID_CHARS, MAX_ID_BYTES
    return MAX_TEXT_CHARS, MAX_TEXT_BYTES


def too_long(name: str, field: FieldDescriptor, text: str) -> Rejected | None:
    """`text` as the value of `field` (called `name` in the request), refused if it is over
    either of the field's limits; the refusal says which limit and in which unit."""
    max_chars, max_bytes = limits(field)
    if len(text) > max_chars:
        limit, unit = max_chars, "characters"
    elif len(text) > max_bytes // 4 and len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        limit, unit = max_bytes, "bytes"
    else:
        return None
    return Rejected(
        "FIELD_TOO_LONG",
        f"{name} is at most {limit} {unit}",
        Kind.INVALID_ARGUMENT,
        {"field": name, "limit": limit, "unit": unit},
    )


def oversized(message: Message, prefix: str = "") -> Rejected | None:
    """The first string field of `message` (nested messages, lists and maps included) longer
    than its limits, as a refusal naming it."""
    for field, value in message.ListFields():
        name = f"{prefix}{field.name}"
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            if (found := _oversized_map(name, entry, value)) is not None:
                return found
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            children = value if field.is_repeated else [value]
            for index, child in enumerate(children):
                where = f"{name}[{index}]." if field.is_repeated else f"{name}."
                if (found := oversized(child, where)) is not None:
                    return found
        elif field.type == FieldDescriptor.TYPE_STRING:
            for text in value if field.is_repeated else [value]:
                if (found := too_long(name, field, text)) is not None:
                    return found
    return None


def _oversized_map(name: str, entry: Descriptor, entries: Any) -> Rejected | None:
    key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
    for item_key, item in entries.items():
        found = too_long(f"{name}.key", key, item_key) if isinstance(item_key, str) else None
        if found is None and isinstance(item, str):
            found = too_long(f"{name}.value", value, item)
        elif found is None and isinstance(item, Message):
            found = oversized(item, f"{name}.value.")
        if found is not None:
            return found
    return None


def decoded(raw: bytes, decode: Decode) -> Any:
    try:
        message = decode(raw)
    except (DecodeError, ValueError, TypeError):
        raise Rejected(
            "UNDECODABLE_REQUEST",
            "the request is not a valid message of this method's type",
            Kind.INVALID_ARGUMENT,
            {"field": ""},
        ) from None
    if isinstance(message, Message) and (refusal := oversized(message)) is not None:
        raise refusal
    return message
