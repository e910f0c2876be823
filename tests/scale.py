"""SHIKOKU_PROPERTY_SCALE for the loops of random games that aren't Hypothesis tests: how many
cases they draw, as a multiple of their own count (1 by default, as `make test` runs them; 0.25 in
`make fast`; 100 in `make soak`), never fewer than one."""

from __future__ import annotations

import os

SCALE = float(os.environ.get("SHIKOKU_PROPERTY_SCALE", "1"))


def scaled(count: int) -> int:
    return max(1, round(count * SCALE))
