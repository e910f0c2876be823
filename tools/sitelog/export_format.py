"""The site's game export: players, settings, result and the action log.

`effective_actions` turns the stored log into the actions that count: it drops actions marked
`skip`, chat messages and `program_*` settings (auto-action programs record their effects as
`auto_actions` on a later action), applies `undo`/`redo` as the site's engine does (an undo
takes back any action but a chat message, a `program_*` setting included), and inlines
`auto_actions` after the action that carries them, each marked with that action's id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.rules.board.title import SITE_PROFILE

Action = dict[str, Any]

END_REASONS = {"bankrupt": "bankrupt", "bank": "bank", "manually_ended": "ended"}
#: The site names the copies of a tile its beginner game adds `Beg6-0`, `Beg6-1`, ... (a tile
#: of its own, `Beg6`, drawn as the #6).
BEGINNER_COPY_PREFIX = "Beg"


def copy_name(site_id: str) -> str:
    """`2-1` -> `2`, `8-0` -> `8`, `Beg6-1` -> `6`: the kind of a numbered copy."""
    return site_id.rsplit("-", 1)[0].removeprefix(BEGINNER_COPY_PREFIX)


def tile_copies(tile: str, count: int, beginner_extra: int = 0) -> list[str]:
    """The site's ids of a tile's copies in a supply: its own, then the beginner game's."""
    own = [f"{tile}-{n}" for n in range(count)]
    return own + [f"{BEGINNER_COPY_PREFIX}{tile}-{n}" for n in range(beginner_extra)]


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
        game = SiteGame(
            id=str(raw["id"]),
            title=str(raw["title"]),
            players=tuple(SitePlayer(str(p["id"]), str(p["name"])) for p in raw["players"]),
            seed=int(settings.get("seed", 0)),
            optional_rules=tuple(settings.get("optional_rules") or ()),
            result={str(k): int(v) for k, v in (raw.get("result") or {}).items()},
            end_reason=_end_reason(raw),
            actions=tuple(raw["actions"]),
            rules_profile=str(raw.get("rules_profile") or SITE_PROFILE),
        )
        effective_actions(game.actions)  # an undo to an action the log lacks: refused here
        return game
    except (KeyError, TypeError, ValueError) as error:
        raise ExportError(f"not an 18xx.games game export: {error!r}") from error


def _end_reason(raw: dict[str, Any]) -> str:
    """Ours for how the site's game ended: the site's server stores a game its players ended
    as `status` "finished" with `manually_ended` true, and may write no `game_end_reason`;
    a game whose `status` is not "finished" has not ended."""
    if raw.get("status", "finished") != "finished":
        return ""
    if raw.get("manually_ended") is True:
        return END_REASONS["manually_ended"]
    return END_REASONS.get(str(raw.get("game_end_reason", "")), "")


def load(path: Path) -> SiteGame:
    with path.open() as file:
        return parse(json.load(file))


_IGNORED = {"message"}


def _counts(action: Action) -> bool:
    """Whether an action changes the game (not a chat message nor an auto-action setting)."""
    kind = str(action.get("type", ""))
    return not action.get("skip") and kind not in _IGNORED and not kind.startswith("program_")


def _undoable(action: Action | None) -> bool:
    """What the site's `undo` takes back: any action but a chat message, a `program_*`
    setting included (Game::Base.filtered_actions)."""
    return action is not None and action.get("type") != "message"


def _standing(actions: tuple[Action, ...]) -> list[Action | None]:
    """The log with what undo took back (and redo did not restore) as None, as the site's
    engine filters it: an undo without `action_id` takes back the last action standing, one
    with it everything after that action; redo restores what the last undo took back; any
    other action but a message forgets what could be redone."""
    standing: list[Action | None] = []
    undone: list[list[tuple[int, Action]]] = []
    for action in actions:
        if action.get("skip"):
            standing.append(None)
            continue
        kind = action.get("type", "")
        if kind == "undo":
            start = _undo_from(actions, standing, action.get("action_id"))
            group = [(i, a) for i, a in enumerate(standing[start:], start) if a and _undoable(a)]
            for index, _ in group:
                standing[index] = None
            undone.append(group)
            standing.append(None)
        elif kind == "redo":
            for index, restored in undone.pop() if undone else ():
                standing[index] = restored
            standing.append(None)
        else:
            if kind != "message":
                undone.clear()
            standing.append(action)
    return standing


def _undo_from(actions: tuple[Action, ...], standing: list[Action | None], target: Any) -> int:
    """The index of the first action an undo takes back."""
    if target is None:
        return max((i for i, a in enumerate(standing) if _undoable(a)), default=0)
    if int(target) == 0:
        return 0
    for index, action in enumerate(actions[: len(standing)]):
        if int(action.get("id", -1)) == int(target):
            return index + 1
    raise ExportError(f"undo to action {target}, which the log does not hold")


def effective_actions(actions: tuple[Action, ...]) -> list[Action]:
    """The actions that shaped the game, in order (see the module docstring). An auto-action
    comes as a copy marked `auto_action_of`: the id of the action that carries it."""
    effective: list[Action] = []
    for action in _standing(actions):
        if action is None:
            continue
        if _counts(action):
            effective.append(action)
        automatic = [a for a in action.get("auto_actions", ()) if _counts(a)]
        effective.extend({**a, AUTO_ACTION_OF: action.get("id", 0)} for a in automatic)
    return effective


def quiet_actions(actions: tuple[Action, ...]) -> dict[int, list[int]]:
    """The ids of the actions standing in the log that change nothing (chat messages, programs
    that carry no auto-action), by the logged id of the last action before them that changed
    the game (0 before any): the site's engine writes a state after each of them too."""
    quiet: dict[int, list[int]] = {}
    last = 0
    for action in _standing(actions):
        if action is None:
            continue
        automatic = any(_counts(a) for a in action.get("auto_actions", ()))
        if _counts(action) or automatic:
            last = int(action.get("id", 0))
        else:
            quiet.setdefault(last, []).append(int(action.get("id", 0)))
    return quiet


#: The key of an auto-action's copy naming the action that carries it.
AUTO_ACTION_OF = "auto_action_of"


def logged_id(action: Action) -> int:
    """The id of the logged action `action` is, or is an auto-action of."""
    carrier = action.get(AUTO_ACTION_OF)
    return int(carrier if carrier is not None else action.get("id", 0))
