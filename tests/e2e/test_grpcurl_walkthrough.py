"""examples/grpcurl.md, run: every grpcurl call in it is read from the document (its method,
headers and JSON body, as the shell would pass them) and made against the real gateway the way
grpcurl makes it (the JSON mapping, over gRPC), with the walk-through's shell variables set from
the answers before, as its reader would. Keeps the walk-through true without a grpcurl binary."""

from __future__ import annotations

import re
import shlex
import uuid
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from gateway.public_api import public_methods
from tests.e2e.api import System

pytestmark = [pytest.mark.e2e, pytest.mark.client]

WALKTHROUGH = Path(__file__).resolve().parents[2] / "examples" / "grpcurl.md"


@dataclass
class Call:
    method: str  # shikoku.v1.LobbyService/CreateTable
    headers: list[tuple[str, str]]
    body: str


def grpcurl_calls(text: str) -> list[Call]:
    """The grpcurl calls with a request body, from the document's sh blocks, in order."""
    calls = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.split(" #", 1)[0].strip()
            if not line.startswith("grpcurl") or " -d " not in line:
                continue
            words = shlex.split(line.replace("$(uuidgen)", "UUID"))
            headers = [
                (name.strip().lower(), value.strip())
                for flag, header in pairwise(words)
                if flag == "-H"
                for name, _, value in [header.partition(":")]
            ]
            body = words[words.index("-d") + 1]
            calls.append(Call(words[-1], headers, body))
    return calls


class Reader:
    """Someone following the walk-through: the shell variables it tells them to set."""

    def __init__(self, system: System) -> None:
        self.variables = {"KEY": system.api_key, "GW": system.gateway}
        self.channel = grpc.insecure_channel(system.gateway)
        self.methods = public_methods()

    def fill(self, text: str, name: str = "") -> str:
        text = text.replace("UUID", str(uuid.uuid4())).replace("$name", name)
        return re.sub(r"\$([A-Z0-9]+)", lambda found: self.variables[found.group(1)], text)

    def call(self, call: Call, name: str = "") -> list[dict[str, Any]]:
        """The call's answers (one for a unary call; the first few of a stream)."""
        method = self.methods[f"/{call.method}"]
        request = json_format.Parse(self.fill(call.body, name), method.request())
        metadata = tuple((key, self.fill(value)) for key, value in call.headers)
        codec = (method.request.SerializeToString, method.response.FromString)
        if not method.streaming:
            unary = self.channel.unary_unary(method.path, *codec)
            return [json_format.MessageToDict(unary(request, metadata=metadata, timeout=10))]
        stream: Any = self.channel.unary_stream(method.path, *codec)(
            request, metadata=metadata, timeout=10
        )
        answers = [json_format.MessageToDict(next(stream)) for _ in range(3)]
        stream.cancel()
        return answers


def test_the_grpcurl_walkthrough_works_as_written(system: System) -> None:
    calls = grpcurl_calls(WALKTHROUGH.read_text())
    methods = [call.method.rsplit("/", 1)[1] for call in calls]
    assert methods == [
        "RegisterPlayer",
        "CreateTable",
        "JoinTable",
        "StartTable",
        "GetState",
        "ListLegalActions",
        "SubmitCommand",
        "WatchGame",
    ]
    reader = Reader(system)
    register, create, join, start, state, legal, submit, watch = calls
    assert reader.call(register)[0]["credential"]
    (created,) = reader.call(create)
    reader.variables.update(TABLE=created["table"]["tableId"], HOST=created["hostToken"])
    for name in ("Ada", "Brunel", "Clara"):
        (joined,) = reader.call(join, name)
        reader.variables[f"SEAT{joined['seat']}"] = joined["seatToken"]
    (started,) = reader.call(start)
    reader.variables["GAME"] = started["gameId"]
    (read,) = reader.call(state)
    assert read["gameId"] == started["gameId"] and read["actingSeats"]
    (actions,) = reader.call(legal)
    acting = actions["actions"][0]["seat"]
    # "With the token of the seat that must act": the walk-through's SEAT2 stands for it.
    reader.variables["SEAT2"] = reader.variables[f"SEAT{acting}"]
    (answer,) = reader.call(submit)
    assert answer["events"][0]["type"] == "Passed"
    watched = reader.call(watch)
    assert [w["event"]["version"] for w in watched] == ["1", "2", "3"]
    reader.channel.close()
