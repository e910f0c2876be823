"""Rulebook 8.2: the steps of a corporation's turn, as data.

A turn is an ordered tuple of `StepSpec`s: what each step takes, and when it ends by itself
with nothing done. The operating round walks it (services/rules/domain/operating_round.py); the
rules profile chooses it. The rulebook's list is `RULEBOOK`; each departure of a profile is a
difference of that list (a step that also ends by itself under one more condition, a step
added), so the site's turn reads as the rulebook's with its changes named.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from services.rules.board.title import SITE_PROFILE, RulesProfile
from services.rules.domain.commands import (
    BuyPrivateForCorporation,
    BuyTrain,
    DeclareBankruptcy,
    LayTile,
    Pass,
    PayDividends,
    PlaceToken,
    PlayerCommand,
    RunRoutes,
    SellShares,
)
from services.rules.domain.state import Step


class EndsWhen(StrEnum):
    """What ends a step by itself, with nothing done there."""

    #: 8.5: a corporation without trains runs nothing (and withholds nothing, 8.6).
    NO_TRAINS = "no_trains"
    #: 8.6: nothing was earned, so nothing is paid (the share price still falls, 8.6.2).
    NO_REVENUE = "no_revenue"
    #: No token can be placed now.
    NO_TOKEN = "no_token"
    #: The trains have no route to run.
    NO_ROUTE = "no_route"
    #: No train can be bought, and none must be (8.7.5).
    NO_TRAIN_TO_BUY = "no_train_to_buy"
    #: No private is for sale to the corporation now (8.8).
    NO_PRIVATE_FOR_SALE = "no_private_for_sale"


#: The conditions that wait while a private's lay is pending (its seller may first use it).
WAIT_FOR_ABILITY = frozenset(
    {EndsWhen.NO_TOKEN, EndsWhen.NO_ROUTE, EndsWhen.NO_TRAIN_TO_BUY, EndsWhen.NO_PRIVATE_FOR_SALE}
)


@dataclass(frozen=True, slots=True)
class StepSpec:
    step: Step
    #: The commands the step takes (besides those `TurnSteps.at_any_step` lists).
    takes: tuple[type[PlayerCommand], ...]
    ends_when: tuple[EndsWhen, ...] = ()
    #: The step waits for a pass even where a pass is all that is possible (elsewhere a player
    #: without a choice passes by itself).
    waits_for_pass: bool = False

    def ending(self, condition: EndsWhen) -> StepSpec:
        return dataclasses.replace(self, ends_when=(*self.ends_when, condition))


@dataclass(frozen=True, slots=True)
class TurnSteps:
    steps: tuple[StepSpec, ...]
    #: What the corporation may do at any of its steps (8.8: buy a private).
    at_any_step: tuple[type[PlayerCommand], ...] = ()

    @property
    def first(self) -> Step:
        return self.steps[0].step

    def has(self, step: Step) -> bool:
        return any(spec.step is step for spec in self.steps)

    def spec(self, step: Step) -> StepSpec:
        for spec in self.steps:
            if spec.step is step:
                return spec
        raise KeyError(step)

    def after(self, step: Step) -> Step | None:
        """The step that follows `step`; None after the last, which ends the turn."""
        order = [spec.step for spec in self.steps]
        index = order.index(step) + 1
        return order[index] if index < len(order) else None

    def takes(self, step: Step, command: PlayerCommand) -> bool:
        return isinstance(command, (*self.spec(step).takes, *self.at_any_step))

    def ending(self, step: Step, condition: EndsWhen) -> TurnSteps:
        """This list, but `step` also ends by itself when `condition` holds."""
        return self._changing(step, lambda spec: spec.ending(condition))

    def waiting(self, step: Step) -> TurnSteps:
        """This list, but `step` waits for a pass even where nothing else is possible."""
        return self._changing(step, lambda spec: dataclasses.replace(spec, waits_for_pass=True))

    def _changing(self, step: Step, change: Callable[[StepSpec], StepSpec]) -> TurnSteps:
        steps = tuple(change(s) if s.step is step else s for s in self.steps)
        return dataclasses.replace(self, steps=steps)

    def then(self, spec: StepSpec) -> TurnSteps:
        """This list with `spec` as its last step."""
        return dataclasses.replace(self, steps=(*self.steps, spec))


RULEBOOK = TurnSteps(
    steps=(
        StepSpec(Step.TRACK, takes=(LayTile, Pass)),
        StepSpec(Step.TOKEN, takes=(PlaceToken, Pass)),
        StepSpec(Step.ROUTES, takes=(RunRoutes,), ends_when=(EndsWhen.NO_TRAINS,)),
        StepSpec(Step.DIVIDEND, takes=(PayDividends,), ends_when=(EndsWhen.NO_REVENUE,)),
        StepSpec(Step.TRAINS, takes=(BuyTrain, SellShares, DeclareBankruptcy, Pass)),
    ),
    at_any_step=(BuyPrivateForCorporation,),
)


def site_steps(steps: TurnSteps) -> TurnSteps:
    """The site's cut of the same turn: a train step where no train can be bought ends by
    itself, the track step waits for a pass whenever the corporation may lay, legal tile or not
    (`Step::Tracker#can_lay_tile?`), and a last step of its own offers privates (then a pass
    ends the turn). The same moves are legal; only where a pass is asked for differs."""
    private_step = StepSpec(
        Step.PRIVATES,
        takes=(BuyPrivateForCorporation, Pass),
        ends_when=(EndsWhen.NO_PRIVATE_FOR_SALE,),
    )
    return (
        steps.ending(Step.TRAINS, EndsWhen.NO_TRAIN_TO_BUY).waiting(Step.TRACK).then(private_step)
    )


@cache
def turn_steps(rules: RulesProfile) -> TurnSteps:
    """The steps of a turn under `rules`: the rulebook's, with the profile's differences."""
    steps = RULEBOOK
    if rules.token_step_skipped_when_no_token_can_be_placed:
        steps = steps.ending(Step.TOKEN, EndsWhen.NO_TOKEN)
    if rules.route_step_skipped_when_no_route:
        steps = steps.ending(Step.ROUTES, EndsWhen.NO_ROUTE)
    if rules.turn_steps == SITE_PROFILE:
        steps = site_steps(steps)
    return steps
