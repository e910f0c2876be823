"""Writing log lines without making calls wait: each record is formatted where it is made and
the lines are written by a thread of their own, together, every `interval` seconds.

A line per call, written one at a time, is a system call per line on the event loop's thread,
and a reader of the log's pipe that falls behind would stall the server once the pipe is full.
Written in batches, a busy process makes a few writes a second; warnings and errors are written
at once, and whatever is waiting is written when the process exits (logging's shutdown flushes
every handler). A process killed outright loses at most `interval` of lines. Past
`max_pending` waiting lines, new ones are dropped, and a line says how many.
"""

from __future__ import annotations

import logging
import threading
from typing import IO

INTERVAL_SECONDS = 0.2
MAX_PENDING = 100_000


class BatchingHandler(logging.Handler):
    def __init__(
        self, stream: IO[str], interval: float = INTERVAL_SECONDS, max_pending: int = MAX_PENDING
    ) -> None:
        super().__init__()
        self._stream = stream
        self._interval = interval
        self._max_pending = max_pending
        self._pending: list[str] = []
        self._dropped = 0
        self._pending_lock = threading.Lock()
        self._write_lock = threading.Lock()  # batches go out in order, whoever writes them
        self._wake = threading.Event()
        self._closed = False
        self._writer = threading.Thread(target=self._run, name="log-writer", daemon=True)
        self._writer.start()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        with self._pending_lock:
            if len(self._pending) >= self._max_pending:
                self._dropped += 1
                return
            self._pending.append(line)
        if record.levelno >= logging.WARNING:
            self._wake.set()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait(self._interval)
            self._wake.clear()
            self._write()

    def _write(self) -> None:
        with self._write_lock:
            with self._pending_lock:
                lines, self._pending = self._pending, []
                dropped, self._dropped = self._dropped, 0
            if dropped:
                lines.append(self._dropped_line(dropped))
            if not lines:
                return
            try:
                self._stream.write("\n".join(lines) + "\n")
                self._stream.flush()
            except (OSError, ValueError):  # the reader went away, or the stream was closed
                pass

    def _dropped_line(self, dropped: int) -> str:
        note = logging.LogRecord(
            __name__,
            logging.WARNING,
            __file__,
            0,
            f"{dropped} log lines dropped: they came faster than the log could be written",
            (),
            None,
        )
        return self.format(note)

    def flush(self) -> None:
        self._write()

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        self._write()
        super().close()
