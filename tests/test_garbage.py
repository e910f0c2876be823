"""infra.garbage: a served process's start-up objects are frozen out of the cycle collector, its
young generation collected less often, and every collection's pause is timed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from infra.garbage import YOUNG_THRESHOLD

ROOT = Path(__file__).parents[1]


def test_settle_freezes_start_up_and_times_every_collection() -> None:
    program = textwrap.dedent(
        """
        import gc
        from infra import garbage
        before = gc.get_freeze_count()
        garbage.settle()
        frozen = gc.get_freeze_count()
        cycles = []
        for _ in range(100):
            node = {}
            node["self"] = node
            cycles.append(node)
        del cycles, node
        collected = gc.collect()
        pauses = garbage.PAUSES.labels("2")._sum.get()
        print(before, frozen, gc.get_threshold()[0], collected, pauses > 0)
        """
    )
    answer = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=True
    )
    before, frozen, young, collected, timed = answer.stdout.split()
    assert int(before) == 0
    assert int(frozen) > 10_000, "start-up's objects (modules, protobuf) were not frozen"
    assert int(young) == YOUNG_THRESHOLD
    assert int(collected) >= 100, "a cycle made after settling is still collected"
    assert timed == "True"
