"""Logs: one line per record on stderr, as JSON objects (for collectors) or as text (for a
person at a terminal), and the access log's line per call.

`SHIKOKU_LOG_FORMAT` chooses, `json` or `text`; unset, text when stderr is a terminal, else
JSON. `SHIKOKU_LOG_LEVEL` (default INFO) sets the level. A JSON line carries `ts`, `level`,
`process`, `logger`, `message`, the record's own fields (an access line's method, code,
reason...), the trace and span ids when the record was made inside a traced call, and `error`
with the traceback of an exception. Credentials never reach a line: the access log writes only
ids, and every message is scrubbed of bearer tokens, API keys' secrets and Redis passwords
as a safety net.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from infra.log_writer import BatchingHandler

FORMAT_SETTING = "SHIKOKU_LOG_FORMAT"
LEVEL_SETTING = "SHIKOKU_LOG_LEVEL"

#: What a record's `fields` extra holds: values JSON can write.
Fields = Mapping[str, str | int | float | bool | None]

# What must never be written, whatever a message says: a bearer credential, the secret half of
# an API key (`k-<id>.<secret>`), the password in a Redis URL.
_SECRETS = (
    (re.compile(r"(?i)\b(bearer\s+)\S+"), r"\1***"),
    (re.compile(r"\b(k-[0-9a-f]+)\.[A-Za-z0-9_\-]+"), r"\1.***"),
    (re.compile(r"(rediss?(?:\+cluster)?://[^:/@\s]*:)[^@\s]+@"), r"\1***@"),
)


def announce(line: str) -> None:
    """`line` on stdout, for the launcher that reads it ("rules listening on ..."), in a single
    write: the services run unbuffered (`python -u`) with stderr in the same pipe, and print()
    writes the text and its newline apart, so that a log line written between the two by the
    log writer's thread landed on the announcement's line, which the launcher then missed."""
    sys.stdout.write(f"{line}\n")
    sys.stdout.flush()


TraceIds = Callable[[], tuple[str, str] | None]
_trace_ids: TraceIds | None = None


def use_trace_ids(source: TraceIds) -> None:
    """Lines made inside a traced call carry its trace and span ids (`source` says them)."""
    global _trace_ids
    _trace_ids = source


def trace_ids() -> tuple[str, str] | None:
    """The current span's trace and span ids, when tracing is on and a span is current."""
    return _trace_ids() if _trace_ids is not None else None


def scrubbed(text: str) -> str:
    lowered = text.lower()
    if "bearer" not in lowered and "k-" not in lowered and "redis" not in lowered:
        return text  # most lines: three regexes cost more than the line's formatting
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def _timestamp(created: float) -> str:
    """ISO 8601 in UTC to the millisecond, `2026-12-01T13:47:40.151Z`."""
    whole = int(created)
    milliseconds = int((created - whole) * 1000)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(whole))}.{milliseconds:03d}Z"


def _fields(record: logging.LogRecord) -> Fields:
    fields = getattr(record, "fields", None)
    return fields if isinstance(fields, Mapping) else {}


class JsonFormatter(logging.Formatter):
    def __init__(self, process: str) -> None:
        super().__init__()
        self._process = process

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": _timestamp(record.created),
            "level": record.levelname,
            "process": self._process,
            "logger": record.name,
            "message": scrubbed(record.getMessage()),
        }
        line.update(_fields(record))
        if "trace_id" not in line and (ids := trace_ids()) is not None:
            line["trace_id"], line["span_id"] = ids
        if record.exc_info:
            line["error"] = scrubbed(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False, default=str)


#: An access line's fields its message already says, left out of its text form.
_SAID_IN_MESSAGE = frozenset({"method", "code", "duration_ms"})


class TextFormatter(logging.Formatter):
    """`13:40:28.123 INFO  shikoku.access GameService/SubmitCommand OK 3.1 ms game_id=…`"""

    def format(self, record: logging.LogRecord) -> str:
        at = datetime.fromtimestamp(record.created).strftime("%H:%M:%S.%f")[:-3]
        text = f"{at} {record.levelname:<5} {record.name} {scrubbed(record.getMessage())}"
        shown = " ".join(
            f"{key}={value}"
            for key, value in _fields(record).items()
            if value and key not in _SAID_IN_MESSAGE
        )
        if shown:
            text = f"{text} {shown}"
        if record.exc_info:
            text = f"{text}\n{scrubbed(self.formatException(record.exc_info))}"
        return text


def log_format(chosen: str) -> str:
    """`chosen` (`json` or `text`), or when none is, text for a terminal and JSON otherwise."""
    if chosen in ("json", "text"):
        return chosen
    return "text" if sys.stderr.isatty() else "json"


def configure_logging(process: str, chosen_format: str = "", level: str = "INFO") -> None:
    """Every record of this process, ours and the libraries', to stderr in the chosen form,
    written in batches off the calls' path (infra.log_writer)."""
    handler = BatchingHandler(sys.stderr)
    formatter = JsonFormatter(process) if log_format(chosen_format) == "json" else TextFormatter()
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
