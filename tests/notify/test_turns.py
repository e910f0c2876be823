"""Which notifications a game's summaries call for (services/notify/turns.py), and what each
format sends (services/notify/messages.py)."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from services.notify.messages import Notification, message
from services.notify.turns import Seating, Told, to_tell

SEATING = Seating("t-1", "", 0, {1: "p-a", 2: "p-b", 3: "p-c"})


def summary(acting: list[int], finished: bool = False) -> dict[str, Any]:
    return {"acting_seats": acting, "finished": finished}


def told_events(
    told: Told | None, version: int, doc: dict[str, Any], seating: Seating = SEATING
) -> tuple[Told, list[tuple[str, str]]]:
    decided = to_tell("g-1", told, version, doc, seating)
    assert decided is not None
    new, notifications = decided
    return new, [(n.event, n.player_id) for n in notifications]


def test_a_game_first_seen_is_started_for_everyone_and_the_first_to_act_is_told() -> None:
    told, events = told_events(None, 5, summary([2]))
    assert told == Told(5, (2,), False)
    assert events == [
        ("game_started", "p-a"),
        ("game_started", "p-b"),
        ("game_started", "p-c"),
        ("your_turn", "p-b"),
    ]


def test_a_tournament_game_is_a_round_started() -> None:
    seating = Seating("t-1", "tn-1", 2, {1: "p-a"})
    _told, events = told_events(None, 5, summary([1]), seating)
    assert events == [("round_started", "p-a"), ("your_turn", "p-a")]


def test_acting_several_times_in_a_row_is_one_turn() -> None:
    assert told_events(Told(5, (2,), False), 6, summary([2])) == (Told(6, (2,), False), [])
    assert told_events(Told(6, (2,), False), 9, summary([3])) == (
        Told(9, (3,), False),
        [("your_turn", "p-c")],
    )


def test_a_summary_no_newer_than_what_was_told_tells_nothing() -> None:
    assert to_tell("g-1", Told(6, (2,), False), 6, summary([3]), SEATING) is None
    assert to_tell("g-1", Told(6, (2,), False), 4, summary([3]), SEATING) is None
    assert to_tell("g-1", Told(6, (), True), 9, summary([], True), SEATING) is None


def test_the_end_is_told_to_every_seated_player_and_anonymous_seats_get_nothing() -> None:
    seating = Seating("t-1", "", 0, {1: "p-a", 3: "p-c"})  # seat 2 is an anonymous token
    told, events = told_events(Told(8, (2,), False), 12, summary([2], True), seating)
    assert told == Told(12, (), True)
    assert events == [("game_ended", "p-a"), ("game_ended", "p-c")]


def test_ids_are_stable_and_differ_by_what_and_to_whom() -> None:
    first = to_tell("g-1", None, 5, summary([2]), SEATING)
    again = to_tell("g-1", None, 5, summary([2]), SEATING)
    assert first is not None and first == again
    ids = [n.notification_id for n in first[1]]
    assert len(set(ids)) == len(ids)


def test_the_records_read_back() -> None:
    told = Told(7, (1, 3), False)
    assert Told.from_json(told.to_json()) == told
    seating = Seating.from_record(
        {b"table_id": b"t-9", b"tournament_id": b"", b"round": b"0", b"seat:2": b"p-x"}
    )
    assert seating == Seating("t-9", "", 0, {2: "p-x"})


NOTE = Notification("n-1", "your_turn", "p-b", "t-1", "g-1", 6)


def test_generic_is_signed_with_the_player_s_secret() -> None:
    secret = "ab" * 32
    body, headers = message(NOTE, "generic", secret, "https://play.example/")
    assert json.loads(body) == {
        "event": "your_turn",
        "notification_id": "n-1",
        "player_id": "p-b",
        "table_id": "t-1",
        "game_id": "g-1",
        "version": 6,
        "link": "https://play.example/?game=g-1",
    }
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-Shikoku-Signature"] == f"sha256={expected}"


def test_slack_and_discord_get_their_shapes_unsigned() -> None:
    slack, slack_headers = message(NOTE, "slack", "", "https://play.example")
    discord, discord_headers = message(NOTE, "discord", "", "https://play.example")
    assert json.loads(slack) == {
        "text": "It is your turn in g-1. <https://play.example/?game=g-1|Open the board>"
    }
    assert json.loads(discord) == {
        "content": "It is your turn in g-1. https://play.example/?game=g-1"
    }
    assert "X-Shikoku-Signature" not in slack_headers | discord_headers
