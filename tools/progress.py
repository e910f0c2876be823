"""Progress of long command-line work (an import, an export), on stderr so that stdout keeps
only the command's output.

On a terminal it is a live bar (rich's: done/total, elapsed and remaining time); otherwise (a
pipe, a file, CI's log) it is plain lines, one every `PLAIN_EVERY_SECONDS` while the work goes
on and one when it is done, so a log gets a few readable lines instead of a redrawn bar:

    shikoku import: 48/480 actions (10%)
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress

PLAIN_EVERY_SECONDS = 5.0


class Progress:
    """`with Progress("shikoku import", "actions") as progress: progress.update(done, total)`.

    `interactive` forces the bar (True) or the plain lines (False); by default the bar is drawn
    only when `stream` (stderr) is a terminal. `enabled=False` shows nothing (for --json)."""

    def __init__(
        self,
        label: str,
        unit: str,
        stream: TextIO | None = None,
        *,
        interactive: bool | None = None,
        enabled: bool = True,
    ) -> None:
        self.label = label
        self.unit = unit
        self._stream = stream or sys.stderr
        self._enabled = enabled
        self._console = Console(file=self._stream)
        self.interactive = self._console.is_terminal if interactive is None else interactive
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None
        self._shown_at = time.monotonic()

    def __enter__(self) -> Progress:
        if self._enabled and self.interactive:
            self._bar = RichProgress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(self.unit),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=self._console,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=None)
        return self

    def update(self, done: int, total: int) -> None:
        """`done` of `total` units are done."""
        if not self._enabled:
            return
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total)
            return
        now = time.monotonic()
        if done >= total or now - self._shown_at >= PLAIN_EVERY_SECONDS:
            self._plain(done, total)
            self._shown_at = now

    def _plain(self, done: int, total: int) -> None:
        share = 100 * done // max(total, 1)
        self._stream.write(f"{self.label}: {done}/{total} {self.unit} ({share}%)\n")
        self._stream.flush()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
