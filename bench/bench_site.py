"""Benchmark: our CPU beside the 18xx.games site engine's, on one real game, the two sides taking
turns.

The game is ../shared/fixtures/18xx.games/1889/314.json (or under $SHIKOKU_SHARED), replayed
by the site's own engine (bench/site_engine.rb, a long-lived Ruby process per mode: without and
with --yjit, as the site deploys it) and by ours. Everything is CPU time, never wall clock: the
Ruby side's CLOCK_PROCESS_CPUTIME_ID, our in-process time.process_time(), and for our services
the CPU time of each of their processes read from /proc. Each round, the sides take turns (the
site without YJIT, the site with YJIT, ours in process, ours through the gateway, ours through
the gateway with its caches missed), and the least of the rounds is kept for every figure.
Printed:

- **accept one command at move N** (N = 0, 100, 200, 400 and the mean over N = 0, 50, 100, ...):
  - the site: its server's request path for one more action (routes/game.rb, POST
    /api/game/<id>/action): the N stored actions parsed from their JSON, Engine::Game.load of
    them, process_action of action N+1 (validating its auto-actions), the new action's JSON and
    the game's new state; its database and HTTP server left out (bench/site_engine.rb says
    what exactly is timed);
  - ours: the whole system on loopback (shikoku_dev.supervisor, embedded Redis; rate limits
    off); GAMES fresh tables import the game's actions through the gateway in lockstep, and
    the submits of action N+1 to all of them are measured: the CPU time every service process
    and Redis spent between the first submit and the last answer (from
    /proc/<pid>/task/*/schedstat, nanoseconds; their idle rate, measured before, taken off),
    over the commands; the client's own (this process: the SDK and the importer's table) beside
    it. Before each measured batch the system is left SETTLE seconds to finish the work of
    the one before. Asynchronous consumers (summaries, notifications) that run after the
    answer are not in these rows, as the site's publishing of the move is not in its own; the
    whole import, theirs included, is shown below the table;
  - in that system the game's state stays in the rules process's cache and each seat's grant
    in the gateway's (SHIKOKU_GRANT_SECONDS=3600): a game played briskly. A second system
    keeps neither (SHIKOKU_RULES_CACHED_GAMES=1 with the tables taking turns,
    SHIKOKU_GRANT_SECONDS=0): every submit loads the game from its snapshot and the events
    after it (and its timeline from every event) and has the lobby check the seat's
    credential, as a move made after a pause would, and as the site loads every game from its
    actions for every move;
- **replay of the whole game**: the site's Engine::Game.load of the export (parsed beforehand);
  ours: decide+fold of the commands our importer makes of it, from an empty game (the
  importer's translation left out), the fold of its events, and the importer's whole replay
  in process (translation, decide and fold).

The site engine, outside this repository (nothing of it is copied here):

  apt-get install -y ruby
  git clone --depth 1 https://github.com/tobymao/18xx ../site-engine/18xx
  git clone --depth 1 https://github.com/jarmo/require_all ../site-engine/require_all

Settings (environment):

  SITE_ENGINE_DIR        a checkout of github.com/tobymao/18xx (its lib/engine is the site
                         engine); default ../site-engine/18xx beside this repository, if there;
                         without it, the site's columns are skipped (ours are still printed)
  SITE_REQUIRE_ALL_DIR   a checkout of github.com/jarmo/require_all (the one gem the engine
                         needs; its lib/ goes on Ruby's load path); default: a folder named
                         require_all beside SITE_ENGINE_DIR
  SITE_RUBY              the Ruby to run (default: ruby; Debian's ruby 3.1 works, with --yjit)
  SITE_ROUNDS            rounds, each side's least kept, default 4
  SITE_GAMES             tables imported side by side through the gateway each round, default 4
  SITE_GAMES_MISSED      the same with the caches missed (2 at least), default 2
  SITE_MOVE_STEP         the moves averaged: 0, STEP, 2 STEP, ..., default 50
  SITE_SETTLE            seconds left to the system before each measured batch, default 0.25

`make bench` runs it with SHIKOKU_RATE_PER_SECOND=0. The defaults take about 3 minutes on 2
cores.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from bench.processes import machine, process_seconds, redis_pids, thread_seconds
from services.rules.domain.commands import Command
from services.rules.domain.decide import decide
from services.rules.domain.events import Event
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from shikoku_dev.supervisor import System
from shikoku_sdk import Client
from tests.shared import SITE_GAMES
from tools.sitelog.export_format import SiteGame, load
from tools.sitelog.gateway_table import GatewayTable
from tools.sitelog.in_process import InProcessTable
from tools.sitelog.replay import Caused, replay
from tools.sitelog.translate import EndGame, Step, Submit

REPO = Path(__file__).resolve().parent.parent
SITE_GAME = SITE_GAMES / "314.json"  # ../shared/fixtures/18xx.games/1889 (or $SHIKOKU_SHARED)
SITE_SCRIPT = Path(__file__).resolve().parent / "site_engine.rb"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SHOWN_MOVES = (0, 100, 200, 400)
IDLE_SECONDS = 2.0


def setting(name: str, default: str) -> str:
    return os.environ.get(name, "").strip() or default


ROUNDS = int(setting("SITE_ROUNDS", "4"))
GAMES = int(setting("SITE_GAMES", "4"))
MISSED_GAMES = max(2, int(setting("SITE_GAMES_MISSED", "2")))
MOVE_STEP = int(setting("SITE_MOVE_STEP", "50"))
SETTLE = float(setting("SITE_SETTLE", "0.25"))


# -- the machine and its processes ------------------------------------------------------------


@dataclass
class Processes:
    """A system's processes by name: every service and Redis."""

    pids: dict[str, int]
    idle: dict[str, float] = field(default_factory=dict)  # CPU seconds a second, at rest

    @classmethod
    def of(cls, system: System, before: set[int]) -> Processes:
        pids = {service.name: service.process.pid for service in system.services}
        for n, pid in enumerate(p for p in redis_pids() if p not in before):
            pids["redis" if n == 0 else f"redis{n}"] = pid
        return cls(pids)

    def threads(self) -> dict[str, float]:
        return {name: thread_seconds(pid) for name, pid in self.pids.items()}

    def totals(self) -> dict[str, float]:
        return {name: process_seconds(pid) for name, pid in self.pids.items()}

    def measure_idle(self) -> None:
        before, start = self.threads(), time.perf_counter()
        time.sleep(IDLE_SECONDS)
        after, seconds = self.threads(), time.perf_counter() - start
        self.idle = {name: (after[name] - before[name]) / seconds for name in self.pids}


