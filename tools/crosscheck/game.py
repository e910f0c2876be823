"""One crosschecked game: played by the bots, exported, replayed on the site's engine and by
ours, and what the two made of it."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.crosscheck import probes
from tools.crosscheck.coverage import exercised
from tools.crosscheck.site_engine import SiteEngine, SiteRun
from tools.crosscheck.states import check_states
from tools.selfplay import play
from tools.sitelog.export_format import Action, parse
from tools.sitelog.exporter import Batch, export


@dataclass(frozen=True, slots=True)
class Plan:
    players: int
    seed: int
    profile: str
    #: A strategy per seat (tools/bots.py); none: random bots.
    bots: tuple[str, ...] = ()
    #: "" or "beginner" (tools/selfplay.py VARIANTS).
    variant: str = ""

    @property
    def name(self) -> str:
        mixed = any(bot != "random" for bot in self.bots)
        strategies = "-" + "".join(bot[0] for bot in self.bots) if mixed else ""
        variant = f"-{self.variant}" if self.variant else ""
        return f"{self.players}p-seed{self.seed}{variant}{strategies}"


@dataclass(frozen=True, slots=True)
class Disagreement:
    kind: str  # what went wrong, without the particulars (for counting)
    action_id: int | None
    action: Action | None
    detail: str


@dataclass(frozen=True, slots=True)
class ProbeRun:
    """What the site's engine made of one probe (tools/crosscheck/probes.py): `refused` when
    it refused the probe's move, as ours does, and not an action before it."""

    switch: str
    move: int
    site: SiteRun
    probe_actions: tuple[int, ...]  # the ids of the probe move's actions in its export

    @property
    def refused(self) -> bool:
        return not self.site.accepted and self.site.refused_action in self.probe_actions

    def as_document(self) -> dict[str, Any]:
        return {
            "switch": self.switch,
            "move": self.move,
            "probe_actions": list(self.probe_actions),
            "refused": self.refused,
            "site": self.site.as_document(),
        }

    @classmethod
    def from_document(cls, raw: dict[str, Any]) -> ProbeRun:
        return cls(
            str(raw["switch"]),
            int(raw["move"]),
            SiteRun.from_document(raw["site"]),
            tuple(int(i) for i in raw["probe_actions"]),
        )


@dataclass
class GameReport:
    plan: Plan
    game_id: str
    actions: int
    site: SiteRun
    our_result: dict[str, int]
    our_end_reason: str
    states_compared: int = 0
    site_states: int = 0
    states_equal: bool = False
    first_disagreement: int | None = None  # see StateCheck.first_disagreement
    allowed: dict[str, int] = field(default_factory=dict)
    disagreements: list[Disagreement] = field(default_factory=list)
    #: The site's departures from the rulebook the game relied on (the export's
    #: `rules_deviations`: none under the 18xx.games profile).
    deviations: list[dict[str, Any]] = field(default_factory=list)
    #: The rule areas the game exercised (tools/crosscheck/coverage.py ROWS' keys).
    coverage: set[str] = field(default_factory=set)
    #: The site's switches tried where the game met them (tools/crosscheck/probes.py).
    probes: list[ProbeRun] = field(default_factory=list)

    @property
    def explained_by(self) -> list[str]:
        """The departures that explain the disagreements: those the game relied on at or
        before the first of them. Empty when nothing disagrees or nothing explains it."""
        if not self.disagreements:
            return []
        at = [d.action_id for d in self.disagreements if d.action_id is not None]
        first = min(at) if at else None
        return [
            str(d["switch"])
            for d in self.deviations
            if first is None or int(d["first_action"]) <= first
        ]

    @property
    def same_result(self) -> bool:
        return (
            self.site.accepted
            and self.site.finished
            and self.site.result == self.our_result
            and self.site.end_reason == self.our_end_reason
        )

    def as_document(self) -> dict[str, Any]:
        return {
            "name": self.plan.name,
            "players": self.plan.players,
            "seed": self.plan.seed,
            "profile": self.plan.profile,
            "bots": list(self.plan.bots),
            "variant": self.plan.variant,
            "game_id": self.game_id,
            "actions": self.actions,
            "accepted_raw": self.site.accepted,
            "same_result": self.same_result,
            "states_equal": self.states_equal,
            "first_disagreement": self.first_disagreement,
            "states_compared": self.states_compared,
            "site_states": self.site_states,
            "site": self.site.as_document(),
            "ours": {"result": self.our_result, "game_end_reason": self.our_end_reason},
            "allowed": self.allowed,
            "deviations": self.deviations,
            "explained_by": self.explained_by,
            "coverage": sorted(self.coverage),
            "probes": [probe.as_document() for probe in self.probes],
            "disagreements": [
                {"kind": d.kind, "action_id": d.action_id, "action": d.action, "detail": d.detail}
                for d in self.disagreements
            ],
        }


