"""Pure rules of tournament day: a tournament's length and its end, and a host's forfeit of a
seat whose clock has run out."""

from __future__ import annotations

import pytest

from kernel.rejection import Rejected
from services.lobby.domain import tables
from services.lobby.domain.clocks import ClockSettings
from services.lobby.domain.tournament import (
    Player,
    assign_tables,
    create,
    fold,
    record_result,
    start_round,
)

PLAYERS = [Player(f"p{n}", f"Player {n}") for n in range(4)]


def test_a_tournament_is_over_once_its_last_round_has_finished() -> None:
    events = create("tn", "Cup", "host", PLAYERS, 2, round_count=2)
    for number in (1, 2):
        assert not fold(events).finished
        events += start_round(fold(events), seed=number)
        round_ = fold(events).rounds[-1]
        events += assign_tables(fold(events), [f"t{number}-{n}" for n in range(2)])
        for slot, seated in enumerate(round_.seating):
            worths = {player: 100 * index for index, player in enumerate(seated)}
            events += record_result(fold(events), f"t{number}-{slot}", worths, "bank")
    over = fold(events)
    assert over.finished and over.round_count == 2
    with pytest.raises(Rejected) as refused:
        start_round(over, seed=3)
    assert refused.value.reason == "TOURNAMENT_OVER"


def test_a_tournament_plays_at_least_one_round() -> None:
    with pytest.raises(Rejected) as refused:
        create("tn", "Cup", "host", PLAYERS, 2, round_count=0)
    assert refused.value.reason == "BAD_ROUND_COUNT"


def test_one_recorded_before_tournaments_had_a_length_never_ends() -> None:
    (kind, data), *_ = create("tn", "Cup", "host", PLAYERS, 4)
    del data["round_count"]
    assert fold([(kind, data)]).round_count == 0 and not fold([(kind, data)]).finished


def started_table(clock: ClockSettings | None) -> tables.Table:
    events = tables.create("t", 2, "T", False, True, "h", clock=clock)
    for seat in (1, 2):
        events += tables.join(tables.fold(events), f"P{seat}", seat, f"c{seat}", f"p{seat}")
    events += tables.start(tables.fold(events), "t")
    return tables.fold(events)


def test_only_a_seat_out_of_time_is_forfeited_and_it_replaces_its_flag() -> None:
    table = started_table(ClockSettings(1000, 0, "flag"))
    for out_of_time, clockless in ((False, table), (True, started_table(None))):
        with pytest.raises(Rejected) as refused:
            tables.forfeit(clockless, 1, out_of_time, game_over=False)
        assert refused.value.reason == "NOT_OUT_OF_TIME"
    table = tables.evolve(table, ("ClockRanOut", {"seat": 1, "kind": "flagged", "at_ms": 5}))
    events = tables.forfeit(table, 1, out_of_time=True, game_over=False)
    assert events == [("SeatForfeited", {"seat": 1})]
    forfeited = tables.evolve(table, events[0])
    assert forfeited.ran_out == ((1, "forfeited"),)
    assert tables.forfeit(forfeited, 1, out_of_time=True, game_over=True) == []  # a retry
    with pytest.raises(Rejected) as over:
        tables.forfeit(table, 2, out_of_time=True, game_over=True)
    assert over.value.reason == "GAME_OVER"
