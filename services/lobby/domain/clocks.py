"""Game clocks as a pure function of the game's timeline: no I/O and no clock reads.

Every batch of events a command causes is stamped by the server with the wall-clock time it was
accepted; with the seat that submitted the command and the seats that must act after it, that is
a `Tick`. The clocks are derived from the ticks alone, so they survive restarts, and `now_ms` is
always an argument (the caller reads the clock, this module never does).

The rules:

- **Bank.** Every seat starts with `bank_ms` remaining and nothing used.
- **Charging.** The time between two consecutive ticks is charged to every seat in the earlier
  tick's `acting_after`. When several seats must act at once, *each* of them is charged the whole
  interval (each is keeping the table waiting). From the last tick to `now_ms`, the seats in the
  last tick's `acting_after` are charged; a tick with an empty `acting_after` (the end of the
  game) stops every clock. `used_ms` is the total time charged, even beyond running out; it is
  never capped.
- **Time going backwards.** A tick stamped earlier than its predecessor (the server's clock
  stepped back), or a `now_ms` before the last tick, makes an empty interval: nobody is ever
  charged negative time. The log cannot be rewritten, so this is tolerated, not rejected.
- **Running out.** A seat runs out when its remaining time *reaches* zero, at the exact
  millisecond it does: the start of the charged interval plus the time it had left, whether that
  lands between two ticks, on a tick, or before `now_ms`. Remaining time never goes below zero.
- **Out is final.** Once out, a seat's remaining time stays at zero and `ran_out_at_ms` stays set:
  it earns no more increments, even ones that would have given time back. An action accepted at
  the very millisecond the time reached zero is already too late.
- **Increments.** After each tick, its actor (if it is a seat that still has time) gains
  `increment_ms`, but only if it was among the seats that had to act before that command (the
  previous tick's `acting_after`): increments pay for turns, so an action out of turn earns
  nothing, and server or host ticks (`actor=None`) earn nothing. An increment never raises the
  remaining time above `bank_ms`: the bank is also the cap, so a long run of quick actions cannot
  pile up hours.
- **Running.** A seat's clock is `running` when it is among the last tick's `acting_after`,
  whether or not it has already run out (under the "flag" policy it keeps playing and being
  charged).
- **Verdicts.** Under the "flag" policy a seat that ran out is flagged; under "forfeit" it
  forfeits. `verdict` lists each seat at most once, earliest first, leaving out the seats whose
  verdict the service has already recorded; what a forfeit does to the game is the rules'
  business, so a service applies the verdicts in order and recomputes after the game changes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Literal, NamedTuple, get_args

Policy = Literal["flag", "forfeit"]
VerdictKind = Literal["flagged", "forfeited"]

_VERDICT_OF: dict[Policy, VerdictKind] = {"flag": "flagged", "forfeit": "forfeited"}


@dataclass(frozen=True, slots=True)
class ClockSettings:
    """A table's clock: the time bank per seat (> 0), the increment per action (>= 0, capped so
    that it never raises a seat's remaining time above the bank) and what running out does."""

    bank_ms: int
    increment_ms: int
    policy: Policy

    def __post_init__(self) -> None:
        if self.bank_ms <= 0:
            raise ValueError(f"the time bank must be positive, not {self.bank_ms} ms")
        if self.increment_ms < 0:
            raise ValueError(f"the increment cannot be negative, not {self.increment_ms} ms")
        if self.policy not in get_args(Policy):
            raise ValueError(f"the policy is 'flag' or 'forfeit', not {self.policy!r}")


@dataclass(frozen=True, slots=True)
class Tick:
    """One accepted command: its version in the game's log, when the server accepted it
    (milliseconds since the epoch), the seat that submitted it (None for the server or the host,
    such as the game's creation or an end by agreement) and the seats who must act after it
    (empty once the game is over). The first tick is the game's creation."""

    version: int
    at_ms: int
    actor: int | None
    acting_after: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(set(self.acting_after)) != len(self.acting_after):
            raise ValueError(f"tick {self.version} lists a seat twice in {self.acting_after}")


@dataclass(frozen=True, slots=True)
class SeatClock:
    """One seat's clock: the time charged to it in all (never capped), the time it has left
    (never below zero), the exact moment that reached zero (None while it has time left) and
    whether it is among the seats that must act now."""

    used_ms: int
    remaining_ms: int
    ran_out_at_ms: int | None
    running: bool

    @property
    def ran_out(self) -> bool:
        return self.ran_out_at_ms is not None


class ClockEvent(NamedTuple):
    """What the service must record: `("flagged" | "forfeited", seat, at_ms)`."""

    kind: VerdictKind
    seat: int
    at_ms: int