# -- the site engine --------------------------------------------------------------------------


def site_engine_paths() -> tuple[Path, Path] | str:
    """The engine's and require_all's lib folders, or why the site's columns are skipped."""
    given = os.environ.get("SITE_ENGINE_DIR", "").strip()
    beside = REPO.parent / "site-engine" / "18xx"
    if not given and not beside.is_dir():
        return f"SITE_ENGINE_DIR is not set and there is no {beside} (a checkout of tobymao/18xx)"
    engine = Path(given).resolve() if given else beside
    engine_lib = engine / "lib"
    if not (engine_lib / "engine.rb").is_file():
        return f"{engine} has no lib/engine.rb (SITE_ENGINE_DIR)"
    given_all = os.environ.get("SITE_REQUIRE_ALL_DIR", "").strip()
    base = Path(given_all) if given_all else engine.parent / "require_all"
    for lib in (base / "lib", base):
        if (lib / "require_all.rb").is_file():
            return engine_lib, lib
    return f"no require_all.rb in {base}/lib (set SITE_REQUIRE_ALL_DIR)"


def revision(checkout: Path) -> str:
    if (checkout / "REVISION").is_file():
        return (checkout / "REVISION").read_text().strip()[:12]
    done = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else "unknown revision"


class SiteEngine:
    """bench/site_engine.rb running in one Ruby mode, answering `round K`."""

    def __init__(
        self, ruby: str, yjit: bool, libs: tuple[Path, Path], moves: Iterable[int], errors: IO[str]
    ) -> None:
        self.label = "site+YJIT" if yjit else "site"
        command = [ruby, *(["--yjit"] if yjit else []), "-I", str(libs[0]), "-I", str(libs[1])]
        command += [str(SITE_SCRIPT), str(SITE_GAME), ",".join(str(n) for n in moves)]
        self._errors = errors
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env={**os.environ, "ENGINE_LOG_LEVEL": "4"},
        )
        self._yjit = yjit
        self.ready: dict[str, Any] = {}

    def wait_ready(self) -> None:
        """Until the engine is loaded and warm (the processes of both modes start together)."""
        self.ready = self._answer()
        if self.ready.get("yjit") != self._yjit:
            raise RuntimeError(f"{self.label}: YJIT is {'on' if self.ready.get('yjit') else 'off'}")

    def _answer(self) -> dict[str, Any]:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            self._process.wait(timeout=10)
            self._errors.seek(0)
            tail = self._errors.read()[-2000:]
            raise RuntimeError(f"{self.label}: Ruby exited with {self._process.returncode}: {tail}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def round(self, number: int) -> dict[str, Any]:
        assert self._process.stdin is not None
        self._process.stdin.write(f"round {number}\n")
        self._process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        if self._process.poll() is None and self._process.stdin is not None:
            self._process.stdin.write("quit\n")
            self._process.stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


def ruby_has_yjit(ruby: str) -> bool:
    done = subprocess.run(
        [ruby, "--yjit", "-e", "exit(defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? 0 : 1)"],
        capture_output=True,
    )
    return done.returncode == 0


@contextmanager
def site_engines(moves: list[int]) -> Iterator[tuple[list[SiteEngine], list[str]]]:
    """The site engine in each Ruby mode that runs here, and why any does not."""
    skipped: list[str] = []
    engines: list[SiteEngine] = []
    paths = site_engine_paths()
    ruby = setting("SITE_RUBY", "ruby")
    if isinstance(paths, str):
        skipped.append(paths)
    elif shutil.which(ruby) is None:
        skipped.append(f"no {ruby} on PATH (apt-get install -y ruby)")
    with ExitStack() as stack:
        if not skipped:
            assert not isinstance(paths, str)
            for yjit in (False, True):
                if yjit and not ruby_has_yjit(ruby):
                    skipped.append(f"{ruby} has no YJIT (--yjit)")
                    continue
                errors = stack.enter_context(tempfile.TemporaryFile("w+"))
                engine = SiteEngine(ruby, yjit, paths, moves, errors)
                stack.callback(engine.close)
                engines.append(engine)
            for engine in engines:
                engine.wait_ready()
        yield engines, skipped


# -- our side in this process -----------------------------------------------------------------


class Recording:
    """An in-process table that keeps what the importer submitted for each site action."""

    def __init__(self, game: SiteGame) -> None:
        self.table = InProcessTable(game)
        self.by_action: list[list[Step]] = []
        self._current: list[Step] = []

    def view(self) -> dict[str, Any]:
        return self.table.view()

    def acting_seats(self) -> list[int]:
        return self.table.acting_seats()

    def submit(self, seat: int, step: Submit) -> list[Caused]:
        self._current.append(step)
        return self.table.submit(seat, step)

    def end_game(self) -> None:
        self._current.append(EndGame())
        self.table.end_game()

    def action_done(self, _done: int, _total: int) -> None:
        self.by_action.append(self._current)
        self._current = []


def cpu_of(work: Any) -> float:
    """CPU seconds of work() in this process, garbage collected beforehand."""
    gc.collect()
    start = time.process_time()
    work()
    return time.process_time() - start


def decide_fold(commands: Iterable[Command]) -> None:
    state = GameState()
    for command in commands:
        state = fold(decide(state, command), state)


@dataclass(frozen=True)
class Imported:
    """What our importer makes of the site game, in process."""

    game: SiteGame
    by_action: list[list[Step]]  # the importer's submits for each effective site action
    commands: list[Command]  # the domain commands, from the game's creation on
    events: list[Event]

    @property
    def submits(self) -> int:
        return sum(len(steps) for steps in self.by_action)


def import_in_process(game: SiteGame) -> Imported:
    recording = Recording(game)
    outcome = replay(game, recording, progress=recording.action_done)
    if not outcome.matches(game):
        raise SystemExit(f"our replay of {SITE_GAME.name} differs from the site's: {outcome}")
    commands = [batch.command for batch in recording.table.batches]
    return Imported(game, recording.by_action, commands, recording.table.events)


def in_process_round(imported: Imported) -> dict[str, float]:
    return {
        "decide+fold": cpu_of(lambda: decide_fold(imported.commands)),
        "fold": cpu_of(lambda: fold(imported.events)),
        "importer": cpu_of(lambda: replay(imported.game, InProcessTable(imported.game))),
    }


# -- our side through the gateway -------------------------------------------------------------


@dataclass
class Batch:
    """The submits of one site action to every table, measured."""

    action: int  # the effective site action submitted: the move it was made at
    commands: int
    services: dict[str, float]  # CPU seconds of each process between first submit and answer
    client: float  # CPU seconds of this process meanwhile

    def per_command_ms(self) -> float:
        return 1000 * sum(self.services.values()) / self.commands


@dataclass
class Pass:
    """One round's import of the whole game into GAMES tables through the gateway."""

    batches: dict[int, Batch]  # by the move asked for
    commands: int
    services: dict[str, float]  # CPU seconds of every process over the whole import
    client: float
    wall: float


def _submit(tables: list[GatewayTable], steps: list[Step]) -> None:
    for table in tables:
        for step in steps:
            if isinstance(step, EndGame):
                table.end_game()
            else:
                table.submit(step.seat, step)


def gateway_pass(
    system: System, processes: Processes, imported: Imported, moves: list[int], games: int
) -> Pass:
    """Imports the game into `games` fresh tables side by side, action after action, measuring
    the submits of each action at one of `moves`."""
    batches: dict[int, Batch] = {}
    waiting = sorted(moves)
    with Client(system.gateway_target, api_key=system.api_key) as client:
        tables = [GatewayTable(imported.game, client) for _ in range(games)]
        for table in tables:  # as a player's client reads the game before it moves
            table.view()
        totals, client_start, start = processes.totals(), time.process_time(), time.perf_counter()
        for index, steps in enumerate(imported.by_action):
            measured = bool(waiting) and index >= waiting[0] and bool(steps)
            measured = measured and all(isinstance(step, Submit) for step in steps)
            if not measured:
                _submit(tables, steps)
                continue
            time.sleep(SETTLE)
            before = processes.threads()
            client_before, began = time.process_time(), time.perf_counter()
            _submit(tables, steps)
            seconds = time.perf_counter() - began
            client_seconds = time.process_time() - client_before
            after = processes.threads()
            used = {
                name: max(0.0, after[name] - before[name] - processes.idle[name] * seconds)
                for name in processes.pids
            }
            batches[waiting.pop(0)] = Batch(index, games * len(steps), used, client_seconds)
        wall = time.perf_counter() - start
        time.sleep(SETTLE)  # the import's last asynchronous work
        after_totals = processes.totals()
        client_seconds = time.process_time() - client_start
        final = tables[0].view().get("result") or {}
    wall_idle = wall + SETTLE
    services = {
        name: max(0.0, after_totals[name] - totals[name] - processes.idle[name] * wall_idle)
        for name in processes.pids
    }
    worths = sorted(int(n["net_worth"]) for n in final.get("net_worths", []))
    if worths != sorted(imported.game.result.values()):
        raise SystemExit(f"the gateway's import ended at {worths}, not at the site's result")
    return Pass(batches, games * imported.submits, services, client_seconds, wall)


@contextmanager
def running_system(env: Mapping[str, str], log: TextIO) -> Iterator[tuple[System, Processes]]:
    before = set(redis_pids())
    system = System.on_free_ports(log=log)
    system.env.update(env)
    with system:
        processes = Processes.of(system, before)
        yield system, processes


def warm_up(system: System, imported: Imported) -> None:
    """Untimed: two tables through the first 60 actions (connections, caches, code paths)."""
    with Client(system.gateway_target, api_key=system.api_key) as client:
        tables = [GatewayTable(imported.game, client) for _ in range(2)]
        for steps in imported.by_action[:60]:
            _submit(tables, steps)


# -- the rounds and the table -----------------------------------------------------------------


@dataclass
class Figures:
    """Every round's figure of each row and column, in seconds (a figure per command for the
    rows of one command)."""

    rounds: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def add(self, row: str, column: str, seconds: float) -> None:
        self.rounds.setdefault((row, column), []).append(seconds)

    def least(self, row: str, column: str) -> float | None:
        values = self.rounds.get((row, column))
        return min(values) if values else None


def accept_row(move: int | str) -> str:
    return f"accept one command at move {move}"


def add_pass(figures: Figures, column: str, moves: list[int], done: Pass) -> None:
    for move in moves:
        batch = done.batches[move]
        figures.add(accept_row(move), column, batch.per_command_ms() / 1000)
        figures.add(accept_row(move), f"{column} client", batch.client / batch.commands)
    figures.add(
        accept_row("avg"),
        column,
        statistics.fmean(done.batches[m].per_command_ms() / 1000 for m in moves),
    )
    figures.add(
        accept_row("avg"),
        f"{column} client",
        statistics.fmean(done.batches[m].client / done.batches[m].commands for m in moves),
    )
    figures.add("whole import", column, sum(done.services.values()) / done.commands)
    figures.add("whole import", f"{column} client", done.client / done.commands)
    for name, seconds in done.services.items():
        figures.add("whole import", f"{column} {name}", seconds / done.commands)
    for name in done.batches[moves[0]].services:
        mean = statistics.fmean(
            done.batches[m].services[name] / done.batches[m].commands for m in moves
        )
        figures.add(accept_row("avg"), f"{column} {name}", mean)


def add_site(
    figures: Figures, engine: SiteEngine, answer: dict[str, Any], moves: list[int]
) -> None:
    requests = {int(n): float(s) for n, s in answer["request"].items()}
    for move in moves:
        figures.add(accept_row(move), engine.label, requests[move])
    figures.add(accept_row("avg"), engine.label, statistics.fmean(requests[m] for m in moves))
    for row in ("decide+fold", "fold", "importer"):
        figures.add(f"replay: {row}", engine.label, float(answer["replay"]))


def ms(seconds: float | None, digits: int = 2) -> str:
    return "-" if seconds is None else f"{1000 * seconds:.{digits}f}"


def ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None or theirs <= 0:
        return "-"
    return f"{ours / theirs:.3f}"


def print_table(figures: Figures, ours_column: str, rows: list[tuple[str, str]]) -> None:
    print(
        f"{'':<44} {'ours ms':>8} {'client ms':>9} {'site ms':>8} {'site+YJIT':>9}  "
        f"{'÷ site':>7} {'÷ YJIT':>7}"
    )
    for row, label in rows:
        ours = figures.least(row, ours_column)
        client = figures.least(row, f"{ours_column} client")
        site, yjit = figures.least(row, "site"), figures.least(row, "site+YJIT")
        print(
            f"{label:<44} {ms(ours):>8} {ms(client):>9} {ms(site, 1):>8} {ms(yjit, 1):>9}  "
            f"{ratio(ours, site):>7} {ratio(ours, yjit):>7}"
        )


def sample_moves(actions: int) -> list[int]:
    moves = set(range(0, actions, MOVE_STEP)) | {m for m in SHOWN_MOVES if m < actions}
    return sorted(moves)


def main() -> None:
    os.environ.setdefault("SHIKOKU_RATE_PER_SECOND", "0")
    started = time.perf_counter()
    print(machine())
    if not SITE_GAME.is_file():
        print(f"skipped: {SITE_GAME} is missing")
        return
    game = load(SITE_GAME)
    imported = import_in_process(game)
    moves = sample_moves(len(imported.by_action))
    shown = [m for m in SHOWN_MOVES if m in moves]
    print(
        f"{SITE_GAME.name}: {len(imported.by_action)} actions, {imported.submits} commands of "
        f"ours, {len(imported.events)} events; {ROUNDS} rounds taking turns, the least of each "
        f"kept; CPU time; {GAMES} tables a round through the gateway ({MISSED_GAMES} with the "
        f"caches missed); moves averaged: "
        f"{moves[0]}, {moves[1]}, ..., {moves[-1]}; "
        f"SHIKOKU_RATE_PER_SECOND={os.environ['SHIKOKU_RATE_PER_SECOND']}"
    )
    figures = Figures()
    warm = {"SHIKOKU_GRANT_SECONDS": "3600"}
    cold = {"SHIKOKU_RULES_CACHED_GAMES": "1", "SHIKOKU_GRANT_SECONDS": "0"}
    with (
        site_engines(moves) as (engines, skipped),
        tempfile.TemporaryFile("w+") as log,
        running_system(warm, log) as (warm_system, kept),
        running_system(cold, log) as (cold_system, missed),
    ):
        for engine in engines:
            ready = engine.ready
            if ready["result"] != game.result or not ready["finished"]:
                raise SystemExit(f"{engine.label}: the site engine ended at {ready['result']}")
        systems = [
            ("ours", warm_system, kept, GAMES),
            ("ours, caches missed", cold_system, missed, MISSED_GAMES),
        ]
        for _label, system, _processes, _games in systems:
            warm_up(system, imported)
        for _label, _system, processes, _games in systems:
            processes.measure_idle()
        for number in range(1, ROUNDS + 1):
            for engine in engines:
                add_site(figures, engine, engine.round(number), moves)
            for row, seconds in in_process_round(imported).items():
                figures.add(f"replay: {row}", "ours", seconds)
            for label, system, processes, games in systems:
                done = gateway_pass(system, processes, imported, moves, games)
                add_pass(figures, label, moves, done)
                if (dead := system.failed()) is not None:
                    raise SystemExit(f"{dead.name} died with code {dead.process.returncode}")
            print(f"  round {number} done, {time.perf_counter() - started:.0f} s", flush=True)
        idle = {label: processes.idle for label, _system, processes, _games in systems}
        site_info = [engine.ready for engine in engines]

    print()
    paths = site_engine_paths()
    if site_info and not isinstance(paths, str):
        yjit_text = ", with and without YJIT" if len(site_info) > 1 else ", without YJIT"
        print(
            f"site: tobymao/18xx {revision(paths[0].parent)}, ruby {site_info[0]['ruby']}"
            f"{yjit_text}; requiring the engine (not counted) "
            + ", ".join(f"{info['require_seconds']:.1f} s" for info in site_info)
        )
    for reason in skipped:
        print(f"site columns skipped: {reason}")
    accept_rows = [(accept_row(m), f"accept one command at move {m}") for m in shown]
    accept_rows.append((accept_row("avg"), "accept one command, mean over the moves"))
    print()
    print("ours with the game's state in the rules' cache and the seat's grant in the gateway's:")
    print_table(figures, "ours", accept_rows)
    print()
    print("the same, every submit missing the rules' and the gateway's caches:")
    print_table(figures, "ours, caches missed", accept_rows)
    print()
    print("the whole game's replay, ours in this process:")
    print_table(
        figures,
        "ours",
        [
            ("replay: decide+fold", f"replay {SITE_GAME.name}: decide+fold"),
            ("replay: fold", f"replay {SITE_GAME.name}: fold"),
            ("replay: importer", f"replay {SITE_GAME.name}: our importer"),
        ],
    )
    print()
    for label, _system, processes, _games in systems:
        names = list(processes.pids)
        at_move = " ".join(
            f"{name} {ms(figures.least(accept_row('avg'), f'{label} {name}'))}" for name in names
        )
        whole = " ".join(
            f"{name} {ms(figures.least('whole import', f'{label} {name}'))}" for name in names
        )
        print(f"{label}, ms a command by process, mean over the moves: {at_move}")
        print(
            f"{label}, the whole import at full speed, asynchronous work and all: "
            f"{ms(figures.least('whole import', label))} ms a command ({whole}; client "
            f"{ms(figures.least('whole import', f'{label} client'))})"
        )
        print(
            f"{label}, idle CPU taken off (ms a second): "
            + " ".join(f"{name} {1000 * rate:.1f}" for name, rate in idle[label].items())
        )
    print(f"took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
