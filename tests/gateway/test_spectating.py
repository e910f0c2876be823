"""A spectator kept N actions behind sees the log up to before the N-th latest action."""

from __future__ import annotations

from gateway.spectating import SpectatorView
from infra.eventstore import StoredEvent


def log(*batches: int, ended: bool = False) -> list[StoredEvent]:
    """A game log whose actions wrote batches of these many events (the first is the set-up)."""
    events: list[StoredEvent] = []
    for size in batches:
        for i in range(size):
            cause = {"command": "x"} if i == 0 else None
            events.append(StoredEvent(len(events) + 1, "Something", 1, {}, cause))
    if ended:
        events.append(StoredEvent(len(events) + 1, "GameEnded", 1, {}, None))
    return events


def test_without_a_delay_everything_is_visible() -> None:
    view = SpectatorView(0).see_all(log(5, 2, 1))
    assert view.visible == view.latest == 8


def test_the_latest_actions_are_held_back() -> None:
    events = log(5, 2, 1, 3)  # set-up 1-5, actions at 6-7, 8, 9-11
    assert SpectatorView(1).see_all(events).visible == 8
    assert SpectatorView(2).see_all(events).visible == 7
    assert SpectatorView(3).see_all(events).visible == 5


def test_the_set_up_is_visible_however_long_the_delay() -> None:
    assert SpectatorView(10).see_all(log(5, 2, 1)).visible == 5
    assert SpectatorView(10).see_all(log(5)).visible == 5


def test_visibility_grows_only_as_new_actions_arrive() -> None:
    view = SpectatorView(1)
    seen = []
    for event in log(3, 2, 2, 1):
        view.see(event)
        seen.append(view.visible)
    assert seen == [1, 2, 3, 3, 3, 5, 5, 7]


def test_an_ended_game_is_shown_whole() -> None:
    view = SpectatorView(3).see_all(log(5, 2, 1, ended=True))
    assert view.visible == view.latest == 9


def test_a_view_brought_up_to_date_twice_at_once_counts_each_action_once() -> None:
    events = log(5, 2, 1, 3)
    view = SpectatorView(2).see_all(events[:7])
    view.see_all(events[5:])  # overlaps what it has seen, as two concurrent reads would
    view.see_all(events[5:])
    assert view.visible == SpectatorView(2).see_all(events).visible == 7
