"""Building and playing games in memory, through decide and evolve only."""

from __future__ import annotations

from services.rules.domain import events as ev
from services.rules.domain.commands import Command, CreateGame
from services.rules.domain.decide import decide
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState


def new_game(
    players: int,
    seed: int = 0,
    fixed: bool = True,
    beginner: bool = False,
    rules_profile: str = "rulebook",
) -> GameState:
    seated = tuple(ev.SeatedPlayer(seat, f"p{seat}") for seat in range(1, players + 1))
    command = CreateGame(
        players=seated,
        seed=seed,
        fixed_seat_order=fixed,
        beginner_game=beginner,
        rules_profile=rules_profile,
    )
    return fold(decide(GameState(), command))


def play(state: GameState, *commands: Command) -> tuple[GameState, list[ev.Event]]:
    emitted: list[ev.Event] = []
    for command in commands:
        events = decide(state, command)
        emitted += events
        state = fold(events, state)
    return state, emitted
