"""How many streams one caller may hold open at once through this gateway process: game streams
and the lobby's watches (WatchTournament, WatchPlayer) together.

Rate limits charge a stream once, when it starts; a caller could still pile up open streams,
each holding a queue and a task here. The quota caps them per caller (their credential, or
their address without one), per process.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator

from kernel.rejection import Kind, Rejected

DEFAULT_STREAMS_PER_CALLER = 64


class StreamQuota:
    """`per_caller` 0 lifts the cap."""

    def __init__(self, per_caller: int = DEFAULT_STREAMS_PER_CALLER) -> None:
        self.per_caller = per_caller
        self._open: Counter[str] = Counter()

    @property
    def open(self) -> int:
        """Streams open now, of every caller."""
        return sum(list(self._open.values()))

    @contextlib.contextmanager
    def held(self, caller: str) -> Iterator[None]:
        """One open stream of `caller` for the block's duration; refused beyond the quota."""
        if self.per_caller and self._open[caller] >= self.per_caller:
            raise Rejected(
                "TOO_MANY_STREAMS",
                f"at most {self.per_caller} streams open at once per caller; close one",
                Kind.RESOURCE_EXHAUSTED,
                {"limit": self.per_caller},
            )
        self._open[caller] += 1
        try:
            yield
        finally:
            self._open[caller] -= 1
            if not self._open[caller]:
                del self._open[caller]
