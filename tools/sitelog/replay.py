"""Replaying a site game on one of our tables, and comparing the outcome with the site's.

The same loop drives a table in this process (the domain code directly) or a table behind the
gateway (real services): both sides implement `Table`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Protocol

from kernel.rejection import Rejected
from shikoku.v1 import game_pb2
from tools.sitelog.export_format import Action, SiteGame, effective_actions
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

    def can_pass(self) -> bool:
        """Whether passing is among the legal actions now."""
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


# Which of our operating steps a site action belongs to.
_STEP_OF = {
    "lay_tile": "track",
    "place_token": "token",
    "run_routes": "routes",
    "dividend": "dividend",
    "buy_train": "trains",
    "discard_train": "trains",
}
_STEPS = ["track", "token", "routes", "dividend", "trains"]
_TRAIN_STEP_ACTIONS = {"buy_train", "discard_train", "buy_company", "sell_shares", "bankrupt"}


def _current_action(game: SiteGame, done: int) -> Action:
    return effective_actions(game.actions)[done]


def _operating(view: dict[str, Any]) -> tuple[str, str]:
    round_ = view.get("round") or {}
    if round_.get("type") != "operating_round":
        return "", ""
    return str(round_.get("operating") or ""), str(round_.get("step") or "")


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


def _phantom_pass(
    action: Action,
    upcoming: Action | None,
    view: dict[str, Any],
    table: Table,
    self_passes: list[int],
    translator: Translator,
) -> bool:
    """The site sometimes asks a corporation to pass a step that has nothing to do, where our
    engine moves on by itself: a pass our engine does not allow there, or one that cannot end
    the turn because the same corporation goes on buying trains right after it. Once phase 3
    has begun, the site also ends each corporation's turn with a blocking "buy a private" step
    and logs one more pass for it, when our engine (rulebook 8.2, 8.8: a private may be bought
    at any point of the turn) has already moved on to the next corporation or round: a pass of a
    corporation that is not operating now. A player's pass that our engine already made by
    itself (`self_passes`, taken from the front as the log shows them)."""
    if action["type"] != "pass":
        self_passes.clear()
        return False
    if action.get("entity_type") == "player":
        seat = translator.seat_of_player(action["entity"])
        if self_passes and self_passes[0] == seat:
            self_passes.pop(0)
            return True
        self_passes.clear()
        return False
    corporation, step = _operating(view)
    if action.get("entity_type") == "corporation" and action.get("entity") != corporation:
        return True
    if action.get("entity") != corporation:
        return False
    continues = (
        step == "trains"
        and upcoming is not None
        and upcoming.get("entity") == corporation
        and upcoming["type"] in _TRAIN_STEP_ACTIONS
    )
    return continues or not table.can_pass()


def _skipped_routes(
    action: Action, later: Sequence[Action], table: Table, translator: Translator
) -> None:
    """The site skips the route step (and withholds) by itself for a corporation whose trains
    have no route, and logs nothing for it; our engine asks for the routes, so run none (our
    engine then withholds by itself, 8.6) once the log shows the turn went past routes: an
    action of another corporation or player, or of this corporation other than its routes or
    a pass or a private bought (8.2, 8.8: at any point of the turn) before its routes.
    `later`: the log's actions after `action`."""
    view = table.view()
    corporation, step = _operating(view)
    entity, kind = action.get("entity"), action["type"]
    if step != "routes" or action.get("entity_type") == "company":
        return
    if entity == corporation and (
        kind == "run_routes"
        or (kind in {"pass", "buy_company"} and _routes_follow(corporation, later))
    ):
        return
    seat = translator.acting_seat({"entity": corporation, "entity_type": "corporation"}, view)
    table.submit(seat, Submit(seat, game_pb2.Command(run_routes=game_pb2.RunRoutes())))


def _routes_follow(corporation: str, later: Sequence[Action]) -> bool:
    """Whether the corporation's routes come next in the log, after any privates it buys and
    any private's ability used meanwhile."""
    for action in later:
        if action.get("entity_type") == "company":
            continue
        if action.get("entity") == corporation and action["type"] == "buy_company":
            continue
        return (action["type"], action.get("entity")) == ("run_routes", corporation)
    return False


def _skip(step: str) -> game_pb2.Command:
    """What leaves a step the site skipped: no routes at a route step (it cannot be passed),
    else a pass."""
    if step == "routes":
        return game_pb2.Command(run_routes=game_pb2.RunRoutes())
    return game_pb2.Command(pass_turn=game_pb2.Pass())


def _catch_up(action: Action, table: Table, translator: Translator) -> None:
    """The site skipped a step that our engine still offers (nothing the site wanted to do
    there): pass it, so that the action lands on the step it belongs to; a route step the site
    skipped runs no routes (it cannot be passed). Our step is read again before each pass: our
    engine skips some steps by itself (a corporation without trains runs no routes and pays
    nothing, 8.5/8.6)."""
    target = _STEP_OF.get(action["type"])
    if target is None:
        return
    for _ in _STEPS:
        view = table.view()
        corporation, step = _operating(view)
        if action.get("entity") != corporation or step not in _STEPS:
            return
        if _STEPS.index(step) >= _STEPS.index(target):
            return
        seat = translator.acting_seat(action, view)
        table.submit(seat, Submit(seat, _skip(step)))


