"""Replaying a site game on one of our tables, and comparing the outcome with the site's.

The same loop drives a table in this process (the domain code directly) or a table behind the
gateway (real services): both sides implement `Table`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kernel.rejection import Rejected
from services.rules.board import Title, load_title
from services.rules.domain.state import Step
from services.rules.domain.turn_steps import turn_steps
from shikoku.v1 import game_pb2
from tools.sitelog.export_format import (
    Action,
    SiteGame,
    effective_actions,
    logged_id,
    quiet_actions,
)
from tools.sitelog.site_graph import SiteGraph, can_place_token
from tools.sitelog.site_steps import private_step_waits, track_step_waits_for_pass
from tools.sitelog.translate import EndGame, Submit, Translator, Untranslatable


class Table(Protocol):
    """A started table with the site game's players seated in the site's order."""

    def view(self) -> dict[str, Any]:
        """The game's state document (GameState.state)."""
        ...

    def submit(self, seat: int, step: Submit) -> list[Caused]:
        """Submits as `seat`; raises Rejected if the game refuses. The events it caused."""
        ...

    def end_game(self) -> None: ...

    def acting_seats(self) -> list[int]:
        """The seats that must act now (GameState.acting_seats)."""
        ...


#: An event our game stored: its type and its fields.
Caused = tuple[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Divergence:
    action_id: int
    action: Action
    reason: str


@dataclass
class Outcome:
    game_id: str
    actions: int = 0
    net_worths: dict[str, int] = field(default_factory=dict)  # site player id -> ours
    end_reason: str = ""
    divergence: Divergence | None = None

    def matches(self, game: SiteGame) -> bool:
        return (
            self.divergence is None
            and self.net_worths == game.result
            and self.end_reason == game.end_reason
        )


def _self_passes(before: dict[str, Any], caused: Sequence[Caused]) -> list[int]:
    """The seats our engine passed for by itself in the private auction after a command (a
    player who can afford nothing, a closed-auction bidder who cannot raise): the site asks
    them all the same (5.2), so its log holds a pass of theirs that ours must not replay."""
    if ((before.get("round") or {}).get("type")) != "private_auction":
        return []
    seats = []
    for kind, fields in caused[1:]:
        if kind == "StockRoundStarted":
            break
        if kind in {"Passed", "ClosedAuctionPassed"}:
            seats.append(int(fields["seat"]))
    return seats


class _Reading:
    """The table's state, read at most once between two changes of it: the replay follows
    our game through the events each submit returns, and reads the state only to translate
    the next action."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._view: dict[str, Any] | None = None

    def view(self) -> dict[str, Any]:
        if self._view is None:
            self._view = self.table.view()
        return self._view

    def submit(self, seat: int, step: Submit) -> list[Caused]:
        self._view = None
        return self.table.submit(seat, step)

    def end_game(self) -> None:
        self._view = None
        self.table.end_game()


@dataclass
class _Follower:
    """Where the site's log holds a pass that our turn has no step for, known from the events
    each submit returned and the state after it (tools/sitelog/site_steps.py): the site's track
    step after the corporation's own lay while its president could still use the port tile
    there; its track step at the start of a turn that ours skipped, after another's action;
    and, in a game cut into steps as the rulebook cuts them (our exports of rulebook
    games), the site's private step at the end of a turn."""

    title: Title
    rulebook_cut: bool
    #: The game's profile strips the privates of their abilities in a beginner game.
    beginner_without_abilities: bool = False
    spent: set[str] = field(default_factory=set)
    #: The corporations whose passes the site's log may hold next, in order, with no step of
    #: ours for them.
    passes_owed: list[str] = field(default_factory=list)
    site_graph: SiteGraph = field(default_factory=SiteGraph)

    def follow(self, caused: Sequence[Caused], view_after: Callable[[], dict[str, Any]]) -> None:
        self.passes_owed = []
        for kind, fields in caused:
            if kind == "TileLaid" and fields.get("ability"):
                self.spent.add(str(fields["ability"]))
        ended = [i for i, (kind, _) in enumerate(caused) if kind == "OperatingTurnEnded"]
        for index, (kind, fields) in enumerate(caused):
            corporation = str(fields.get("corporation") or "")
            if index == 0 and kind == "TileLaid" and not fields.get("ability") and corporation:
                self._after_lay(corporation, view_after())
            if self.rulebook_cut and ended and index == ended[-1]:
                self._after_turn(corporation, view_after())
            # Our turn left the track step by itself where the site's still waits for a pass
            # (the exporter writes it: `_pass_the_site_waits_for`); or the token step, where
            # the site's stale graph finds a city for a token (tools/sitelog/site_graph.py).
            skipped = kind == "StepSkipped" and index > 0
            if skipped and fields.get("step") == Step.TRACK.value:
                self.passes_owed.append(corporation)
            token_step = skipped and fields.get("step") == Step.TOKEN.value
            if token_step and self.site_graph.token_step_waits(self.title, view_after, corporation):
                self.passes_owed.append(corporation)
            self.site_graph.observe(kind, fields)

    def owed(self, action: Action) -> bool:
        """Whether `action` is one of the passes the log may hold next (taken off the list,
        with those before it, which the log did not hold); any other action ends the list."""
        by_corporation = action["type"] == "pass" and action.get("entity_type") == "corporation"
        if by_corporation and action.get("entity") in self.passes_owed:
            del self.passes_owed[: self.passes_owed.index(str(action["entity"])) + 1]
            return True
        self.passes_owed.clear()
        return False

    def _after_lay(self, corporation: str, view: dict[str, Any]) -> None:
        president = _corporation(view, corporation).get("president") or 0
        held: list[str] = next(
            (p["privates"] for p in view["players"] if p["seat"] == president), []
        )
        spent = self.spent | set(view.get("closed_privates") or ())
        stripped = bool(view.get("beginner_game")) and self.beginner_without_abilities
        if track_step_waits_for_pass(self.title, held, spent, stripped):
            self.passes_owed.append(corporation)

    def _after_turn(self, corporation: str, view: dict[str, Any]) -> None:
        closed = set(view.get("closed_privates") or ())
        held = [c for p in view["players"] for c in p["privates"] if c not in closed]
        cash = int(_corporation(view, corporation)["cash"])
        if private_step_waits(self.title, view["phase"], view["beginner_game"], cash, held):
            self.passes_owed.append(corporation)


def _corporation(view: dict[str, Any], corporation: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in view["corporations"] if c["id"] == corporation)
    return found


#: The step of ours each operating action of the site's belongs to.
_STEP_OF = {
    "lay_tile": Step.TRACK,
    "place_token": Step.TOKEN,
    "run_routes": Step.ROUTES,
    "dividend": Step.DIVIDEND,
    "buy_train": Step.TRAINS,
    "discard_train": Step.TRAINS,
}
#: A player's actions that no step of a corporation's turn takes (a president's emergency sale
#: is one of its train step): at the site, the operating round is over.
_STOCK_ACTIONS = {"par", "buy_shares", "pass"}


def _step_the_site_skipped(
    action: Action, view: dict[str, Any], order: Sequence[Step], title: Title
) -> str:
    """In a game cut as the rulebook cuts it (our exports of rulebook games): the corporation
    whose current step the site skipped by itself, where ours waits for it, before `action`
    (the site's token step where no token can be placed, its route step without a route, its
    train step where no train can be bought: our export wrote nothing there); else ""."""
    round_ = view.get("round") or {}
    if round_.get("type") != "operating_round" or round_.get("discarding") or round_.get("ability"):
        return ""
    operating, step = str(round_.get("operating") or ""), round_.get("step")
    if not operating or step is None:
        return ""
    if action.get("entity") == operating:
        if action["type"] == "pass":  # for a later step: the route step takes none, nor a
            # token step where no token can be placed (our export writes no pass there)
            if step == Step.TOKEN.value and not can_place_token(title, view, operating):
                return operating
            return operating if step == Step.ROUTES.value else ""
        target = _STEP_OF.get(action["type"])
        return operating if target and order.index(Step(step)) < order.index(target) else ""
    if action["type"] == "sell_shares" and action.get("entity_type") == "player":
        # A president's emergency sale belongs to a train step that must buy (a corporation
        # without trains); any other sale, to the stock round after this turn.
        before_trains = order.index(Step(step)) < order.index(Step.TRAINS)
        not_forced = step == Step.TRAINS.value and bool(_corporation(view, operating)["trains"])
        return operating if before_trains or not_forced else ""
    other_corporation = action.get("entity_type") == "corporation"
    stock_action = action.get("entity_type") == "player" and action["type"] in _STOCK_ACTIONS
    return operating if other_corporation or stock_action else ""


def _skip(step: str) -> game_pb2.Command:
    """What leaves a step with nothing done: no routes at a route step (it takes no pass)."""
    if step == Step.ROUTES:
        return game_pb2.Command(run_routes=game_pb2.RunRoutes())
    return game_pb2.Command(pass_turn=game_pb2.Pass())


def step_through(game: SiteGame, table: Table) -> Iterator[Action]:
    """Submits the effective actions one by one, yielding each after it took effect; raises
    Rejected or Untranslatable at the first our game refuses. Under the `18xx.games` profile
    our turn has the site's steps (services/rules/domain/turn_steps.py), so each action is one
    command, but for the passes the site asks for and our game does not (a player's that our
    engine made by itself in the private auction; `_Follower`'s)."""
    translator = Translator(game)
    reading = _Reading(table)
    title = load_title(game.title)
    profile = title.profile(game.rules_profile)
    steps = turn_steps(profile)
    rulebook_cut = not steps.has(Step.PRIVATES)
    order = [spec.step for spec in steps.steps]
    follower = _Follower(title, rulebook_cut, profile.beginner_privates_without_abilities)
    self_passes: list[int] = []
    effective = effective_actions(game.actions)
    for number, action in enumerate(effective, start=1):
        ending = number == len(effective) and bool(game.end_reason) and rulebook_cut
        if follower.owed(action):
            yield action
            continue
        if action["type"] == "pass" and action.get("entity_type") == "player":
            seat = translator.seat_of_player(action["entity"])
            if self_passes and self_passes[0] == seat:
                self_passes.pop(0)
                yield action
                continue
        self_passes.clear()
        before = reading.view()
        translator.settle(before)
        owed = False
        while rulebook_cut and (skipped := _step_the_site_skipped(action, before, order, title)):
            seat = translator.acting_seat({"entity": skipped, "entity_type": "corporation"}, before)
            caused = reading.submit(seat, Submit(seat, _skip(before["round"]["step"])))
            # Leaving the step may pass the next corporation's track step by itself: the
            # site's pass there is the action itself.
            follower.follow(caused, reading.view)
            before = reading.view()
            if owed := follower.owed(action):
                break
        if owed:
            yield action
            continue
        step = translator.translate(action, before)
        if isinstance(step, EndGame):
            reading.end_game()
        else:
            caused = reading.submit(step.seat, step)
            self_passes[:] = _self_passes(before, caused)
            follower.follow(caused, reading.view)
        if ending:
            _end_as_the_site(reading, translator)
        yield action


def _end_as_the_site(reading: _Reading, translator: Translator) -> None:
    """After the last action of a finished game cut as the rulebook cuts it: the route steps
    the site skipped there (no route; our export writes no run), which ended the game."""
    view = reading.view()
    while not view.get("result") and (view.get("round") or {}).get("step") == Step.ROUTES.value:
        operating = {"entity": view["round"]["operating"], "entity_type": "corporation"}
        seat = translator.acting_seat(operating, view)
        reading.submit(seat, Submit(seat, _skip(Step.ROUTES.value)))
        view = reading.view()


def replay(
    game: SiteGame,
    table: Table,
    progress: Callable[[int, int], None] | None = None,
    observe: Callable[[Action], None] | None = None,
) -> Outcome:
    """Submits every effective action; stops at the first one our game refuses. `observe` is
    told each logged action once it took effect with the auto-actions it carries."""
    effective = effective_actions(game.actions)
    total = len(effective)
    outcome = Outcome(game_id=game.id)
    steps = step_through(game, table)
    while True:
        try:
            next(steps)
        except StopIteration:
            break
        except (Rejected, Untranslatable) as error:
            action = effective[outcome.actions]
            reason = f"{getattr(error, 'reason', type(error).__name__)}: {error}"
            outcome.divergence = Divergence(logged_id(action), action, reason)
            break
        outcome.actions += 1
        done = effective[outcome.actions - 1]
        following = effective[outcome.actions] if outcome.actions < total else None
        carried_on = following is not None and logged_id(following) == logged_id(done)
        if observe and not carried_on:
            observe(done)
        if progress:
            progress(outcome.actions, total)
    final = table.view()
    result = final.get("result") or {}
    outcome.end_reason = str(result.get("reason", ""))
    by_seat = {int(n["seat"]): int(n["net_worth"]) for n in result.get("net_worths", [])}
    outcome.net_worths = {
        player.id: by_seat[seat]
        for seat, player in enumerate(game.players, start=1)
        if seat in by_seat
    }
    return outcome


def replay_viewed(
    game: SiteGame,
    table: Table,
    seen: Callable[[int, dict[str, Any], list[int]], None],
    progress: Callable[[int, int], None] | None = None,
) -> Outcome:
    """`replay`, telling `seen` our state document and acting seats before the first action
    (as action 0, the way the site's per-action states begin) and after each logged action
    with its auto-actions, with the site's action id; and, as the site does, the same state
    again after each action standing in the log that changes nothing (a chat message, a
    program that carries no auto-action)."""
    quiet = quiet_actions(game.actions)

    def tell(action_id: int) -> None:
        view, acting = table.view(), table.acting_seats()
        for each in (action_id, *quiet.get(action_id, ())):
            seen(each, view, acting)

    tell(0)
    return replay(game, table, progress, lambda action: tell(logged_id(action)))
