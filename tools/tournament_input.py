"""What a host hands `shikoku tournament create`: the players' CSV file and the clock flag,
read into values or refused with a one-line reason (`InputError`)."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from shikoku.v1 import lobby_pb2

COLUMNS = ("name", "webhook", "webhook_format")
NAME_LIMIT = 40  # RegisterPlayerRequest.display_name
FORMATS = {
    "": lobby_pb2.NOTIFICATION_FORMAT_GENERIC,
    "generic": lobby_pb2.NOTIFICATION_FORMAT_GENERIC,
    "slack": lobby_pb2.NOTIFICATION_FORMAT_SLACK,
    "discord": lobby_pb2.NOTIFICATION_FORMAT_DISCORD,
}
POLICIES = {"flag": lobby_pb2.CLOCK_POLICY_FLAG, "forfeit": lobby_pb2.CLOCK_POLICY_FORFEIT}
SECONDS_PER_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600}
INT32_MAX = 2**31 - 1  # ClockOptions' fields
# BANK[+INC][:flag|forfeit], each duration a whole number of seconds, or of s, m or h.
CLOCK = re.compile(
    r"(?P<bank>\d+)(?P<bank_unit>[smh]?)"
    r"(?:\+(?P<increment>\d+)(?P<increment_unit>[smh]?))?"
    r"(?::(?P<policy>[a-z]+))?"
)


class InputError(ValueError):
    """A file or flag the command cannot use; its text is the one line to print."""


@dataclass(frozen=True)
class Entrant:
    """One row of the players' file: a player to register, and where their turns are sent."""

    name: str
    webhook: str = ""
    webhook_format: lobby_pb2.NotificationFormat.ValueType = lobby_pb2.NOTIFICATION_FORMAT_GENERIC


def read_players(path: Path) -> list[Entrant]:
    """The players of the CSV file at `path`: a header naming `name` (required), `webhook` and
    `webhook_format` (optional, generic|slack|discord) and no other column, then one row a
    player, each name given once."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise InputError(f"{path}: cannot read it: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    rows = csv.DictReader(io.StringIO(text, newline=""))
    header = [column.strip() for column in rows.fieldnames or ()]
    if "name" not in header:
        raise InputError(f"{path}: the header has no 'name' column (columns: {', '.join(COLUMNS)})")
    unknown = [column for column in header if column not in COLUMNS]
    if unknown:
        raise InputError(f"{path}: unknown column {unknown[0]!r} (columns: {', '.join(COLUMNS)})")
    rows.fieldnames = header
    entrants: list[Entrant] = []
    seen: set[str] = set()
    for row in rows:
        line = rows.line_num  # blank lines are skipped, but counted
        if None in row:
            raise InputError(f"{path}, line {line}: more fields than the header names")
        entrant = _entrant(row, f"{path}, line {line}")
        if entrant.name in seen:
            raise InputError(f"{path}, line {line}: {entrant.name!r} is named twice")
        seen.add(entrant.name)
        entrants.append(entrant)
    if not entrants:
        raise InputError(f"{path}: no players (one row a player under the header)")
    return entrants


def _entrant(row: dict[str, str | None], where: str) -> Entrant:
    name = (row.get("name") or "").strip()
    webhook = (row.get("webhook") or "").strip()
    format_name = (row.get("webhook_format") or "").strip().lower()
    if not name:
        raise InputError(f"{where}: the name is empty")
    if len(name) > NAME_LIMIT:
        raise InputError(f"{where}: the name is longer than {NAME_LIMIT} characters")
    if format_name not in FORMATS:
        raise InputError(
            f"{where}: unknown webhook_format {format_name!r} (generic, slack or discord)"
        )
    if format_name and not webhook:
        raise InputError(f"{where}: a webhook_format without a webhook")
    return Entrant(name, webhook, FORMATS[format_name])


def parse_clock(text: str) -> lobby_pb2.ClockOptions:
    """`--clock BANK[+INC][:flag|forfeit]`: each seat's time bank and the increment after each
    of its actions, in seconds or with a unit (`90m+30s:forfeit`, `3600+20`); running out
    flags the seat unless the policy says forfeit."""
    found = CLOCK.fullmatch(text.strip())
    if found is None:
        raise InputError(f"--clock {text!r}: expected BANK[+INC][:flag|forfeit], e.g. 90m+30s:flag")
    policy = found["policy"] or "flag"
    if policy not in POLICIES:
        raise InputError(f"--clock {text!r}: the policy is flag or forfeit, not {policy!r}")
    bank = int(found["bank"]) * SECONDS_PER_UNIT[found["bank_unit"]]
    increment = int(found["increment"] or 0) * SECONDS_PER_UNIT[found["increment_unit"] or ""]
    if bank <= 0:
        raise InputError(f"--clock {text!r}: the bank must be more than 0 seconds")
    if max(bank, increment) > INT32_MAX:
        raise InputError(f"--clock {text!r}: more than {INT32_MAX} seconds")
    return lobby_pb2.ClockOptions(
        bank_seconds=bank, increment_seconds=increment, policy=POLICIES[policy]
    )
