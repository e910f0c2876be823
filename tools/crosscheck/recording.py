"""Recorded crosscheck games (tests/crosscheck/recorded/): for each game the export and the
site's per-action states, xz-compressed, and one manifest with what the site made of each.
`make crosscheck-record` rewrites the folder; tests/crosscheck/test_recorded_site_games.py
holds our engine and exporter to it without Ruby."""

from __future__ import annotations

import json
import lzma
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.crosscheck.game import GameReport, Plan, Played, ProbeRun
from tools.crosscheck.plans import mixed_plans
from tools.crosscheck.site_engine import SiteRun

MANIFEST = "games.json"
EXPORT_SUFFIX = ".export.json.xz"
STATES_SUFFIX = ".site.jsonl.xz"

#: The fixed set: `make crosscheck --mix`'s first games (tools/crosscheck/plans.py), enough of
#: them that every row of the coverage table is exercised by one at least.
RECORDED_GAMES = 40
RECORDED_FIRST_SEED = 1


def recorded_plans() -> list[Plan]:
    return mixed_plans(RECORDED_GAMES, (2, 6), RECORDED_FIRST_SEED)


@dataclass(frozen=True, slots=True)
class Recorded:
    """A recorded game; `first_disagreement`: where our states stopped agreeing with the
    site's when it was recorded (StateCheck.first_disagreement), None if nowhere."""

    plan: Plan
    played: Played
    site: SiteRun
    first_disagreement: int | None
    disagreements: tuple[str, ...]  # their kinds, as the harness counted them
    probes: tuple[ProbeRun, ...] = ()  # the site's switches tried where the game met them


def write_game(folder: Path, plan: Plan, played: Played) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / (plan.name + EXPORT_SUFFIX)).write_bytes(lzma.compress(played.export_text.encode()))
    (folder / (plan.name + STATES_SUFFIX)).write_bytes(lzma.compress(played.states_text.encode()))


def write_manifest(folder: Path, games: list[GameReport], engine: str) -> None:
    """Replaces the folder's manifest, and removes recordings of games no longer in it."""
    names = {game.plan.name for game in games}
    for old in [*folder.glob("*" + EXPORT_SUFFIX), *folder.glob("*" + STATES_SUFFIX)]:
        if old.name.split(".", 1)[0] not in names:
            old.unlink()
    document: dict[str, Any] = {
        "engine_revision": engine,
        "games": [
            {
                "name": game.plan.name,
                "players": game.plan.players,
                "seed": game.plan.seed,
                "profile": game.plan.profile,
                "bots": list(game.plan.bots),
                "variant": game.plan.variant,
                "site": game.site.as_document(),
                "ours": {
                    "first_disagreement": game.first_disagreement,
                    "disagreements": [d.kind for d in game.disagreements],
                },
                "probes": [probe.as_document() for probe in game.probes],
            }
            for game in games
        ],
    }
    (folder / MANIFEST).write_text(json.dumps(document, indent=1) + "\n")


def read(folder: Path) -> list[Recorded]:
    manifest = json.loads((folder / MANIFEST).read_text())
    recorded = []
    for entry in manifest["games"]:
        plan = Plan(
            int(entry["players"]),
            int(entry["seed"]),
            str(entry["profile"]),
            tuple(str(bot) for bot in entry.get("bots", ())),
            str(entry.get("variant", "")),
        )
        played = Played(
            lzma.decompress((folder / (plan.name + EXPORT_SUFFIX)).read_bytes()).decode(),
            lzma.decompress((folder / (plan.name + STATES_SUFFIX)).read_bytes()).decode(),
        )
        ours = entry["ours"]
        first = ours["first_disagreement"]
        recorded.append(
            Recorded(
                plan,
                played,
                SiteRun.from_document(entry["site"]),
                None if first is None else int(first),
                tuple(ours["disagreements"]),
                tuple(ProbeRun.from_document(raw) for raw in entry.get("probes", ())),
            )
        )
    return recorded
