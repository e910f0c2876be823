"""docs/operations.md's table of every setting, made from the processes' declarations
(infra.settings): `python -m tools.settings_table` writes it between its markers, and
tests/test_settings.py fails when the table there is not what the code declares."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from gateway.settings import GatewaySettings
from gateway.web.settings import WebSettings
from infra.settings import Setting, declared
from services.lobby.shell.settings import LobbySettings
from services.notify.shell.settings import NotifySettings
from services.routes.shell.settings import RoutesSettings
from services.rules.shell.settings import RulesSettings
from tools.markers import with_block

#: Every process's settings, by the process's name.
PROCESSES: dict[str, type[Any]] = {
    "rules": RulesSettings,
    "routes": RoutesSettings,
    "lobby": LobbySettings,
    "gateway": GatewaySettings,
    "web": WebSettings,
    "notify": NotifySettings,
}
DOC = Path(__file__).parents[1] / "docs" / "operations.md"
BEGIN = "<!-- settings table: made by python -m tools.settings_table; do not edit by hand -->"
END = "<!-- end of the settings table -->"


def settings_by_process() -> dict[str, tuple[Setting[Any], list[str]]]:
    """Each variable (`<NAME>` where it is the process's own), its declaration, and the
    processes that read it, in order of first declaration."""
    found: dict[str, tuple[Setting[Any], list[str]]] = {}
    for process, settings in PROCESSES.items():
        for one in declared(settings):
            found.setdefault(one.variable, (one, []))[1].append(process)
    return found


def table() -> str:
    lines = [
        "| variable | processes | default | value | what |",
        "|---|---|---|---|---|",
    ]
    for variable, (one, processes) in settings_by_process().items():
        readers = "all" if len(processes) == len(PROCESSES) else ", ".join(processes)
        default = one.shown_default if one.described else f"`{one.shown_default}`"
        lines.append(f"| `{variable}` | {readers} | {default} | {one.kind.expected} | {one.doc} |")
    return "\n".join(lines)


def with_table(document: str) -> str:
    """`document` with the table between its markers made anew."""
    return with_block(document, BEGIN, END, table(), DOC.name)


def main() -> int:
    DOC.write_text(with_table(DOC.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
