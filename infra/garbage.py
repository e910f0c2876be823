"""Python's cycle collector, set for a long-lived server.

A full collection scans every tracked object the process holds and stops the event loop while
it does: with the modules, protobuf descriptors and title data a service loads at start, one took
20-120 ms in each of the rules process and the gateway under load (bench/bench_load.py's open
loop), several times a minute, and every call in flight waits for it; that was most of
SubmitCommand's p99. What a service loads before it serves lives as long as the process, so
`settle` moves it out of the collector's sight (`gc.freeze`: frozen objects are still freed by
reference counting, just never scanned for cycles), and the young generation is collected less
often, so that fewer short-lived objects are promoted to be scanned again in full collections.
`PAUSES` records how long each collection stopped the process.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from prometheus_client import Histogram

#: Allocations (less deallocations) between collections of the youngest generation: Python's
#: default is 700, which at a few hundred calls a second is a collection every few calls.
YOUNG_THRESHOLD = 20_000

PAUSES = Histogram(
    "shikoku_gc_pause_seconds",
    "How long the cycle collector stopped the process, by generation",
    ["generation"],
    buckets=(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25),
)

_started: dict[int, float] = {}


def _timed(phase: str, info: dict[str, Any]) -> None:
    generation = int(info["generation"])
    if phase == "start":
        _started[generation] = time.perf_counter()
    elif generation in _started:
        PAUSES.labels(str(generation)).observe(time.perf_counter() - _started.pop(generation))


def settle() -> None:
    """Once the process has loaded what it serves with: collect what start-up left, freeze the
    rest, and collect the young generation less often. Pauses are timed from then on."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    if _timed not in gc.callbacks:
        gc.callbacks.append(_timed)
