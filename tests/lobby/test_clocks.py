"""Game clocks derived from the timeline of accepted commands: hand-computed timelines, both
policies, and properties over random timelines (checked against a millisecond-by-millisecond
simulation). `SHIKOKU_PROPERTY_SCALE` multiplies the number of random timelines."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.lobby.domain.clocks import (
    ClockEvent,
    ClockSettings,
    Policy,
    SeatClock,
    Tick,
    clocks,
    first_to_run_out,
    next_deadline,
    verdict,
)

POLICIES: list[Policy] = ["flag", "forfeit"]
SCALE = float(os.environ.get("SHIKOKU_PROPERTY_SCALE", "1"))
EXAMPLES = max(10, int(300 * SCALE))

T0 = 1_700_000_000_000
BANK = 10_000
INC = 1_000
FLAG = ClockSettings(BANK, INC, "flag")
FORFEIT = ClockSettings(BANK, INC, "forfeit")
TWO = (1, 2)
THREE = (1, 2, 3)


def timeline(*steps: tuple[int, int | None, tuple[int, ...]]) -> list[Tick]:
    """Ticks from (ms after T0, actor, acting_after), numbered in order from version 1."""
    return [Tick(v, T0 + at, actor, acting) for v, (at, actor, acting) in enumerate(steps, 1)]


# The creation of a two-seat game, then four alternating actions.
ALTERNATING = timeline(
    (0, None, (1,)),
    (3_000, 1, (2,)),  # seat 1: 3000 used, 7000 + 1000 left
    (5_000, 2, (1,)),  # seat 2: 2000 used, 8000 + 1000 left
    (9_000, 1, (2,)),  # seat 1: 7000 used, 4000 + 1000 left
)


class TestHandComputed:
    def test_two_players_alternating(self) -> None:
        result = clocks(FLAG, TWO, ALTERNATING, T0 + 9_500)
        assert result == {
            1: SeatClock(used_ms=7_000, remaining_ms=5_000, ran_out_at_ms=None, running=False),
            2: SeatClock(used_ms=2_500, remaining_ms=8_500, ran_out_at_ms=None, running=True),
        }

    def test_at_the_last_tick_only_the_increment_has_been_added(self) -> None:
        result = clocks(FLAG, TWO, ALTERNATING, T0 + 9_000)
        assert result[1].remaining_ms == 5_000
        assert result[2] == SeatClock(2_000, 9_000, None, running=True)

    def test_an_increment_never_raises_the_time_above_the_bank(self) -> None:
        ticks = timeline((0, None, (1,)), (300, 1, (2,)))
        assert clocks(FLAG, TWO, ticks, T0 + 300)[1] == SeatClock(300, BANK, None, False)

    def test_simultaneous_seats_are_each_charged_the_whole_interval(self) -> None:
        ticks = timeline(
            (0, None, (1, 2, 3)),
            (2_000, 2, (1, 3)),  # each of the three: 2000 used; seat 2 gets its increment
            (5_000, 3, (1,)),  # seats 1 and 3: 3000 more; seat 3 gets its increment
        )
        result = clocks(FLAG, THREE, ticks, T0 + 6_000)
        assert result == {
            1: SeatClock(6_000, 4_000, None, running=True),
            2: SeatClock(2_000, 9_000, None, running=False),
            3: SeatClock(5_000, 6_000, None, running=False),
        }
        assert sum(c.used_ms for c in result.values()) == 2_000 * 3 + 3_000 * 2 + 1_000 * 1

    def test_a_seat_runs_out_between_ticks_at_the_exact_instant(self) -> None:
        # Seat 1 has 5000 left after its action at 9000; it acts again only at 16_000.
        ticks = [*ALTERNATING, *timeline_from(5, (10_000, 2, (1,)), (16_000, 1, (2,)))]
        result = clocks(FLAG, TWO, ticks, T0 + 16_000)
        assert result[1] == SeatClock(13_000, 0, T0 + 10_000 + 5_000, running=False)
        assert result[2].ran_out_at_ms is None
        assert first_to_run_out(FLAG, TWO, ticks, T0 + 16_000) == (T0 + 15_000, 1)

    def test_a_seat_runs_out_while_acting_now(self) -> None:
        # Seat 2 has 9000 left at 9000 and does not act.
        assert clocks(FLAG, TWO, ALTERNATING, T0 + 17_999)[2].ran_out_at_ms is None
        now = T0 + 21_345
        result = clocks(FLAG, TWO, ALTERNATING, now)
        assert result[2] == SeatClock(2_000 + 12_345, 0, T0 + 18_000, running=True)
        assert first_to_run_out(FLAG, TWO, ALTERNATING, now) == (T0 + 18_000, 2)
        assert next_deadline(FLAG, TWO, ALTERNATING) == (T0 + 18_000, 2)

    def test_reaching_zero_on_the_tick_is_running_out_and_earns_no_increment(self) -> None:
        ticks = timeline((0, None, (1,)), (BANK, 1, (2,)))
        result = clocks(FLAG, TWO, ticks, T0 + BANK + 5_000)
        assert result[1] == SeatClock(BANK, 0, T0 + BANK, running=False)

    def test_running_out_is_final_even_when_later_increments_would_give_time_back(self) -> None:
        ticks = timeline(
            (0, None, (1,)),
            (12_000, 1, (2,)),  # seat 1 ran out at 10_000
            (13_000, 2, (1,)),
            (13_100, 1, (2,)),  # a quick action would earn 1000, but seat 1 is out
        )
        result = clocks(FLAG, TWO, ticks, T0 + 14_000)
        assert result[1] == SeatClock(12_100, 0, T0 + 10_000, running=False)

    def test_no_clock_runs_after_the_game_ends(self) -> None:
        ended = [*ALTERNATING, *timeline_from(5, (9_400, None, ()))]
        at_end = clocks(FLAG, TWO, ended, T0 + 9_400)
        assert clocks(FLAG, TWO, ended, T0 + 10**9) == at_end
        assert not any(c.running for c in at_end.values())
        assert at_end[2] == SeatClock(2_400, 8_600, None, running=False)
        assert next_deadline(FLAG, TWO, ended) is None
        assert first_to_run_out(FLAG, TWO, ended, T0 + 10**9) is None

    def test_a_last_action_ending_the_game_still_earns_its_increment(self) -> None:
        ended = [*ALTERNATING, *timeline_from(5, (9_400, 2, ()))]
        assert clocks(FLAG, TWO, ended, T0 + 10**9)[2].remaining_ms == 9_600

    def test_host_ticks_and_actions_out_of_turn_earn_no_increment(self) -> None:
        ticks = timeline(
            (0, None, (1,)),
            (1_000, None, (1,)),  # e.g. the host changes something: seat 1 still to act
            (2_000, 2, (1,)),  # seat 2 acts out of turn
            (3_000, 1, (2,)),
        )
        result = clocks(FLAG, TWO, ticks, T0 + 3_000)
        assert result[1] == SeatClock(3_000, 8_000, None, running=False)
        assert result[2] == SeatClock(0, BANK, None, running=True)

    def test_before_any_tick_every_seat_has_its_bank_and_nothing_runs(self) -> None:
        result = clocks(FLAG, THREE, [], T0)
        assert result == {s: SeatClock(0, BANK, None, running=False) for s in THREE}
        assert next_deadline(FLAG, THREE, []) is None
        assert first_to_run_out(FLAG, THREE, [], T0) is None

    def test_time_never_runs_backwards(self) -> None:
        # The server's clock stepped back 500 ms between two ticks.
        ticks = timeline((0, None, (1,)), (2_000, 1, (2,)), (1_500, 2, (1,)))
        result = clocks(FLAG, TWO, ticks, T0 + 2_500)
        assert result[2] == SeatClock(0, BANK, None, running=False)
        assert result[1] == SeatClock(2_000 + 1_000, 8_000, None, running=True)
        # A `now` before the last tick charges nothing more.
        assert clocks(FLAG, TWO, ticks, T0) == clocks(FLAG, TWO, ticks, T0 + 1_500)

    def test_the_next_deadline_skips_seats_already_out(self) -> None:
        ticks = timeline((0, None, (1, 2)), (11_000, None, (1, 2)), (11_500, 2, (1, 2)))
        # Both ran out at 10_000; seat 2's action came too late, so nothing is left to schedule.
        assert next_deadline(FLAG, TWO, ticks) is None
        ticks = timeline((0, None, (1,)), (11_000, 1, (1, 2)))
        assert next_deadline(FLAG, TWO, ticks) == (T0 + 11_000 + BANK, 2)

    def test_the_next_deadline_is_the_earliest_then_the_lowest_seat(self) -> None:
        ticks = timeline((0, None, (1, 2, 3)), (4_000, 3, (2, 3)))
        assert next_deadline(FLAG, THREE, ticks) == (T0 + 10_000, 2)
        ticks = timeline((0, None, (3, 2)))
        assert next_deadline(FLAG, THREE, ticks) == (T0 + BANK, 2)


def timeline_from(version: int, *steps: tuple[int, int | None, tuple[int, ...]]) -> list[Tick]:
    return [replace(t, version=t.version + version - 1) for t in timeline(*steps)]


class TestVerdicts:
    # Seats 1 and 2 act together; seat 1 runs out at 10_000, seat 2 (8000 left at 2000, plus its
    # increment) at 11_000.
    TICKS = timeline((0, None, (1, 2)), (2_000, 2, (1, 2)))

    def test_flag_policy_flags_each_seat_once_earliest_first(self) -> None:
        now = clocks(FLAG, THREE, self.TICKS, T0 + 20_000)
        assert verdict(FLAG, now, recorded=()) == [
            ClockEvent("flagged", 1, T0 + 10_000),
            ClockEvent("flagged", 2, T0 + 2_000 + 9_000),
        ]
        assert verdict(FLAG, now, recorded=()) == [
            ("flagged", 1, T0 + 10_000),
            ("flagged", 2, T0 + 11_000),
        ]

    def test_forfeit_policy_forfeits(self) -> None:
        now = clocks(FORFEIT, THREE, self.TICKS, T0 + 10_500)
        assert verdict(FORFEIT, now, recorded=()) == [("forfeited", 1, T0 + 10_000)]

    def test_verdicts_are_not_repeated(self) -> None:
        early = clocks(FORFEIT, THREE, self.TICKS, T0 + 10_500)
        recorded = {e.seat for e in verdict(FORFEIT, early, recorded=())}
        assert verdict(FORFEIT, early, recorded) == []
        late = clocks(FORFEIT, THREE, self.TICKS, T0 + 30_000)
        assert verdict(FORFEIT, late, recorded) == [("forfeited", 2, T0 + 11_000)]
        assert verdict(FORFEIT, late, recorded | {2}) == []

    def test_nothing_to_record_while_everyone_has_time(self) -> None:
        assert verdict(FLAG, clocks(FLAG, THREE, self.TICKS, T0 + 9_999), recorded=()) == []


class TestValidation:
    @pytest.mark.parametrize(
        ("bank", "increment", "policy"),
        [(0, 0, "flag"), (-1, 0, "flag"), (1, -1, "flag"), (1, 0, "resign")],
    )
    def test_bad_settings(self, bank: int, increment: int, policy: str) -> None:
        with pytest.raises(ValueError):
            ClockSettings(bank, increment, policy)  # type: ignore[arg-type]

    def test_a_seat_twice_in_one_tick(self) -> None:
        with pytest.raises(ValueError, match="twice"):
            Tick(1, T0, None, (1, 1))

    def test_ticks_out_of_order(self) -> None:
        ticks = [Tick(2, T0, None, (1,)), Tick(1, T0 + 1, 1, (2,))]
        with pytest.raises(ValueError, match="order"):
            clocks(FLAG, TWO, ticks, T0)

    @pytest.mark.parametrize("tick", [Tick(1, T0, None, (3,)), Tick(1, T0, 3, (1,))])
    def test_seats_not_at_the_table(self, tick: Tick) -> None:
        with pytest.raises(ValueError, match="not at the table"):
            clocks(FLAG, TWO, [tick], T0)


# --- properties over random timelines -------------------------------------------------------


@dataclass(frozen=True)
class Case:
    settings: ClockSettings
    seats: tuple[int, ...]
    ticks: list[Tick]
    now_ms: int


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """Small banks and gaps so that seats often run out, at every kind of moment."""
    bank = draw(st.integers(1, 60))
    increment = draw(st.integers(0, 30))
    policy = draw(st.sampled_from(POLICIES))
    seats = tuple(range(1, draw(st.integers(1, 4)) + 1))
    some = st.lists(st.sampled_from(seats), min_size=1, max_size=len(seats), unique=True)
    # Someone must act two times in three; otherwise nobody (the game is over, or paused).
    acting = st.one_of(some.map(tuple), some.map(tuple), st.just(()))
    actor = st.one_of(st.none(), st.sampled_from(seats))
    at = draw(st.integers(0, 1_000))
    ticks = [Tick(1, at, None, draw(acting))]
    for version in range(2, draw(st.integers(1, 12)) + 1):
        before = ticks[-1].acting_after
        # Mostly one of the seats whose turn it was, sometimes anybody.
        in_turn = bool(before) and draw(st.booleans())
        who = draw(st.sampled_from(before)) if in_turn else draw(actor)
        at += draw(st.integers(0, 40))
        ticks.append(Tick(version, at, who, draw(acting)))
    now = at + draw(st.integers(0, 60))
    return Case(ClockSettings(bank, increment, policy), seats, ticks, now)


def simulated(case: Case) -> dict[int, SeatClock]:
    """The rules played out one millisecond at a time: an oracle for the exact instants."""
    bank = case.settings.bank_ms
    used = dict.fromkeys(case.seats, 0)
    left = dict.fromkeys(case.seats, bank)
    out: dict[int, int | None] = dict.fromkeys(case.seats, None)

    def run(acting: tuple[int, ...], start: int, end: int) -> None:
        for ms in range(start, end):
            for seat in acting:
                used[seat] += 1
                if out[seat] is None:
                    left[seat] -= 1
                    if left[seat] == 0:
                        out[seat] = ms + 1

    for before, tick in pairwise(case.ticks):
        run(before.acting_after, before.at_ms, tick.at_ms)
        actor = tick.actor
        if actor is not None and actor in before.acting_after and out[actor] is None:
            left[actor] = min(bank, left[actor] + case.settings.increment_ms)
    last = case.ticks[-1]
    run(last.acting_after, last.at_ms, case.now_ms)
    return {
        s: SeatClock(used[s], left[s], out[s], running=s in last.acting_after) for s in case.seats
    }


def split(case: Case, index: int, fraction: float) -> Case:
    """The same timeline with a no-op tick (no actor, the same seats acting) inside the interval
    after tick `index` (the last interval runs to `now`)."""
    ticks = case.ticks
    end = ticks[index + 1].at_ms if index + 1 < len(ticks) else case.now_ms
    start = ticks[index].at_ms
    at = start + round((end - start) * fraction)
    renumbered = [replace(t, version=2 * t.version) for t in ticks]
    noop = Tick(2 * ticks[index].version + 1, at, None, ticks[index].acting_after)
    return replace(case, ticks=[*renumbered[: index + 1], noop, *renumbered[index + 1 :]])


def of(case: Case) -> dict[int, SeatClock]:
    return clocks(case.settings, case.seats, case.ticks, case.now_ms)


class TestProperties:
    @settings(max_examples=EXAMPLES, deadline=None)
    @given(cases())
    def test_charged_time_is_each_interval_times_its_acting_seats(self, case: Case) -> None:
        ends = [t.at_ms for t in case.ticks[1:]] + [case.now_ms]
        expected = sum(
            (end - t.at_ms) * len(t.acting_after) for t, end in zip(case.ticks, ends, strict=True)
        )
        assert sum(c.used_ms for c in of(case).values()) == expected

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(cases())
    def test_remaining_stays_between_zero_and_the_bank(self, case: Case) -> None:
        for c in of(case).values():
            assert 0 <= c.remaining_ms <= case.settings.bank_ms
            assert (c.remaining_ms == 0) == c.ran_out

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(cases())
    def test_agrees_with_a_millisecond_simulation(self, case: Case) -> None:
        assert of(case) == simulated(case)

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(cases(), st.data())
    def test_a_no_op_tick_inside_an_interval_changes_nothing(
        self, case: Case, data: st.DataObject
    ) -> None:
        index = data.draw(st.integers(0, len(case.ticks) - 1))
        fraction = data.draw(st.floats(0, 1))
        assert of(split(case, index, fraction)) == of(case)

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(cases())
    def test_the_next_deadline_is_when_the_first_acting_seat_runs_out(self, case: Case) -> None:
        deadline = next_deadline(case.settings, case.seats, case.ticks)
        last = case.ticks[-1]
        at_last = clocks(case.settings, case.seats, case.ticks, last.at_ms)
        already = {s for s, c in at_last.items() if c.ran_out}
        if deadline is None:
            assert set(last.acting_after) <= already
            return
        at, seat = deadline
        assert at > last.at_ms
        just_before = clocks(case.settings, case.seats, case.ticks, at - 1)
        assert {s for s, c in just_before.items() if c.ran_out} == already
        newly = {
            s
            for s, c in clocks(case.settings, case.seats, case.ticks, at).items()
            if c.ran_out and s not in already
        }
        assert min(newly) == seat

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(cases())
    def test_verdicts_once_recorded_are_not_repeated(self, case: Case) -> None:
        now = of(case)
        events = verdict(case.settings, now, recorded=())
        outs = sorted((c.ran_out_at_ms, s) for s, c in now.items() if c.ran_out_at_ms is not None)
        kind = "flagged" if case.settings.policy == "flag" else "forfeited"
        assert events == [(kind, seat, at) for at, seat in outs]
        assert verdict(case.settings, now, {e.seat for e in events}) == []
        first = first_to_run_out(case.settings, case.seats, case.ticks, case.now_ms)
        assert first == (None if not events else (events[0].at_ms, events[0].seat))