def clocks(
    settings: ClockSettings, seats: Iterable[int], ticks: Sequence[Tick], now_ms: int
) -> dict[int, SeatClock]:
    """Every seat's clock at `now_ms`, from the ticks in log order (see the module's rules)."""
    state = {seat: SeatClock(0, settings.bank_ms, None, running=False) for seat in seats}
    _check_timeline(state.keys(), ticks)
    for before, tick in pairwise(ticks):
        state = _charge(state, before.acting_after, before.at_ms, tick.at_ms)
        state = _credit(settings, state, tick.actor, before.acting_after)
    if not ticks:
        return state
    last = ticks[-1]
    state = _charge(state, last.acting_after, last.at_ms, now_ms)
    return {seat: replace(c, running=seat in last.acting_after) for seat, c in state.items()}


def first_to_run_out(
    settings: ClockSettings, seats: Iterable[int], ticks: Sequence[Tick], now_ms: int
) -> tuple[int, int] | None:
    """The earliest `(ran_out_at_ms, seat)` up to `now_ms` (ties go to the lower seat), or None
    if every seat still has time."""
    outs = [
        (c.ran_out_at_ms, seat)
        for seat, c in clocks(settings, seats, ticks, now_ms).items()
        if c.ran_out_at_ms is not None
    ]
    return min(outs, default=None)


def next_deadline(
    settings: ClockSettings, seats: Iterable[int], ticks: Sequence[Tick]
) -> tuple[int, int] | None:
    """`(at_ms, seat)`: when, if nobody acts after the last tick, the next seat runs out (ties go
    to the lower seat). Seats already out are not deadlines any more; None when no seat that
    must act still has time (or there are no ticks), so there is nothing to schedule."""
    if not ticks:
        return None
    last = ticks[-1]
    now = clocks(settings, seats, ticks, last.at_ms)
    deadlines = [
        (last.at_ms + now[seat].remaining_ms, seat)
        for seat in last.acting_after
        if not now[seat].ran_out
    ]
    return min(deadlines, default=None)


def verdict(
    settings: ClockSettings, clocks: Mapping[int, SeatClock], recorded: Collection[int]
) -> list[ClockEvent]:
    """What the service must record under the table's policy: one event per seat that has run out
    and is not in `recorded` (the seats already flagged or forfeited), earliest first, ties by
    seat. Calling it again with those seats recorded returns nothing new."""
    kind = _VERDICT_OF[settings.policy]
    events = [
        ClockEvent(kind, seat, c.ran_out_at_ms)
        for seat, c in clocks.items()
        if c.ran_out_at_ms is not None and seat not in recorded
    ]
    return sorted(events, key=lambda e: (e.at_ms, e.seat))


def _check_timeline(seats: Collection[int], ticks: Sequence[Tick]) -> None:
    """Ticks must come in log order and name only the table's seats."""
    for before, tick in pairwise(ticks):
        if tick.version <= before.version:
            raise ValueError(f"tick {tick.version} follows tick {before.version}: not in order")
    table = set(seats)
    for tick in ticks:
        named = (*tick.acting_after, *(() if tick.actor is None else (tick.actor,)))
        strangers = sorted(set(named) - table)
        if strangers:
            raise ValueError(f"tick {tick.version} names seats {strangers} not at the table")


def _charge(
    state: dict[int, SeatClock], acting: tuple[int, ...], start_ms: int, end_ms: int
) -> dict[int, SeatClock]:
    """Charge the interval from `start_ms` to `end_ms` (empty if it goes backwards) to each
    acting seat."""
    elapsed = max(0, end_ms - start_ms)
    return {
        seat: _charged(c, start_ms, elapsed) if seat in acting else c for seat, c in state.items()
    }


def _charged(clock: SeatClock, start_ms: int, elapsed_ms: int) -> SeatClock:
    """One seat charged `elapsed_ms` from `start_ms`: it runs out at the instant its remaining
    time reaches zero, and a seat already out only accumulates used time."""
    used = clock.used_ms + elapsed_ms
    if clock.ran_out:
        return replace(clock, used_ms=used)
    if elapsed_ms < clock.remaining_ms:
        return replace(clock, used_ms=used, remaining_ms=clock.remaining_ms - elapsed_ms)
    return replace(clock, used_ms=used, remaining_ms=0, ran_out_at_ms=start_ms + clock.remaining_ms)


def _credit(
    settings: ClockSettings,
    state: dict[int, SeatClock],
    actor: int | None,
    acting_before: tuple[int, ...],
) -> dict[int, SeatClock]:
    """The actor's increment: only for a seat whose turn it was and that still has time, and
    never above the bank."""
    if actor is None or actor not in acting_before or state[actor].ran_out:
        return state
    clock = state[actor]
    remaining = min(settings.bank_ms, clock.remaining_ms + settings.increment_ms)
    return {**state, actor: replace(clock, remaining_ms=remaining)}
