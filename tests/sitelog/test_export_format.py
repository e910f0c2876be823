"""Reading the site's action log: skipped actions, messages, programs, auto-actions, undo/redo."""

from __future__ import annotations

from typing import Any

from tools.sitelog.export_format import effective_actions


def act(number: int, kind: str = "pass", **more: Any) -> dict[str, Any]:
    return {"id": number, "type": kind, "entity": 1, "entity_type": "player", **more}


def ids(actions: list[dict[str, Any]]) -> list[Any]:
    return [a.get("id", a["type"]) for a in actions]


def test_skipped_messages_and_programs_do_not_count() -> None:
    log = (act(1), act(2, "message"), act(3, skip=True), act(4, "program_buy_shares"), act(5))
    assert ids(effective_actions(log)) == [1, 5]


def test_auto_actions_follow_the_action_that_carries_them() -> None:
    auto = [{"type": "buy_shares", "entity": 2}, {"type": "program_disable", "entity": 2}]
    log = (act(1, auto_actions=auto), act(2))
    assert [a["type"] for a in effective_actions(log)] == ["pass", "buy_shares", "pass"]


def test_undo_takes_back_the_last_action_and_redo_restores_it() -> None:
    assert ids(effective_actions((act(1), act(2), act(3, "undo")))) == [1]
    assert ids(effective_actions((act(1), act(2), act(3, "undo"), act(4, "redo")))) == [1, 2]
    assert ids(effective_actions((act(1), act(2), act(3, "undo"), act(4), act(5, "redo")))) == [
        1,
        4,
    ]


def test_undo_to_an_action_takes_back_everything_after_it() -> None:
    log = (act(1), act(2), act(3), act(4, "undo", action_id=1), act(5))
    assert ids(effective_actions(log)) == [1, 5]
