"""The site's game export: players, settings, result and the action log.

`effective_actions` turns the stored log into the actions that count: it drops actions marked
`skip`, chat messages and `program_*` settings (auto-action programs record their effects as
`auto_actions` on a later action), applies `undo`/`redo`, and inlines `auto_actions` after the
action that carries them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.rules.board.title import SITE_PROFILE

Action = dict[str, Any]

END_REASONS = {"bankrupt": "bankrupt", "bank": "bank", "manually_ended": "ended"}


@dataclass(frozen=True, slots=True)
class SitePlayer:
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class SiteGame:
    id: str
    title: str
    players: tuple[SitePlayer, ...]  # in the site's seat order
    seed: int
    optional_rules: tuple[str, ...]
    result: dict[str, int]  # site player id -> final net worth
    end_reason: str  # ours: "bankrupt", "bank", "ended" (or "" if unfinished)
    actions: tuple[Action, ...]
    #: The rules profile to replay it under: the site's own, unless our export says otherwise.
    rules_profile: str = SITE_PROFILE

    @property
    def beginner_game(self) -> bool:
        return "beginner_game" in self.optional_rules

    @property
    def stores_revenue(self) -> bool:
        """Old logs store each run's revenue with its hexes; the site replays them trusting
        that revenue, so the scores depend on it (docs/rules-notes.md)."""
        return any(
            "revenue" in route
            for action in self.actions
            if action.get("type") == "run_routes"
            for route in action.get("routes", ())
        )


class ExportError(ValueError):
    pass


def parse(raw: dict[str, Any]) -> SiteGame:
    try:
        settings = raw.get("settings") or {}
        return SiteGame(
            id=str(raw["id"]),
            title=str(raw["title"]),
            players=tuple(SitePlayer(str(p["id"]), str(p["name"])) for p in raw["players"]),
            seed=int(settings.get("seed", 0)),
            optional_rules=tuple(settings.get("optional_rules") or ()),
            result={str(k): int(v) for k, v in (raw.get("result") or {}).items()},
            end_reason=END_REASONS.get(str(raw.get("game_end_reason", "")), ""),
            actions=tuple(raw["actions"]),
            rules_profile=str(raw.get("rules_profile") or SITE_PROFILE),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ExportError(f"not an 18xx.games game export: {error!r}") from error


def load(path: Path) -> SiteGame:
    with path.open() as file:
        return parse(json.load(file))


_IGNORED = {"message"}


def _counts(action: Action) -> bool:
    """Whether an action changes the game (not a chat message nor an auto-action setting)."""
    kind = str(action.get("type", ""))
    return not action.get("skip") and kind not in _IGNORED and not kind.startswith("program_")


def effective_actions(actions: tuple[Action, ...]) -> list[Action]:
    """The actions that shaped the game, in order (see the module docstring)."""
    done: list[list[Action]] = []  # each entry: an action and the auto-actions it carries
    undone: list[list[list[Action]]] = []
    for action in actions:
        kind = action.get("type", "")
        automatic = [a for a in action.get("auto_actions", ()) if _counts(a)]
        if not _counts(action):
            if automatic and not action.get("skip"):
                done.append(automatic)
            continue
        if kind == "undo":
            target = action.get("action_id")
            group: list[list[Action]] = []
            if target is None:
                if done:
                    group.append(done.pop())
            else:
                while done and done[-1] and int(done[-1][0].get("id", 0)) > int(target):
                    group.insert(0, done.pop())
            undone.append(group)
            continue
        if kind == "redo":
            if undone:
                done.extend(undone.pop())
            continue
        undone.clear()
        done.append([action, *automatic])
    return [step for entry in done for step in entry]
