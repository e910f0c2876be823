"""Request bodies into protobuf messages and messages into JSON, by the protobuf JSON mapping."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from gateway.web.protocol import HttpError


def parse(body: bytes, message_type: type[Message]) -> Message:
    """The request a body describes; an empty body is the empty request."""
    message = message_type()
    if not body.strip():
        return message
    try:
        document: Any = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise HttpError(
            HTTPStatus.BAD_REQUEST, f"the body is not JSON: {error}", "INVALID_JSON"
        ) from None
    if not isinstance(document, dict):
        raise HttpError(HTTPStatus.BAD_REQUEST, "the body must be a JSON object", "INVALID_JSON")
    try:
        json_format.ParseDict(document, message)
    except json_format.ParseError as error:
        raise HttpError(
            HTTPStatus.BAD_REQUEST,
            f"the body does not fit {message.DESCRIPTOR.full_name}: {error}",
            "INVALID_FIELD",
        ) from None
    return message


def to_json(message: Message) -> bytes:
    """One line of JSON (no newline inside: strings escape theirs)."""
    return dumps(json_format.MessageToDict(message))


def dumps(document: Any) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode()
