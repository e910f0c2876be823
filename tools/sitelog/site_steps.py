"""Steps of the site's turn that ours does not have, for the importer and the exporter alike.

The site's track step (its 1889 special-track step) still waits for a pass after the operating
corporation's own lay while the corporation's president holds a private whose tile ability is
theirs to use at that step (the Mitsubishi Ferry's port tile, 15 B), whether or not a hex is
left for it. Our turn leaves the track step with the lay: the port tile goes down at any time
its owner may (abilities.py), not at a step of the corporation's.
"""

from __future__ import annotations

from collections.abc import Container, Iterable

from services.rules.board.title import Owner, Title


def track_step_waits_for_pass(
    title: Title,
    president_holds: Iterable[str],
    spent: Container[str],
    without_abilities: bool = False,
) -> bool:
    """Whether the site's track step waits for a pass after a lay: `president_holds` the
    privates of the operating corporation's president, `spent` those closed or whose one-time
    ability is used; `without_abilities`, a game whose privates have none (the site's beginner
    game), never."""
    if without_abilities:
        return False
    abilities = title.lay_abilities
    return any(
        company in abilities and abilities[company].owner is Owner.PLAYER and company not in spent
        for company in president_holds
    )


# The site's phases in which corporations may buy privates from players (its 1889 game).
PHASES_BUYING_PRIVATES = frozenset({"3", "4"})


def private_step_waits(
    title: Title,
    phase: str,
    beginner_game: bool,
    corporation_cash: int,
    held_by_players: Iterable[str],
) -> bool:
    """Whether the site's blocking "buy a private" step at the end of a corporation's turn
    waits for a pass, in a game whose turn has no such step (the rulebook's cut, 8.2, 8.8: a
    private may be bought at any point of the turn): in a phase where corporations buy
    privates, while a player owns one the corporation could afford at the lowest price (half
    its face value, rounded up). `held_by_players`: the open privates players own."""
    if beginner_game or phase not in PHASES_BUYING_PRIVATES:
        return False
    prices = [-(-title.private(company).face_value // 2) for company in held_by_players]
    return bool(prices) and min(prices) <= corporation_cash
