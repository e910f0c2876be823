"""decide's events carry the state they lead to; folding them onto the state decided on gives
that state without folding again, and anything else is folded as usual."""

from __future__ import annotations

import random
from functools import reduce

from services.rules.domain.commands import EndGame
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.evolve import Evolved, evolve, fold
from tests.rules.helpers import new_game
from tools.bots import choose, command_for


def test_folding_decided_events_gives_the_state_of_folding_them_one_by_one() -> None:
    rng = random.Random(5)
    state = new_game(4, seed=5, fixed=False)
    for _ in range(400):
        if state.result is not None:
            break
        events = decide(state, command_for(choose(legal_actions(state), rng), rng, state))
        assert isinstance(events, Evolved)
        after = fold(events, state)
        assert after == reduce(evolve, events, state)
        assert fold(list(events), state) == after
        state = after


def test_decided_events_changed_or_folded_elsewhere_are_folded_again() -> None:
    state = new_game(3, seed=1)
    rng = random.Random(1)
    events = decide(state, command_for(choose(legal_actions(state), rng), rng, state))
    assert isinstance(events, Evolved)
    known = fold(events, state)
    assert fold(events, state) is known
    # An equal state that is not the one decided on: folded, to an equal state.
    again = new_game(3, seed=1)
    assert again == state and again is not state
    assert fold(events, again) is not known
    assert fold(events, again) == known
    # Fewer events: not the state after all of them.
    shorter = events[:-1] if len(events) > 1 else []
    events_changed = Evolved(list(events), state, known)
    del events_changed[len(shorter) :]
    assert fold(events_changed, state) == fold(shorter, state)


def test_an_ended_game_is_decided_with_the_state_it_leads_to() -> None:
    state = new_game(3, seed=2)
    events = decide(state, EndGame())
    assert isinstance(events, Evolved)
    known = fold(events, state)
    assert known is fold(events, state)
    assert known == reduce(evolve, events, state)
    assert known.result is not None
