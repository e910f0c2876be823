"""A table's chat in a game's export: each message a site `message` action after the actions
the game had when it was said, ids consecutive, and the export still replays to the same game."""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from services.rules.board.title import SITE_PROFILE
from tools.selfplay import random_game
from tools.sitelog.export_format import effective_actions, parse
from tools.sitelog.exporter import Said, export
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import replay


def without_ids(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in action.items() if k != "id"} for action in actions]


def test_messages_sit_after_the_actions_of_their_game_version_and_ids_stay_consecutive() -> None:
    batches, _final = random_game(3, 1, rules_profile=SITE_PROFILE)
    versions = list(accumulate(len(b.events) for b in batches))
    middle = len(batches) // 2
    said = [
        Said(1, "before the start", 1_700_000_000_123, 0),
        Said(2, "at the start", 1_700_000_001_999, versions[0]),
        Said(3, "halfway", 1_700_000_002_000, versions[middle]),
        Said(1, "also halfway", 1_700_000_003_000, versions[middle]),
        Said(2, "gg", 1_700_000_004_000, versions[-1]),
    ]
    plain = export("bots-1", batches)
    chatty = export("bots-1", batches, said)

    actions = chatty["actions"]
    assert [a["id"] for a in actions] == list(range(1, len(actions) + 1))
    messages = [a for a in actions if a["type"] == "message"]
    assert messages[0] == {
        "type": "message",
        "entity": 1,
        "entity_type": "player",
        "id": 1,
        "created_at": 1_700_000_000,
        "message": "before the start",
    }
    assert [(m["entity"], m["message"]) for m in messages] == [(s.seat, s.text) for s in said]
    # Everything else is the plain export's, in its order.
    others = [a for a in actions if a["type"] != "message"]
    assert without_ids(others) == without_ids(plain["actions"])
    # Each message follows exactly the actions of the batches the game had at its version.
    for message, batches_before in [
        (messages[1], 1),
        (messages[2], middle + 1),
        (messages[3], middle + 1),
        (messages[4], len(batches)),
    ]:
        index = actions.index(message)
        played = export("bots-1", batches[:batches_before])["actions"]
        others_before = [a for a in actions[:index] if a["type"] != "message"]
        assert without_ids(others_before) == without_ids(played)
    assert actions[-1]["message"] == "gg"
    # The deviations name the same actions as before, under their new ids.
    for old, new in zip(plain["rules_deviations"], chatty["rules_deviations"], strict=True):
        if old["first_action"] <= len(plain["actions"]):
            moved = actions[new["first_action"] - 1]
            assert without_ids([moved]) == without_ids([plain["actions"][old["first_action"] - 1]])


def test_an_export_with_messages_reads_back_as_the_same_game() -> None:
    batches, _final = random_game(4, 2, rules_profile=SITE_PROFILE)
    versions = list(accumulate(len(b.events) for b in batches))
    said = [
        Said(1 + n % 4, f"message {n}", 1_700_000_000_000 + n, v) for n, v in enumerate(versions)
    ]
    plain = parse(export("bots-2", batches))
    chatty = parse(export("bots-2", batches, said))
    assert len(chatty.actions) == len(plain.actions) + len(said)
    assert without_ids(effective_actions(chatty.actions)) == without_ids(
        effective_actions(plain.actions)
    )
    first, again = InProcessTable(plain), InProcessTable(chatty)
    assert replay(plain, first).matches(plain)
    outcome = replay(chatty, again)
    assert outcome.divergence is None, outcome.divergence
    assert outcome.matches(chatty)
    assert again.state == first.state
