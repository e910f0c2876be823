"""Everything made from the catalogue of reason codes, protos/shikoku/v1/reasons.proto (enum
`shikoku.v1.Reason`): `python -m tools.reasons` writes

- kernel/reasons.py: `ReasonCode`, the type every refusal's reason has in the services, so that
  mypy refuses a reason the catalogue lacks;
- shikoku_sdk/reasons.py: the Python SDK's `Reason` and `Family` enums and each reason's family;
- clients/typescript/src/reasons.ts: the TypeScript package's `Reason` union and families;
- docs/api.md's table of reason codes, between its markers.

tests/api/test_reasons.py fails when one of them is not what the catalogue makes."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from gateway.reflection import public_descriptors
from shikoku.v1 import reasons_pb2
from tools.markers import with_block

ROOT = Path(__file__).parents[1]
PREFIX = "REASON_"
FAMILY_PREFIX = "REASON_FAMILY_"
DOC = ROOT / "docs" / "api.md"
BEGIN = "<!-- reason codes: made by python -m tools.reasons from the catalogue -->"
END = "<!-- end of the reason codes -->"
#: The families' headings in docs/api.md, in the catalogue's order.
HEADINGS = {
    "ACCESS": "Authentication and permission",
    "LOBBY": "Lobby and tournaments",
    "REQUEST": "Malformed commands and requests",
    "RULES": "Game rules",
    "SPECTATING": "Spectating and streaming",
    "SERVICE": "Limits and infrastructure",
}
HEADER = "Made by `python -m tools.reasons` from protos/shikoku/v1/reasons.proto: edit that."


@dataclass(frozen=True)
class Entry:
    """One reason: its code as ErrorInfo carries it, family, gRPC status and meaning."""

    code: str
    family: str
    status: str
    meaning: str


def catalogue() -> list[Entry]:
    """Every reason but REASON_UNSPECIFIED, in the catalogue's order, its meaning the value's
    leading comment in the proto."""
    comments = _leading_comments()
    entries = []
    for value in reasons_pb2.Reason.DESCRIPTOR.values:
        if value.number == 0:
            continue
        options = value.GetOptions()
        family = reasons_pb2.ReasonFamily.Name(options.Extensions[reasons_pb2.reason_family])
        entries.append(
            Entry(
                code=value.name.removeprefix(PREFIX),
                family=family.removeprefix(FAMILY_PREFIX),
                status=options.Extensions[reasons_pb2.reason_status],
                meaning=comments[value.name],
            )
        )
    return entries


#: Where a descriptor's source locations put an enum's values (FileDescriptorProto.enum_type,
#: EnumDescriptorProto.value).
ENUM_TYPE, ENUM_VALUE = 5, 2


def _leading_comments() -> dict[str, str]:
    """Each Reason value's leading comment, from the descriptor set `make proto` compiles with
    source info (the generated module keeps no comments)."""
    proto = next(f for f in public_descriptors() if f.name == reasons_pb2.DESCRIPTOR.name)
    enum_index = [e.name for e in proto.enum_type].index(reasons_pb2.Reason.DESCRIPTOR.name)
    values = proto.enum_type[enum_index].value
    return {
        values[location.path[3]].name: " ".join(location.leading_comments.split())
        for location in proto.source_code_info.location
        if list(location.path[:3]) == [ENUM_TYPE, enum_index, ENUM_VALUE]
        and len(location.path) == 4
    }


def kernel_module(entries: list[Entry]) -> str:
    codes = "\n".join(f'    "{e.code}",' for e in entries)
    return f'''"""Every reason code a refusal may carry: the catalogue, as a type.

{HEADER}"""

from __future__ import annotations

from typing import Literal, get_args

ReasonCode = Literal[
{codes}
]

#: The codes of `ReasonCode`, to check a reason made at run time (`kernel.rejection.reason_code`).
REASON_CODES: frozenset[str] = frozenset(get_args(ReasonCode))
'''


def sdk_module(entries: list[Entry]) -> str:
    members = "\n".join(f'    {e.code} = "{e.code}"' for e in entries)
    families = "\n".join(f'    {f} = "{f}"' for f in HEADINGS)
    of = "\n".join(f"    Reason.{e.code}: Family.{e.family}," for e in entries)
    return f'''"""The server's reason codes (google.rpc.ErrorInfo `reason`) as types.

`Reason` has one member a code, equal to the code's string ("NOT_YOUR_TURN"); each one's
`Family` decides the class of `shikoku_sdk.errors.ShikokuError` a refusal is raised as.

{HEADER}"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """A reason code of the catalogue (shikoku.v1.Reason without its REASON_ prefix)."""

{members}


class Family(StrEnum):
    """What kind of refusal a reason is (shikoku.v1.ReasonFamily without its prefix)."""

{families}


#: Each reason's family.
FAMILY: dict[Reason, Family] = {{
{of}
}}
'''


def typescript_module(entries: list[Entry]) -> str:
    union = "\n".join(f'  | "{e.code}"' for e in entries)
    families = "\n".join(f'  | "{f}"' for f in HEADINGS)
    of = "\n".join(f'  {e.code}: "{e.family}",' for e in entries)
    return f"""// The server's reason codes (google.rpc.ErrorInfo `reason`) as types.
// {HEADER}

/** A reason code of the catalogue (shikoku.v1.Reason without its REASON_ prefix). */
export type Reason =
{union};

/** What kind of refusal a reason is (shikoku.v1.ReasonFamily without its prefix). */
export type ReasonFamily =
{families};

/** Each reason's family. */
export const REASON_FAMILY: Readonly<Record<Reason, ReasonFamily>> = {{
{of}
}};

/** Whether `text` is a reason of the catalogue (a newer server may send one this package lacks). */
export function isReason(text: string): text is Reason {{
  return Object.prototype.hasOwnProperty.call(REASON_FAMILY, text);
}}
"""


def doc_table(entries: list[Entry]) -> str:
    parts = []
    for family, heading in HEADINGS.items():
        parts += [f"**{heading}**", "", "| reason | status | meaning |", "|---|---|---|"]
        for e in entries:
            if e.family == family:
                parts.append(f"| `{e.code}` | {e.status} | {e.meaning} |")
        parts.append("")
    return "\n".join(parts).rstrip("\n")


#: Each generated file, and what makes it from the catalogue.
FILES = {
    ROOT / "kernel" / "reasons.py": kernel_module,
    ROOT / "shikoku_sdk" / "reasons.py": sdk_module,
    ROOT / "clients" / "typescript" / "src" / "reasons.ts": typescript_module,
}


def with_table(document: str, entries: list[Entry]) -> str:
    return with_block(document, BEGIN, END, doc_table(entries), DOC.name)


def stale() -> list[Path]:
    """The generated files (and docs/api.md) that differ from what the catalogue makes."""
    entries = catalogue()
    found = [path for path, make in FILES.items() if _read(path) != make(entries)]
    if with_table(DOC.read_text(), entries) != DOC.read_text():
        found.append(DOC)
    return found


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def main() -> int:
    entries = catalogue()
    for path, make in FILES.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(make(entries))
    DOC.write_text(with_table(DOC.read_text(), entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
