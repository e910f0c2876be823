"""Deadlines on this process's monotonic clock, for searches that take a `Deadline`."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MonotonicDeadline:
    at: float

    def passed(self) -> bool:
        return time.monotonic() > self.at


def seconds_from_now(seconds: float) -> MonotonicDeadline:
    return MonotonicDeadline(time.monotonic() + seconds)
