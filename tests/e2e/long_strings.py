"""The long-characters tier of the fuzzing: every string field of every public request message
(found by walking the descriptors: nested messages, repeated fields and oneof members alike),
sent at its limits in characters of each UTF-8 width, in a request otherwise as real as we can
make it (a started game, a full open table, a registered host and a tournament, with the
credential its method asks for), so that the value reaches the handlers that might repeat it.

The limits are the request decoder's (infra/requests.py): for each width, the longest value that
fits both the character and the byte limit, and the documented character limit; with the full
product (`FULL`, `make soak`) one character more than each as well. In `make test` every field
meets every width at both; the fields where a repeated value once broke the gateway
(`ALWAYS_FULL`) get the full product there too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from gateway import auth as access
from gateway.auth import RULES
from gateway.public_api import public_services
from infra.requests import limits
from shikoku.v1 import lobby_pb2
from tests.e2e.api import Client, auth, open_table, started_table

#: A character of each UTF-8 width: Latin, Latin-1, kana, and U+1D11E beyond the BMP.
WIDE = {1: "a", 2: "é", 3: "あ", 4: "𝄞"}
FULL = int(os.environ.get("SHIKOKU_FUZZ_EXAMPLES", "40")) >= 100
#: The fields found failing from outside (issue 23): the full product even in `make test`.
ALWAYS_FULL = {
    ("GetTitle", "title"),
    ("CreateTable", "options.rules_profile"),
    ("Optimize", "corporation"),
    ("SubmitCommand", "command.exchange_private.company"),
}
#: The most bytes of an error's message a client may be sent.
MAX_ERROR_MESSAGE_BYTES = 1024


@dataclass(frozen=True)
class StringField:
    method: MethodDescriptor
    path: tuple[FieldDescriptor, ...]  # from the request's own field down to the string

    @property
    def name(self) -> str:
        return ".".join(field.name for field in self.path)

    @property
    def limits(self) -> tuple[int, int]:
        return limits(self.path[-1])


@dataclass(frozen=True)
class Case:
    field: StringField
    width: int
    length: int

    @property
    def value(self) -> str:
        return WIDE[self.width] * self.length

    @property
    def id(self) -> str:
        return f"{self.field.method.name}.{self.field.name}-{self.width}B-{self.length}"


def string_fields(
    method: MethodDescriptor,
    descriptor: Descriptor | None = None,
    path: tuple[FieldDescriptor, ...] = (),
) -> Iterator[StringField]:
    """Every string field reachable from the method's request, once per path (a message type
    already on the path is not entered again)."""
    descriptor = descriptor or method.input_type
    for field in descriptor.fields:
        nested = field.message_type
        if nested is not None and nested.GetOptions().map_entry:
            kinds = {nested.fields_by_name[k].type for k in ("key", "value")}
            assert FieldDescriptor.TYPE_STRING not in kinds, f"a string map: {field.full_name}"
            assert FieldDescriptor.TYPE_MESSAGE not in kinds, f"a message map: {field.full_name}"
        elif nested is not None:
            if nested not in {f.message_type for f in path} and nested != method.input_type:
                yield from string_fields(method, nested, (*path, field))
        elif field.type == FieldDescriptor.TYPE_STRING:
            yield StringField(method, (*path, field))


def every_string_field() -> list[StringField]:
    return [
        found
        for service in public_services()
        for method in service.methods
        for found in string_fields(method)
    ]


def lengths(field: StringField, width: int, full: bool) -> list[int]:
    max_chars, max_bytes = field.limits
    fits = min(max_chars, max_bytes // width)
    chosen = {fits, max_chars}
    if full:
        chosen |= {fits + 1, max_chars + 1}
    return sorted(chosen)


def cases_of(field: StringField, full: bool = FULL) -> list[Case]:
    """The field's cases: every width, at the lengths `lengths` gives."""
    full = full or (field.method.name, field.name) in ALWAYS_FULL
    return [Case(field, width, length) for width in WIDE for length in lengths(field, width, full)]


def cases(full: bool = FULL) -> list[Case]:
    return [case for field in every_string_field() for case in cases_of(field, full)]


