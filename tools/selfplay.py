"""`shikoku selfplay`: one complete game played by random legal bots (`tools/bots.py`), the same
game for the same seed, exported in the 18xx.games format (`tools/sitelog/exporter.py`)."""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernel.rejection import Rejected
from services.rules.domain.commands import Command, CreateGame
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.events import SeatedPlayer
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from tools.bots import choose, command_for
from tools.sitelog.exporter import Batch, export

DEFAULT_PROFILE = "18xx.games"


def random_game(
    players: int, seed: int, rules_profile: str = "rulebook"
) -> tuple[list[Batch], GameState]:
    """A game of `players` bots to its end: every command with the events it caused, and the
    final state. The seed draws both the seating (as CreateGame's seed) and every bot move."""
    rng = random.Random(seed)
    seated = tuple(SeatedPlayer(s, f"bot {s}") for s in range(1, players + 1))
    command: Command = CreateGame(players=seated, seed=seed, rules_profile=rules_profile)
    state = GameState()
    batches = []
    while True:
        events = decide(state, command)
        batches.append(Batch(command, tuple(events)))
        state = fold(events, state)
        if state.result is not None:
            return batches, state
        command = command_for(choose(legal_actions(state), rng), rng, state)


def game_id(players: int, seed: int) -> str:
    return f"selfplay-{players}p-{seed}"


@dataclass(frozen=True, slots=True)
class SelfPlay:
    document: dict[str, Any]  # the 18xx.games export
    final: GameState
    profile: str

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
        }


def play(players: int, seed: int, profile: str = DEFAULT_PROFILE) -> SelfPlay:
    """Raises Rejected when the rules refuse the set-up (player count, profile)."""
    batches, final = random_game(players, seed, profile)
    return SelfPlay(export(game_id(players, seed), batches), final, profile)


def main(players: int, seed: int, out: Path, profile: str, as_json: bool) -> int:
    try:
        game = play(players, seed, profile)
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
