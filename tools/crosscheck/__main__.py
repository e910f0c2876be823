"""`python -m tools.crosscheck` (`make crosscheck`, `make crosscheck-record`): seeded bot games
played here, replayed on the 18xx.games site's engine and by ours, state by state
(docs/crosscheck.md)."""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

from tools.crosscheck import coverage, recording
from tools.crosscheck.game import GameReport, Played, crosscheck
from tools.crosscheck.plans import mixed_plans, plans
from tools.crosscheck.report import as_document, as_text
from tools.crosscheck.site_engine import EngineMissing, SiteEngine


def player_range(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    bounds = (int(low), int(high or low))
    if not 2 <= bounds[0] <= bounds[1] <= 6:
        raise argparse.ArgumentTypeError(f"{text!r}: players are 2 to 6, as LOW-HIGH or N")
    return bounds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.crosscheck", description=__doc__)
    parser.add_argument("--games", type=int, default=10, help="how many games (default 10)")
    parser.add_argument(
        "--players", type=player_range, default=(2, 6), help="player counts, e.g. 2-6 or 4"
    )
    parser.add_argument("--profile", choices=("rulebook", "18xx.games"), default="18xx.games")
    parser.add_argument("--first-seed", type=int, default=1, help="game i has seed FIRST+i")
    parser.add_argument("--jobs", type=int, default=2, help="games played at once (default 2)")
    parser.add_argument("--json", action="store_true", help="print one JSON report instead")
    parser.add_argument(
        "--bots",
        default="",
        help="strategies in seat order (random, heuristic), or one for every seat, as "
        "shikoku selfplay --bots (default: random)",
    )
    parser.add_argument(
        "--variant", choices=("beginner",), default="", help="beginner: the beginner game (14.1)"
    )
    parser.add_argument(
        "--mix",
        action="store_true",
        help="mix seatings (heuristic, one heuristic, alternating, random), both profiles and "
        "the beginner game across the games, for the coverage table (--bots, --profile and "
        "--variant are then not used)",
    )
    parser.add_argument(
        "--record",
        type=Path,
        help="play the fixed recorded set instead and rewrite this folder with its exports and "
        "the site's states (tests/crosscheck/recorded)",
    )
    args = parser.parse_args(argv)

    engine = SiteEngine.from_env()
    try:
        engine.check()
    except EngineMissing as error:
        print(f"crosscheck: {error}", file=sys.stderr)
        return 2
    if args.record:
        chosen = recording.recorded_plans()
    elif args.mix:
        chosen = mixed_plans(args.games, args.players, args.first_seed)
    else:
        try:
            chosen = plans(
                args.games, args.players, args.profile, args.first_seed, args.bots, args.variant
            )
        except ValueError as error:
            print(f"crosscheck: --bots: {error}", file=sys.stderr)
            return 2
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        done = list(pool.map(partial(crosscheck, engine=engine), chosen))
    reports: list[GameReport] = [report for report, _ in done]
    if args.record:
        _record(args.record, done, engine.revision())
    counts = sorted({p.players for p in chosen}) or [0]
    settings = {
        "players": f"{counts[0]}-{counts[-1]}",
        "profile": "/".join(sorted({p.profile for p in chosen})) or args.profile,
        "engine_revision": engine.revision(),
    }
    covered = coverage.table(report.coverage for report in reports)
    if args.json:
        document = as_document(reports, settings)
        document["coverage"] = {key: count for key, _, count in covered}
        print(json.dumps(document, indent=1))
    else:
        print(as_text(reports, settings))
        print(coverage.as_text(covered, len(reports)))
    return 0


def _record(folder: Path, done: list[tuple[GameReport, Played]], revision: str) -> None:
    for report, played in done:
        recording.write_game(folder, report.plan, played)
    recording.write_manifest(folder, [report for report, _ in done], revision)
    print(f"crosscheck: recorded {len(done)} games in {folder}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
