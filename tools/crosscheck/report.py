"""The harness's figures and disagreements, as text or as one JSON document."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from tools.crosscheck.game import GameReport

DETAIL_CHARS = 600


def totals(games: Sequence[GameReport]) -> dict[str, int]:
    return {
        "games": len(games),
        "accepted_raw": sum(g.site.accepted for g in games),
        "same_result": sum(g.same_result for g in games),
        "states_equal": sum(g.states_equal for g in games),
        "states_equal_whole_game": sum(g.states_equal and g.site.accepted for g in games),
        "relied_on_departures": sum(bool(g.deviations) for g in games),
        "unexplained": sum(bool(g.disagreements and not g.explained_by) for g in games),
        "probes": sum(len(g.probes) for g in games),
        "probes_refused": sum(p.refused for g in games for p in g.probes),
    }


def kinds(games: Sequence[GameReport]) -> Counter[str]:
    return Counter(d.kind for g in games for d in g.disagreements)


def as_document(games: Sequence[GameReport], settings: dict[str, Any]) -> dict[str, Any]:
    return {
        **settings,
        **totals(games),
        "disagreement_kinds": dict(kinds(games).most_common()),
        "reports": [g.as_document() for g in games],
    }


def _clip(text: str) -> str:
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + " ..."


def as_text(games: Sequence[GameReport], settings: dict[str, Any]) -> str:
    figures = totals(games)
    n = figures["games"]
    lines = [
        f"crosscheck: {n} games, {settings['players']} players, profile {settings['profile']}, "
        f"site engine {settings['engine_revision'][:12] or '(unknown revision)'}",
        f"  accepted raw       {figures['accepted_raw']:>4}/{n}  (the site took every action)",
        f"  same final result  {figures['same_result']:>4}/{n}  (net worths and end reason)",
        f"  states equal       {figures['states_equal']:>4}/{n}  (after every action the site "
        f"took; {figures['states_equal_whole_game']} of them whole games)",
        f"  probes refused     {figures['probes_refused']:>4}/{figures['probes']}  (a switch's "
        "move tried on the site where a game met it, tools/crosscheck/probes.py)",
    ]
    allowed = Counter[str]()
    for game in games:
        allowed.update(game.allowed)
    if allowed:
        lines.append("allowed differences (tools/crosscheck/allowances.py):")
        lines += [f"  {count:>5}  {name}" for name, count in allowed.most_common()]
    relying = [g for g in games if g.deviations]
    if relying:
        used = Counter(str(d["switch"]) for g in relying for d in g.deviations)
        disagreeing = [g for g in games if g.disagreements]
        explained = [g for g in disagreeing if g.explained_by]
        lines.append(
            f"relied on the site's departures from the rulebook: {len(relying)} games "
            f"(docs/rules-notes.md, Rules profiles)"
        )
        lines += [f"  {count:>5}  {name}" for name, count in used.most_common()]
        lines.append(
            f"  games that disagree, explained by a departure: {len(explained)}/{len(disagreeing)}"
        )
    found = kinds(games)
    if found:
        lines.append("disagreement kinds:")
        lines += [f"  {count:>5}  {kind}" for kind, count in found.most_common()]
        lines.append("disagreements:")
    for game in games:
        for d in game.disagreements:
            where = f"action {d.action_id}" if d.action_id is not None else "end"
            action = f" {json.dumps(d.action)}" if d.action else ""
            lines.append(
                f"  seed {game.plan.seed}, {game.plan.players} players ({game.game_id}), "
                f"{where}{action}"
            )
            lines.append(f"    {d.kind.split(':', 1)[0]}: {_clip(d.detail)}")
        if game.disagreements and game.deviations:
            why = ", ".join(game.explained_by) or "UNEXPLAINED"
            lines.append(f"    explained by: {why}")
    return "\n".join(lines)
