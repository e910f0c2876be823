"""A table's chat: what may be said, by whom, how often, and who reads it (its host hides its
messages: `access.require_host`, as for the table's other administration).

Pure decisions on what the shell read (the table, the caller, the author's recent posts, the
chat's size); the shell stores what they allow (services/lobby/shell/chat.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from kernel.rejection import Kind, Rejected
from services.lobby.domain import tables
from services.lobby.domain.access import Caller, watching_delay

MAX_TEXT = 500
#: At most RATE_COUNT messages from one author within RATE_WINDOW_MS.
RATE_COUNT, RATE_WINDOW_MS = 5, 10_000
MAX_MESSAGES = 5_000
#: The seat number and name a host's messages carry.
HOST_SEAT, HOST_NAME = 0, "host"


@dataclass(frozen=True, slots=True)
class Author:
    """Who says a message: a seat (1 to the seat count) or the host (HOST_SEAT)."""

    seat: int
    name: str


@dataclass(frozen=True, slots=True)
class Message:
    """One message as it stands (ChatMessage's fields)."""

    number: int
    seat: int
    author: str
    text: str
    posted_at_ms: int
    game_version: int
    hidden: bool = False


NOT_AT_TABLE = Rejected(
    "NOT_AT_TABLE",
    "only the table's seats and host may speak in its chat",
    Kind.PERMISSION_DENIED,
)


def checked_text(text: str) -> str:
    """`text` if it may be said: 1 to MAX_TEXT code points, not only white space."""
    if not text.strip():
        raise Rejected(
            "MESSAGE_EMPTY", "a message says something", Kind.INVALID_ARGUMENT, {"field": "text"}
        )
    if len(text) > MAX_TEXT:
        raise Rejected(
            "MESSAGE_TOO_LONG",
            f"a message is at most {MAX_TEXT} characters, not {len(text)}",
            Kind.INVALID_ARGUMENT,
            {"field": "text", "limit": MAX_TEXT, "length": len(text)},
        )
    return text


def author_of(caller: Caller, table: tables.Table) -> Author:
    """The seat (or host) `caller` speaks for at `table`: a seat token of the table, the
    registered player who holds one of its seats, or its host (token or credential)."""
    if caller.player is not None:
        player_id = caller.player.player_id
        if (seat := table.seat_of_player(player_id)) is not None:
            return Author(seat.number, seat.player_name)
        if table.host_player_id and table.host_player_id == player_id:
            return Author(HOST_SEAT, HOST_NAME)
        raise NOT_AT_TABLE
    if caller.table is None or caller.table.table_id != table.table_id:
        raise NOT_AT_TABLE
    if caller.is_host:
        return Author(HOST_SEAT, HOST_NAME)
    if caller.seat is None:
        raise NOT_AT_TABLE
    seat = next((s for s in table.seats if s.number == caller.seat.number), caller.seat)
    return Author(seat.number, seat.player_name)


def require_reader(caller: Caller | None, table: tables.Table) -> None:
    """Whoever may watch the table's game reads its chat: seats and host always, others (None:
    anonymous) unless it is closed to spectators (CLOSED_TO_SPECTATORS)."""
    watching_delay(caller, table)


def require_room(message_count: int) -> None:
    if message_count >= MAX_MESSAGES:
        raise Rejected(
            "CHAT_FULL",
            f"this table's chat holds its {MAX_MESSAGES} messages; no more may be said",
            Kind.FAILED_PRECONDITION,
            {"limit": MAX_MESSAGES},
        )


def rate_wait_ms(recent_ms: Sequence[int], now_ms: int) -> int:
    """How long the author of posts at `recent_ms` must wait from `now_ms` before posting
    again (0: at once): RATE_COUNT posts within the RATE_WINDOW_MS before `now_ms` hold the
    next back until the oldest of them leaves the window. (The shell refuses with the wait as
    a RetryInfo: a duration is the shell's to make, as the pure cores import no datetime.)"""
    window = sorted(t for t in recent_ms if now_ms - RATE_WINDOW_MS < t <= now_ms)
    if len(window) < RATE_COUNT:
        return 0
    return max(window[-RATE_COUNT] + RATE_WINDOW_MS - now_ms, 1)


def remembered_posts(recent_ms: Sequence[int], now_ms: int) -> list[int]:
    """The post times to keep for the author after posting at `now_ms`: enough to decide the
    next post's rate."""
    return sorted([*recent_ms, now_ms])[-RATE_COUNT:]


def said(author: Author, text: str, number: int, now_ms: int, game_version: int) -> Message:
    return Message(number, author.seat, author.name, text, now_ms, game_version)


def hidden(message: Message) -> Message:
    """`message` once the host has hidden it: flagged, its text gone."""
    return dataclasses.replace(message, text="", hidden=True)
