"""The message encodings the web entrypoint speaks (Connect's `json` and `proto`, gRPC-Web's
`proto`), on the google.protobuf classes the gRPC stubs use. A body that is no request of the
method is refused as INVALID_ARGUMENT with our reason and the field it names, never as an
unexplained failure."""

from __future__ import annotations

import json
from typing import Any, TypeVar

import grpc
from connectrpc.codec import Codec
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message

from gateway.web.errors import refusal

M = TypeVar("M", bound=Message)

INVALID = grpc.StatusCode.INVALID_ARGUMENT


class JsonCodec(Codec[Message, Message]):
    """The protobuf JSON mapping. Unknown fields are refused rather than dropped, so that a
    misspelt field name is reported instead of silently sending the default. An empty body is
    the empty request."""

    def name(self) -> str:
        return "json"

    def encode(self, message: Message) -> bytes:
        return json.dumps(json_format.MessageToDict(message), separators=(",", ":")).encode()

    def decode(self, data: bytes | bytearray, message_class: type[M]) -> M:
        message = message_class()
        if not bytes(data).strip():
            return message
        try:
            document: Any = json.loads(data)
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            raise refusal(
                INVALID, "INVALID_JSON", f"the body is not JSON: {error}", field=""
            ) from None
        if not isinstance(document, dict):
            raise refusal(INVALID, "INVALID_JSON", "the body must be a JSON object", field="")
        try:
            json_format.ParseDict(document, message)
        except (json_format.ParseError, ValueError, TypeError, RecursionError) as error:
            name = message.DESCRIPTOR.full_name
            raise refusal(
                INVALID, "INVALID_FIELD", f"the body does not fit {name}: {error}", field=""
            ) from None
        return message


class BinaryCodec(Codec[Message, Message]):
    """The protobuf binary encoding."""

    def name(self) -> str:
        return "proto"

    def encode(self, message: Message) -> bytes:
        return message.SerializeToString()

    def decode(self, data: bytes | bytearray, message_class: type[M]) -> M:
        try:
            return message_class.FromString(bytes(data))
        except (DecodeError, ValueError, TypeError, RecursionError):
            raise refusal(
                INVALID,
                "UNDECODABLE_REQUEST",
                "the request is not a valid message of this method's type",
                field="",
            ) from None


def codecs() -> list[Codec[Message, Message]]:
    return [BinaryCodec(), JsonCodec()]
