"""Walks the 18xx.games logs in the shared fixtures and yields every tile lay and station
token with the board position, situation and actor it was made in.

Test-side bookkeeping only: which corporation acts, the phase (from the first train of each
rank bought), who holds the private companies, the corporations' cash (from the site's own
states where the fixture has them) and the home tokens, which the site places by itself: the
tracker places one when a corporation first acts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.rules.board import (
    Actor,
    Lay,
    Position,
    Situation,
    apply_lay,
    apply_token,
    initial_position,
    load_title,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SHIKOKU_SHARED") or REPO_ROOT / ".." / "shared")
FIXTURES = SHARED / "fixtures" / "18xx.games" / "1889"

PHASES = ("2", "3", "4", "5", "6", "D")
#: Private companies in auction order, with the fewest players they are used with (2.I).
PRIVATES = (("TR", 2), ("MF", 2), ("ER", 2), ("SMR", 2), ("DR", 2), ("SIR", 3), ("UTF", 4))
#: Closes at phase 5 only when a corporation holds it (rulebook 9, 15).
SURVIVES_WITH_PLAYER = "UTF"


@dataclass(frozen=True)
class Move:
    """One lay or token of a log, with what it was decided in."""

    action_id: int
    position: Position
    situation: Situation
    actor: Actor
    lay: Lay | None = None
    token: tuple[str, int] | None = None
    #: The site's token count for the acting corporation after the move, when known.
    site_tokens_after: int | None = None


def game_files() -> list[Path]:
    return sorted(FIXTURES.glob("*.json"))


def replay(path: Path) -> Iterator[Move]:
    """The lays and tokens of a log, in order."""
    for moment in moments(path):
        if moment.move is not None:
            yield moment.move


@dataclass(frozen=True)
class Moment:
    """The board just before an action of a log."""

    action: dict[str, Any]
    position: Position
    situation: Situation
    move: Move | None


def final_position(path: Path) -> tuple[Position, Situation]:
    """The board after the last action, and the situation then."""
    *_, last = moments(path)
    position, situation = last.position, last.situation
    if last.move is not None and last.move.lay is not None:
        lay = last.move.lay
        position = apply_lay(position, lay.hex, lay.tile, lay.rotation)
    return position, situation


def moments(path: Path) -> Iterator[Moment]:
    game = json.loads(path.read_text())
    states = _site_states(path)
    title = load_title("1889")
    players = len(game["players"])
    beginner = any("beginner" in rule for rule in game["settings"].get("optional_rules", []))
    position = initial_position(title, beginner=beginner)
    phase = PHASES[0]
    with_players = {name for name, least in PRIVATES if players >= least}
    with_corporations: dict[str, str] = {}
    started: set[str] = set()
    tile_hexes: dict[str, str] = {}
    for action in game["actions"]:
        entity, kind = action.get("entity"), action.get("entity_type")
        if kind == "corporation" and entity not in started:
            started.add(entity)
            home = title.corporations[entity]
            position = apply_token(position, entity, home.home, home.home_city)
        situation = Situation(phase, frozenset(with_players), dict(with_corporations), beginner)
        actor = _actor(action, states, with_corporations)
        after = _site_tokens(states, action, actor.corporation)
        move = None
        if action["type"] == "lay_tile":
            name = action["tile"].rsplit("-", 1)[0]
            lay = Lay(action["hex"], name, action["rotation"])
            move = Move(action["id"], position, situation, actor, lay=lay, site_tokens_after=after)
        elif action["type"] == "place_token":
            tile_id, city = action["city"].rsplit("-", 1)
            token = (tile_hexes.get(tile_id, tile_id.split("-")[0]), int(city))
            move = Move(
                action["id"], position, situation, actor, token=token, site_tokens_after=after
            )
        yield Moment(action, position, situation, move)
        if move is not None and move.lay is not None:
            position = apply_lay(position, move.lay.hex, move.lay.tile, move.lay.rotation)
            tile_hexes[action["tile"]] = move.lay.hex
        elif move is not None and move.token is not None:
            hex_, city = move.token
            position = apply_token(position, str(entity), hex_, city, action.get("slot"))
        elif action["type"] == "buy_train":
            rank = action["train"].split("-")[0]
            if PHASES.index(rank) > PHASES.index(phase):
                phase = rank
                if PHASES.index(phase) >= PHASES.index("5"):
                    with_players &= {SURVIVES_WITH_PLAYER}
                    with_corporations.clear()
        elif action["type"] == "buy_company":
            with_players.discard(action["company"])
            with_corporations[action["company"]] = str(entity)


def _site_states(path: Path) -> list[dict[str, Any]] | None:
    states = path.with_suffix(".states.jsonl")
    if not states.exists():
        return None
    return [json.loads(line) for line in states.read_text().splitlines()]


def _actor(
    action: dict[str, Any], states: list[dict[str, Any]] | None, with_corporations: dict[str, str]
) -> Actor:
    entity, kind = action.get("entity"), action.get("entity_type")
    if kind == "company":
        # A private company's ability: MF's port tile (held by a player) or ER's Ohzu upgrade.
        return Actor(with_corporations.get(str(entity)), 10**6, ability=str(entity))
    if kind != "corporation":
        return Actor(None, 10**6)
    cash = 10**6
    if states is not None:
        cash = states[action["id"] - 1]["corps"][entity]["cash"]
    return Actor(str(entity), cash)


def _site_tokens(
    states: list[dict[str, Any]] | None, action: dict[str, Any], corporation: str | None
) -> int | None:
    if states is None or corporation is None:
        return None
    tokens: int = states[action["id"]]["corps"][corporation]["tokens"]
    return tokens
