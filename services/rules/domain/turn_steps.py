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
from dataclasses import dataclass, field
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
    #: Per step, its spec, the step after it (None after the last) and the commands it takes
    #: with those of any step: read from `steps` once (every event of a turn asks).
    _specs: dict[Step, StepSpec] = field(init=False, repr=False, compare=False, hash=False)
    _after: dict[Step, Step | None] = field(init=False, repr=False, compare=False, hash=False)
    _takes: dict[Step, tuple[type[PlayerCommand], ...]] = field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        order = [spec.step for spec in self.steps]
        object.__setattr__(self, "_specs", {spec.step: spec for spec in reversed(self.steps)})
        following: dict[Step, Step | None] = {}
        for index in reversed(range(len(order))):  # the first of a repeated step decides
            following[order[index]] = order[index + 1] if index + 1 < len(order) else None
        object.__setattr__(self, "_after", following)
        takes = {spec.step: (*spec.takes, *self.at_any_step) for spec in reversed(self.steps)}
        object.__setattr__(self, "_takes", takes)

    @property
    def first(self) -> Step:
        return self.steps[0].step

    def has(self, step: Step) -> bool:
        return step in self._specs

    def spec(self, step: Step) -> StepSpec:
        return self._specs[step]

    def after(self, step: Step) -> Step | None:
        """The step that follows `step`; None after the last, which ends the turn."""
        if step not in self._after:
            raise ValueError(f"{step} is not a step of this turn")
        return self._after[step]

    def takes(self, step: Step, command: PlayerCommand) -> bool:
        return isinstance(command, self._takes[step])

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


#: The last profiles asked about, by identity, with their steps (a profile is a value of
#: many fields, slow to hash; the same object is asked for every event): a memo of
#: `_turn_steps`, which is one of `rules`'s value.
_BY_PROFILE: dict[int, tuple[RulesProfile, TurnSteps]] = {}


def turn_steps(rules: RulesProfile) -> TurnSteps:
    """The steps of a turn under `rules`: the rulebook's, with the profile's differences."""
    known = _BY_PROFILE.get(id(rules))
    if known is not None and known[0] is rules:
        return known[1]
    steps = _turn_steps(rules)
    if len(_BY_PROFILE) >= 64:
        _BY_PROFILE.clear()
    _BY_PROFILE[id(rules)] = (rules, steps)  # holding the profile, its id is not reused
    return steps


@cache
def _turn_steps(rules: RulesProfile) -> TurnSteps:
    steps = RULEBOOK
    if rules.token_step_skipped_when_no_token_can_be_placed:
        steps = steps.ending(Step.TOKEN, EndsWhen.NO_TOKEN)
    if rules.route_step_skipped_when_no_route:
        steps = steps.ending(Step.ROUTES, EndsWhen.NO_ROUTE)
    if rules.turn_steps == SITE_PROFILE:
        steps = site_steps(steps)
    return steps