#: Values of a request's other fields that get it past the checks before its strings'.
PLAUSIBLE: dict[str, object] = {
    "seat_count": 3,
    "seat": 1,
    "table_size": 3,
    "first_round": lobby_pb2.SEATING_METHOD_RANDOM,
    "display_name": "Long",
    "player_name": "Long",
    "name": "Long",
    "page_size": 10,
}
#: The same for the fields of a command: each names something, so that the command is decided
#: (and refused by the rules) rather than refused for what it leaves out.
PLAUSIBLE_IN_COMMANDS: dict[str, object] = {
    "company": "SR",
    "corporation": "AR",
    "train": "2",
    "source": "depot",
    "hex": "K4",
    "tile": "5",
    "price": 25,
}
KINDS = {
    name: {FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64}
    if isinstance(value, int)
    else {FieldDescriptor.CPPTYPE_STRING}
    for name, value in PLAUSIBLE_IN_COMMANDS.items()
}


@dataclass(frozen=True)
class World:
    """What the requests name: a started game, a full table not started, a registered host,
    players and a tournament of them; with a credential for each."""

    game_id: str
    game_seat: str
    table_id: str
    table_seat: str
    table_host: str
    host: str
    player_ids: tuple[str, ...]
    tournament_id: str

    def credential(self, method: MethodDescriptor) -> str:
        """The credential the method's access rule asks for ("" where none is needed)."""
        rule = RULES.get(f"/{method.containing_service.full_name}/{method.name}")
        by_permission = {
            access.SIGNED_IN: self.host,
            access.REGISTERED_HOST: self.host,
            access.HOST_TOURNAMENT: self.host,
            access.HOST_TABLE: self.table_host,
            access.HOLD_SEAT: self.table_seat,
            access.ACT_IN_GAME: self.game_seat,
            access.WATCH_GAME: self.game_seat,
        }
        if rule is None or rule.permission is None:
            return ""
        return by_permission[rule.permission]

    def request(self, case: Case) -> Message:
        """The method's request, its ids naming this world's game, table, player or tournament,
        with the case's field set to the case's value (a oneof member is chosen by setting
        it)."""
        method = case.field.method
        request = GetMessageClass(method.input_type)()
        fields: Any = request
        real = {
            "game_id": self.game_id,
            "table_id": self.table_id,
            "tournament_id": self.tournament_id,
            "player_id": self.player_ids[0],
        }
        for name, value in {**PLAUSIBLE, **real}.items():
            if name in method.input_type.fields_by_name:
                setattr(request, name, value)
        if "player_ids" in method.input_type.fields_by_name:
            fields.player_ids.extend(self.player_ids)
        target: Message = request
        for field in case.field.path[:-1]:
            container = getattr(target, field.name)
            target = container.add() if field.is_repeated else container
            for name, value in PLAUSIBLE_IN_COMMANDS.items():
                inner = target.DESCRIPTOR.fields_by_name.get(name)
                if inner is not None and not inner.is_repeated and inner.cpp_type in KINDS[name]:
                    setattr(target, name, value)
        last = case.field.path[-1]
        if last.is_repeated:
            del getattr(target, last.name)[:]
            getattr(target, last.name).append(case.value)
        else:
            setattr(target, last.name, case.value)
        return request


def make_world(client: Client) -> World:
    """The world built through the gateway, as a client would."""
    # Seat 1 acts first: commands in the seat's name are its turn's.
    fixed = lobby_pb2.TableOptions(fixed_seat_order=True)
    game_id, game_seats, _ = started_table(client, options=fixed)
    table_id, table_seats, table_host = open_table(client)
    host = client.lobby.RegisterPlayer(
        lobby_pb2.RegisterPlayerRequest(display_name="Long host", role=lobby_pb2.ROLE_HOST)
    )
    players = tuple(
        client.lobby.RegisterPlayer(
            lobby_pb2.RegisterPlayerRequest(display_name=f"Long player {n}")
        ).player_id
        for n in range(3)
    )
    tournament = client.lobby.CreateTournament(
        lobby_pb2.CreateTournamentRequest(
            name="Long tournament",
            player_ids=list(players),
            table_size=3,
            first_round=lobby_pb2.SEATING_METHOD_RANDOM,
        ),
        metadata=auth(host.credential),
    )
    return World(
        game_id=game_id,
        game_seat=game_seats[0],
        table_id=table_id,
        table_seat=table_seats[0],
        table_host=table_host,
        host=host.credential,
        player_ids=players,
        tournament_id=tournament.tournament_id,
    )