@dataclass(frozen=True, slots=True)
class Played:
    """A game's files: the export as the site read it, and the site's states as it wrote them."""

    export_text: str
    states_text: str


def _refusal_kind(exception: str) -> str:
    """The engine's message without the particulars: action ids, amounts, hexes."""
    message = re.sub(r" at \d+$", "", exception)
    message = re.sub(r"\b[A-Z]\d+\b", "<hex>", message)
    return "site refused: " + re.sub(r"\d+", "#", message)


def _field(difference: str) -> str:
    """ "player 3 cash: site 10, ours 20" -> "player cash"; "AR trains: ..." -> "corporation
    trains"."""
    what = difference.split(":", 1)[0]
    what = re.sub(r"^player \S+ ", "player ", what)
    return re.sub(r"^[A-Z]{2,3} ", "corporation ", what)


def crosscheck(plan: Plan, engine: SiteEngine) -> tuple[GameReport, Played]:
    """Plays, exports and replays one game on both engines; also returns the export as the
    site read it and the site's states as it wrote them."""
    game = play(plan.players, plan.seed, plan.profile, plan.bots, plan.variant)
    export_text = json.dumps(game.document, indent=1) + "\n"
    with tempfile.TemporaryDirectory(prefix="crosscheck-") as scratch:
        export_path = Path(scratch) / f"{plan.name}.export.json"
        states_path = Path(scratch) / f"{plan.name}.site.jsonl"
        export_path.write_text(export_text)
        site = engine.replay(export_path, states_path)
        played = Played(export_text, states_path.read_text())
    report = compare(plan, played, site)
    report.probes = [
        run
        for probe in probes.find(game.moves)
        if (run := try_probe(engine, game.document["id"], game.moves, probe)) is not None
    ]
    for run in report.probes:
        if not run.refused:
            report.disagreements.append(
                Disagreement(
                    f"probe not refused by the site: {run.switch}",
                    run.site.refused_action,
                    run.site.refused,
                    f"move {run.move}: {run.site.exception or 'the site accepted it'}",
                )
            )
    tried = {f"switch_{run.switch}" for run in report.probes if run.refused}
    report.coverage = exercised(game.moves) | tried
    return report, played


def try_probe(
    engine: SiteEngine, game_id: str, moves: Sequence[Batch], probe: probes.Probe
) -> ProbeRun | None:
    """The probe's export replayed on the site's engine; None when the game's moves before it
    do not play the same way without its switch (no probe there)."""
    batches = probes.probe_batches(moves, probe)
    if batches is None:
        return None
    document = export(f"{game_id}-probe-{probe.switch}", batches)
    before = len(export(game_id, batches[:-1])["actions"])
    ids = tuple(int(action["id"]) for action in document["actions"][before:])
    with tempfile.TemporaryDirectory(prefix="crosscheck-probe-") as scratch:
        export_path = Path(scratch) / "probe.export.json"
        export_path.write_text(json.dumps(document) + "\n")
        site = engine.replay(export_path, Path(scratch) / "probe.site.jsonl")
    return ProbeRun(probe.switch, probe.move, site, ids)


def compare(plan: Plan, played: Played, site: SiteRun) -> GameReport:
    """What our engine and the site's made of one export."""
    document = json.loads(played.export_text)
    exported = parse(document)
    states = [json.loads(line) for line in played.states_text.splitlines()]
    report = GameReport(
        plan,
        exported.id,
        len(exported.actions),
        site,
        {str(k): int(v) for k, v in document["result"].items()},
        str(document.get("game_end_reason", "")),
    )
    report.deviations = list(document.get("rules_deviations") or [])
    check = check_states(exported, states)
    report.states_compared, report.site_states = check.compared, check.site_states
    report.states_equal, report.allowed = check.equal, dict(check.allowed)
    report.first_disagreement = check.first_disagreement
    found = report.disagreements
    if not site.accepted:
        found.append(
            Disagreement(
                _refusal_kind(site.exception), site.refused_action, site.refused, site.exception
            )
        )
    if (first := check.first) is not None:
        kind = "state differs: " + ", ".join(sorted({_field(d) for d in first.found}))
        found.append(Disagreement(kind, first.action_id, first.action, "; ".join(first.found)))
    if (divergence := check.outcome.divergence) is not None:
        found.append(
            Disagreement(
                "our replay refused: " + divergence.reason.split(":", 1)[0],
                divergence.action_id,
                divergence.action,
                divergence.reason,
            )
        )
    if site.accepted and not report.same_result:
        detail = (
            f"site {site.result} ({site.end_reason or 'unfinished'}), "
            f"ours {report.our_result} ({report.our_end_reason})"
        )
        found.append(Disagreement("final result differs", None, None, detail))
    return report
