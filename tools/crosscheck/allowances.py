"""The differences from the site's states that are allowed, and why: each one a documented
difference of representation between the two engines (docs/rules-notes.md, "How the site's
steps differ" and "Comparing states"), never a difference of rules, and never a special case of
one game. Anything not explained here is a disagreement."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from services.rules.board import load_title
from services.rules.board.title import SITE_PROFILE
from tools.crosscheck.lines import line_differences
from tools.sitelog.export_format import Action, SiteGame


@dataclass(frozen=True, slots=True)
class Seen:
    """Our state document after the site's action `action_id`, with the site's states."""

    game: SiteGame
    actions: Mapping[int, Action]  # the export's effective actions by id
    site: Mapping[int, dict[str, Any]]  # action id -> the site's state after it
    following: Mapping[int, int]  # action id -> the site's next action id
    action_id: int
    ours: dict[str, Any]  # our state document
    line: dict[str, Any]  # the same, as a line of the site's format (lines.OurLines)
    found: list[str]  # what differs from the site's state after action_id


@dataclass(frozen=True, slots=True)
class Allowance:
    name: str
    why: str
    explains: Callable[[Seen], bool]


def _ahead_of_a_waiting_step(seen: Seen) -> bool:
    """The site, after this action, offers the entity that must act nothing but a pass (its
    own engine says so: the state's `offers`, site_states.rb), and our state already is the
    site's after that pass, in every field; or after the passes of such entities in a row
    (bidders who cannot outbid, each asked in turn)."""
    at = seen.action_id
    while seen.site[at].get("offers") == ["pass"]:
        following = seen.following.get(at)  # a pass: nothing else was offered
        if following is None:
            return False
        if not line_differences(seen.site[following], seen.line):
            return True
        at = following
    return False


def _past_the_port_tile_offer(seen: Seen) -> bool:
    """The site, after a corporation's lay, offers it `lay_tile` and `pass` because its
    president holds the Mitsubishi Ferry, whose port tile may go down at that step; the export's
    next action is the corporation's pass; and our state already is the site's after it."""
    here = seen.site[seen.action_id]
    following = seen.following.get(seen.action_id)
    corporation = here.get("next")
    if following is None or here.get("offers") != ["lay_tile", "pass"]:
        return False
    upcoming = seen.actions.get(following) or {}
    if upcoming.get("type") != "pass" or upcoming.get("entity") != corporation:
        return False
    president = next(
        (c.get("president") for c in seen.ours["corporations"] if c["id"] == corporation), None
    )
    holders = [p for p, v in here["players"].items() if "MF" in v["companies"]]
    seats = {str(p.id): seat for seat, p in enumerate(seen.game.players, start=1)}
    if not president or [seats.get(h) for h in holders] != [int(president)]:
        return False
    return not line_differences(seen.site[following], seen.line)


def _ahead_of_the_sites_cut_of_the_turn(seen: Seen) -> bool:
    """A game cut into steps as the rulebook cuts it (its profile's `turn_steps`): the export's
    next action is a pass by the entity the site waits on, and our state already is the site's
    after that pass."""
    if not _rulebook_cut(seen):
        return False
    here = seen.site[seen.action_id]
    following = seen.following.get(seen.action_id)
    if following is None:
        return False
    upcoming = seen.actions.get(following) or {}
    if upcoming.get("type") != "pass" or str(upcoming.get("entity")) != str(here.get("next")):
        return False
    return not line_differences(seen.site[following], seen.line)


def _rulebook_cut(seen: Seen) -> bool:
    return load_title(seen.game.title).profile(seen.game.rules_profile).turn_steps != SITE_PROFILE


def _behind_a_step_the_site_skips(seen: Seen) -> bool:
    """A game cut as the rulebook cuts it: our corporation waits at its token or route step,
    where the site's ended by itself (nothing to place, no route) and withheld, so only its
    share price differs (and who acts next and the round, where the site's turn and round then
    ended too), up to the next action, which is the site's next entity's."""
    if not _rulebook_cut(seen):
        return False
    round_ = seen.ours.get("round") or {}
    corporation = round_.get("operating")
    if not corporation or round_.get("step") not in _WAITING_HERE:
        return False
    here = seen.site[seen.action_id]
    # Where the site's turn then ended too (nothing to buy), and the round with it, who acts
    # next and the round differ as well: nothing else may, but for the privates' revenue
    # where the site's next operating round has begun.
    moved_on = _WHERE_THE_SITE_MOVED_ON if str(here.get("next")) != corporation else set()
    rest = [
        d
        for d in seen.found
        if not d.startswith(f"{corporation} price:") and d.split(":", 1)[0] not in moved_on
    ]
    next_round = any(d.startswith("round number:") for d in seen.found)
    if rest and not (next_round and _privates_revenue_paid(rest)):
        return False
    following = seen.following.get(seen.action_id)
    upcoming = seen.actions.get(following) if following is not None else None
    acting = {corporation, str(here.get("next"))}
    return upcoming is not None and str(upcoming.get("entity")) in acting


_CASH = re.compile(r"^(bank|player \S+ cash|[A-Z]{2,3} cash): site (-?\d+), ours (-?\d+)$")


def _privates_revenue_paid(found: list[str]) -> bool:
    """Whether the differences are only cash the bank paid out to holders (the privates'
    revenue at the start of an operating round): each holder has more at the site, the bank
    as much less."""
    paid, bank = 0, None
    for difference in found:
        matched = _CASH.match(difference)
        if matched is None:
            return False
        what, site, ours = matched.group(1), int(matched.group(2)), int(matched.group(3))
        if what == "bank":
            bank = site - ours
        elif site <= ours:
            return False
        else:
            paid += site - ours
    return bank is not None and bank == -paid


_WAITING_HERE = {"token", "routes"}
_WHERE_THE_SITE_MOVED_ON = {"next to act", "round", "turn", "round number"}
_BEFORE_ROUTES = {"track", "token"}


def _withheld_before_buying_privates(seen: Seen) -> bool:
    round_ = seen.ours.get("round") or {}
    corporation = round_.get("operating")
    if not corporation or round_.get("step") not in _BEFORE_ROUTES:
        return False
    if any(not d.startswith(f"{corporation} price:") for d in seen.found):
        return False
    following = seen.following.get(seen.action_id)
    upcoming = seen.actions.get(following) if following is not None else None
    if upcoming is None:
        return False
    own = upcoming.get("entity") == corporation and upcoming["type"] in {"buy_company", "pass"}
    return own or upcoming.get("entity_type") == "company"


ALLOWANCES: tuple[Allowance, ...] = (
    Allowance(
        name="past a step the site waits on",
        why=(
            "the site's engine offers the entity to act nothing but a pass (its state's "
            "`offers`), which our engine makes by itself (docs/rules-notes.md, 'What it still "
            "absorbs': a player in the private auction with no bid possible), so after that "
            "action we already are in the state the site reaches with its next action"
        ),
        explains=_ahead_of_a_waiting_step,
    ),
    Allowance(
        name="past the port tile the site offers at the track step",
        why=(
            "docs/rules-notes.md, 'Passing a step with nothing to do': after a corporation's lay "
            "the site keeps its track step open, offering a lay and a pass, while its president "
            "holds the Mitsubishi Ferry (the port tile is theirs to place there, 15 B); our "
            "turn leaves the track step with the lay, the port tile going down whenever its "
            "owner may, so after the lay we already are in the state the site reaches with the "
            "corporation's pass"
        ),
        explains=_past_the_port_tile_offer,
    ),
    Allowance(
        name="past a step of the site's cut of the turn (a rulebook game)",
        why=(
            "docs/rules-notes.md, 'Rules profiles': `turn_steps` changes no rule, only where "
            "the game waits for a pass; a game played under the rulebook's cut leaves a step "
            "by itself where the site's cut (a train step that may still buy, a private step "
            "at the turn's end) waits for the pass the export gives it, so after that action "
            "we already are in the state the site reaches with the pass"
        ),
        explains=_ahead_of_the_sites_cut_of_the_turn,
    ),
    Allowance(
        name="behind a step the site skips (a rulebook game)",
        why=(
            "docs/rules-notes.md, 'Rules profiles': under the rulebook our token step waits "
            "where no token can be placed and our route step where no route can be run "
            "(`token_step_skipped_when_no_token_can_be_placed` and "
            "`route_step_skipped_when_no_route` off); the site's steps end by themselves and "
            "the corporation withholds there, so only its share price differs until its next "
            "action, before which the importer leaves our step"
        ),
        explains=_behind_a_step_the_site_skips,
    ),
    Allowance(
        name="withheld before the blocking buy-a-private step",
        why=(
            "docs/rules-notes.md, 'The blocking \"buy a private\" step': a corporation whose "
            "route step the site skips (no route) withholds there, before the privates it buys "
            "in the step that ends its turn; ours may buy them at any point (8.2, 8.8) and "
            "withholds after them. Only that corporation's share price differs, while it buys "
            "privates (or a private uses its ability) before our route step, up to its pass "
            "that ends the site's step"
        ),
        explains=_withheld_before_buying_privates,
    ),
)


def allowed(seen: Seen) -> Allowance | None:
    """The allowance that explains `seen.found`, if one does."""
    return next((a for a in ALLOWANCES if a.explains(seen)), None)


def seats_in_play_order(document: dict[str, Any]) -> dict[str, Any]:
    """An export with its players numbered 1, 2, ... in the order it lists them (play order).

    The one allowed difference between an export and the export of the same game imported
    again: a game played here numbers its seats as the players joined, an imported one in the
    site's play order (as tests/sitelog/test_round_trip.py compares players by name). Player
    ids are the only thing this renumbers: in `players`, `result` and the acting player of each
    action."""
    number = {p["id"]: n for n, p in enumerate(document["players"], start=1)}

    def action(one: Action) -> Action:
        if one.get("entity_type") != "player":
            return one
        return {**one, "entity": number.get(one["entity"], one["entity"])}

    return {
        **document,
        "players": [{**p, "id": number[p["id"]]} for p in document["players"]],
        "actions": [action(a) for a in document["actions"]],
        "result": {str(number[int(k)]): v for k, v in document["result"].items()},
    }