#: A player's actions of a stock round: the operating round before it is over at the site.
_STOCK_ACTIONS = {"par", "buy_shares"}


def _end_turn_the_site_ended(
    action: Action, upcoming: Action | None, table: Table, translator: Translator
) -> None:
    """An action of a corporation that is yet to operate, while ours is still in another's
    turn: the site ended that turn by itself (its last steps had nothing to do, say a train
    step where nothing can be bought), ours waits for passes there. Pass them (a route step
    runs no routes), reading our step again before each. A pass counts only when the same
    corporation acts next (the site's blocking "buy a private" pass ends a turn instead). A
    player's stock-round action likewise ends the last turn of an operating round."""
    stock_action = action.get("entity_type") == "player" and action["type"] in _STOCK_ACTIONS
    if action.get("entity_type") != "corporation" and not stock_action:
        return
    if action["type"] == "pass" and (upcoming or {}).get("entity") != action["entity"]:
        return
    ending = None
    for _ in range(len(_STEPS) + 1):
        view = table.view()
        corporation, step = _operating(view)
        ending = corporation if ending is None else ending
        round_ = view.get("round") or {}
        waiting = round_.get("discarding") or round_.get("ability")
        if corporation != ending or not corporation or waiting:
            return
        if action["entity"] in (corporation, *round_["operated"]):
            return
        seat = translator.acting_seat({"entity": corporation, "entity_type": "corporation"}, view)
        table.submit(seat, Submit(seat, _skip(step)))


def step_through(game: SiteGame, table: Table) -> Iterator[Action]:
    """Submits the effective actions one by one, yielding each after it took effect; raises
    Rejected or Untranslatable at the first our game refuses."""
    translator = Translator(game)
    actions = effective_actions(game.actions)
    self_passes: list[int] = []
    for done, action in enumerate(actions, start=1):
        upcoming = actions[done] if done < len(actions) else None
        _skipped_routes(action, actions[done:], table, translator)
        _end_turn_the_site_ended(action, upcoming, table, translator)
        if not _phantom_pass(action, upcoming, table.view(), table, self_passes, translator):
            _catch_up(action, table, translator)
            _skipped_routes(action, actions[done:], table, translator)
            _catch_up(action, table, translator)
            before = table.view()
            step = translator.translate(action, before)
            if isinstance(step, EndGame):
                table.end_game()
            else:
                self_passes[:] = _self_passes(before, table.submit(step.seat, step))
                translator.settle(table.view())
        if upcoming is not None:
            _take_skipped_steps(upcoming, actions[done + 1 :], table, translator)
        elif game.end_reason:
            _take_steps_after_the_log(table, translator)
        yield action


def _take_skipped_steps(
    upcoming: Action, later: Sequence[Action], table: Table, translator: Translator
) -> None:
    """Right after an action, the steps the site then took by itself (a skipped route step
    withholds, which moves the share price), so that our state after each action is the
    site's: what the upcoming action's own catch-up would do, one action earlier. What our game
    refuses here is left for that catch-up to report, against the action it belongs to."""
    try:
        _skipped_routes(upcoming, later, table, translator)
        if upcoming["type"] != "pass":
            _catch_up(upcoming, table, translator)
            _skipped_routes(upcoming, later, table, translator)
            _catch_up(upcoming, table, translator)
    except (Rejected, Untranslatable):
        pass


def _take_steps_after_the_log(table: Table, translator: Translator) -> None:
    """A finished game's log may end with a lay before a route step the site skipped (no
    route): the site withholds there by itself, and that is part of its final state."""
    if table.view().get("result") is None:
        with suppress(Rejected, Untranslatable):
            _skipped_routes({"type": "end_of_log"}, [], table, translator)


def replay(
    game: SiteGame,
    table: Table,
    progress: Callable[[int, int], None] | None = None,
    observe: Callable[[Action], None] | None = None,
) -> Outcome:
    """Submits every effective action; stops at the first one our game refuses. `observe` is
    told each action once it took effect."""
    total = len(effective_actions(game.actions))
    outcome = Outcome(game_id=game.id)
    steps = step_through(game, table)
    while True:
        try:
            next(steps)
        except StopIteration:
            break
        except (Rejected, Untranslatable) as error:
            action = _current_action(game, outcome.actions)
            reason = f"{getattr(error, 'reason', type(error).__name__)}: {error}"
            outcome.divergence = Divergence(int(action.get("id", 0)), action, reason)
            break
        outcome.actions += 1
        if observe:
            observe(_current_action(game, outcome.actions - 1))
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
    seen: Callable[[int, dict[str, Any]], None],
    progress: Callable[[int, int], None] | None = None,
) -> Outcome:
    """`replay`, telling `seen` our state document before the first action (as action 0, the
    way the site's per-action states begin) and after each action, with the site's action id."""
    seen(0, table.view())

    def observed(action: Action) -> None:
        seen(int(action.get("id", 0)), table.view())

    return replay(game, table, progress, observed)
