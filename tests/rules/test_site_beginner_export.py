"""A beginner game's export names the site's beginner departures it relied on
(`rules_deviations`): under the rulebook the deal differs from the site's from the first action,
and a private's revenue from the first operating round; under `18xx.games` none."""

from __future__ import annotations

import random

from services.rules.domain import events as ev
from services.rules.domain.commands import Command, CreateGame
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from tools.bots import choose, command_for
from tools.sitelog.exporter import Batch, export

MOVES = 120  # past the first operating round's private revenues


def beginner_batches(profile: str, seed: int = 7) -> list[Batch]:
    rng = random.Random(seed)
    seated = tuple(ev.SeatedPlayer(s, f"bot {s}") for s in range(1, 5))
    command: Command = CreateGame(
        players=seated, seed=seed, beginner_game=True, rules_profile=profile
    )
    state, batches = GameState(), []
    for _ in range(MOVES):
        events = decide(state, command)
        batches.append(Batch(command, tuple(events)))
        state = fold(events, state)
        command = command_for(choose(legal_actions(state), rng), rng, state)
    assert any(isinstance(e, ev.PrivateRevenuePaid) for b in batches for e in b.events)
    return batches


def test_a_rulebook_beginner_game_names_the_sites_deal_at_the_set_up() -> None:
    document = export("beginner-rulebook", beginner_batches("rulebook"))
    found = {d["switch"]: d for d in document["rules_deviations"]}
    assert found["beginner_deal_as_site"] == {
        "switch": "beginner_deal_as_site",
        "first_action": 0,  # before the first action: the state the site sets up differs
        "moves": 1,
    }
    # shown where the first operating round pays the privates, not at the set-up
    assert found["beginner_private_revenues_as_site"]["first_action"] > 1
    assert document["rules_deviations"][0]["switch"] == "beginner_deal_as_site"


def test_a_site_beginner_game_relies_on_no_departure() -> None:
    document = export("beginner-site", beginner_batches("18xx.games"))
    assert document["rules_profile"] == "18xx.games"
    assert document["rules_deviations"] == []
