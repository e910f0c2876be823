"""When a search must stop: the engine asks, the caller's clock answers.

The engine reads no clock itself, so its results depend on its input alone; a service passes a
deadline built on `time.monotonic()` (`infra.deadlines`), and a test may pass one that has
already passed.
"""

from __future__ import annotations

from typing import Protocol


class Deadline(Protocol):
    def passed(self) -> bool:
        """True once the search should stop and answer with the best it has found."""
        ...
