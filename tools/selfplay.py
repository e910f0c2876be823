"""`shikoku selfplay`: one complete game played by random legal bots (`tools/bots.py`), the same
game for the same seed, exported in the 18xx.games format (`tools/sitelog/exporter.py`)."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernel.rejection import Rejected
from services.rules.domain.commands import Command, CreateGame
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.events import SeatedPlayer
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from tools.bots import STRATEGIES, choose, command_for, strategy_command
from tools.sitelog.exporter import Batch, export

DEFAULT_PROFILE = "18xx.games"


def random_game(
    players: int,
    seed: int,
    rules_profile: str = "rulebook",
    bots: Sequence[str] = (),
    beginner_game: bool = False,
) -> tuple[list[Batch], GameState]:
    """A game of `players` bots to its end: every command with the events it caused, and the
    final state. The seed draws both the seating (as CreateGame's seed) and every bot move.
    `bots`: a strategy per seat (tools/bots.py STRATEGIES); none or all "random" plays the
    random bots on every legal action, as before; otherwise the acting seat's strategy picks
    among that seat's actions (privates' abilities of other seats wait for their turn).
    `beginner_game`: the beginner game of rulebook 14.1 (privates dealt, no auction)."""
    rng = random.Random(seed)
    mixed = any(bot != "random" for bot in bots)
    seated = tuple(SeatedPlayer(s, f"bot {s}") for s in range(1, players + 1))
    command: Command = CreateGame(
        players=seated, seed=seed, rules_profile=rules_profile, beginner_game=beginner_game
    )
    state = GameState()
    batches = []
    while True:
        events = decide(state, command)
        batches.append(Batch(command, tuple(events)))
        state = fold(events, state)
        if state.result is not None:
            return batches, state
        options = legal_actions(state)
        if mixed:
            seat = options[0].seat
            mine = [option for option in options if option.seat == seat]
            command = strategy_command(bots[seat - 1], state, mine, rng)
        else:
            command = command_for(choose(options, rng), rng, state)


def game_id(players: int, seed: int) -> str:
    return f"selfplay-{players}p-{seed}"


@dataclass(frozen=True, slots=True)
class SelfPlay:
    document: dict[str, Any]  # the 18xx.games export
    final: GameState
    profile: str
    bots: tuple[str, ...]
    moves: tuple[Batch, ...] = ()  # every command with the events it caused

    def summary(self) -> dict[str, Any]:
        result = self.final.result
        assert result is not None
        name = {p.seat: p.name for p in self.final.players}
        return {
            "game_id": self.document["id"],
            "players": {name[seat]: worth for seat, worth in result.net_worths},
            "end_reason": result.reason,
            "actions": len(self.document["actions"]),
            "profile": self.profile,
            "bots": list(self.bots),
            "beginner_game": self.final.beginner_game,
        }


#: The variants of the game (`--variant`): the beginner game is rulebook 14.1's.
VARIANTS = ("", "beginner")


def play(
    players: int,
    seed: int,
    profile: str = DEFAULT_PROFILE,
    bots: Sequence[str] = (),
    variant: str = "",
) -> SelfPlay:
    """Raises Rejected when the rules refuse the set-up (player count, profile)."""
    seated = tuple(bots) or ("random",) * players
    batches, final = random_game(players, seed, profile, seated, variant == "beginner")
    return SelfPlay(export(game_id(players, seed), batches), final, profile, seated, tuple(batches))


def parse_bots(listed: str, players: int) -> tuple[str, ...]:
    """`--bots`: one strategy for every seat, or one per seat in seat order. Raises ValueError
    with a one-line reason."""
    names = tuple(name.strip() for name in listed.split(","))
    if unknown := [name for name in names if name not in STRATEGIES]:
        raise ValueError(f"unknown bot {unknown[0]!r}: one of {', '.join(STRATEGIES)}")
    if len(names) == 1:
        return names * players
    if len(names) != players:
        raise ValueError(f"{len(names)} bots for {players} players: give one, or one per seat")
    return names


def main(
    players: int,
    seed: int,
    out: Path,
    profile: str,
    as_json: bool,
    bots: str = "random",
    variant: str = "",
) -> int:
    try:
        seated = parse_bots(bots, players)
    except ValueError as error:
        print(f"shikoku selfplay: --bots: {error}", file=sys.stderr)
        return 2
    try:
        game = play(players, seed, profile, seated, variant)
    except Rejected as error:
        print(f"shikoku selfplay: {error.reason}: {error}", file=sys.stderr)
        return 2
    out.write_text(json.dumps(game.document, indent=1) + "\n")
    summary = game.summary()
    if as_json:
        print(json.dumps(summary))
    else:
        worths = ", ".join(f"{n} {w}" for n, w in summary["players"].items())
        print(
            f"{summary['game_id']}: {summary['actions']} actions, ended by "
            f"{summary['end_reason']} ({profile}); {worths}; exported to {out}"
        )
    return 0
