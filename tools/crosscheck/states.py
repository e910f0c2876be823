"""Our state after every action of an export, compared with the site's: the export replayed
in this process as `shikoku import --in-process --states` replays it (`replay_viewed` on an
`InProcessTable`), each state, as a line of the site's format (`lines.OurLines`), held to the
site's line for the same action in every field (`lines.line_differences`), less what
`allowances` explains."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from tools.crosscheck.allowances import Seen, allowed
from tools.crosscheck.lines import OurLines, line_differences
from tools.sitelog.export_format import Action, SiteGame, effective_actions
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import Outcome, replay_viewed


@dataclass(frozen=True, slots=True)
class FirstDifference:
    action_id: int
    action: Action | None  # None for the state before the first action
    found: tuple[str, ...]


@dataclass
class StateCheck:
    """`compared`: the site's states held to ours (every one up to the site's last, when our
    replay gets that far); `first`: the first that differs beyond the allowances."""

    outcome: Outcome
    site_states: int
    compared: int = 0
    first: FirstDifference | None = None
    allowed: Counter[str] = field(default_factory=Counter)

    site_ids: tuple[int, ...] = ()

    @property
    def equal(self) -> bool:
        return self.first is None and self.compared == self.site_states

    @property
    def first_disagreement(self) -> int | None:
        """The first site action after which our state is not the site's (beyond the
        allowances), or that our replay did not get past; None when every state agrees."""
        candidates = [self.first.action_id] if self.first else []
        if self.compared < self.site_states:
            candidates.append(self.site_ids[self.compared])
        return min(candidates, default=None)


def check_states(
    game: SiteGame, site_states: Sequence[dict[str, Any]], table: InProcessTable | None = None
) -> StateCheck:
    """Replays `game` on `table` (a new in-process table by default) and compares our state
    after each action with the site's state for that action id (the site's list ends at the
    action it refused, if it refused one)."""
    site = {int(state["id"]): state for state in site_states}
    ids = [int(state["id"]) for state in site_states]
    following = dict(pairwise(ids))
    actions = {int(a.get("id", 0)): a for a in effective_actions(game.actions)}
    check = StateCheck(Outcome(game.id), site_states=len(site_states), site_ids=tuple(ids))
    lines = OurLines(game)

    def seen(action_id: int, ours: dict[str, Any], acting: Sequence[int]) -> None:
        line = lines.line(
            action_id, ours, acting, actions.get(action_id)
        )  # every state, in order: it keeps the turn
        if action_id not in site:
            return  # past the action the site refused
        check.compared += 1
        found = line_differences(site[action_id], line)
        if not found:
            return
        allowance = allowed(Seen(game, actions, site, following, action_id, ours, line, found))
        if allowance is not None:
            check.allowed[allowance.name] += 1
        elif check.first is None:
            check.first = FirstDifference(action_id, actions.get(action_id), tuple(found))

    check.outcome = replay_viewed(game, table or InProcessTable(game), seen)
    return check
