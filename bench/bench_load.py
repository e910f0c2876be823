"""Benchmark: random-bot games through the gateway under load, beside the pure domain's speed.

The whole system runs as real processes on loopback (shikoku_dev.supervisor, embedded Redis); bots
play 4-player random games through the gateway with the SDK, one thread and one channel per
game, one call a step (pick an action from the legal actions the last SubmitCommand answered
with, Optimize when running trains, SubmitCommand asking for the legal actions after it; a
game's first step lists them with ListLegalActions). A game that ends is replaced by a new one
at once. Printed:

- closed loop, for each number of games at once: every bot acts as soon as it is answered;
- open loop: OPEN_GAMES games, each offered OPEN_RATE commands/s (a bot waits for its next
  slot; when it is behind, it starts at once and the lag is reported);
- for each level: commands/s, p50/p99/max of SubmitCommand and ListLegalActions, errors by gRPC
  status (every attempt counts: the clients do not retry), CPU ms per command of every
  process (its utime+stime over the level's window, over the commands acknowledged in it), the
  whole machine's busy share and how much of it went to processes not ours (on a shared machine
  those figures are not to be trusted), and each process's RSS after the level;
- the pure domain in this process: decide+fold commands/s (as bench_rules.py measures it), and
  the best gateway commands/s divided by it.

The comparison with the 18xx.games site engine is bench/bench_site.py's (CPU time, the sides
taking turns).

Settings (environment):

  SHIKOKU_LOAD_LEVELS       closed-loop games at once, default 5,10,50,100,200
  SHIKOKU_LOAD_SCALE        multiplies every number of games (levels and open loop), default 1
  SHIKOKU_LOAD_SECONDS      seconds per closed-loop level, default 15
  SHIKOKU_LOAD_OPEN_GAMES   open-loop games, default 200
  SHIKOKU_LOAD_OPEN_RATE    commands/s offered by each open-loop game, default 2
  SHIKOKU_LOAD_OPEN_SECONDS seconds of the open loop, default 20
  SHIKOKU_LOAD_DECIDE_GAMES random games for the in-process decide rate, default 10
  SHIKOKU_LOAD_GATEWAYS     gateway processes (the bots balance over them), default 1
  SHIKOKU_LOAD_LIVE         live games of the lobby's sweep, default 5,50,200: the same
                            SHIKOKU_LOAD_LIVE_RATE commands/s in all (default 200), spread over
                            them, for SHIKOKU_LOAD_LIVE_SECONDS each (default 10), so that only
                            the number of live games changes

`make bench` runs it with SHIKOKU_RATE_PER_SECOND=0 (one address, no credentials: the
per-caller rate limit would only measure itself). The defaults take about 2-3 minutes on 2 cores.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from bench.processes import machine, redis_pids, rss_mb, thread_seconds
from infra import garbage
from services.rules.domain.commands import Command, CreateGame
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.events import Event, SeatedPlayer
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState
from shikoku.v1 import game_pb2
from shikoku_dev.supervisor import System
from shikoku_sdk import Client, ShikokuError
from shikoku_sdk.random_player import choose, command_for
from shikoku_sdk.tables import seat_table
from tools import bots

SEATS = 4
CALL_SECONDS = 30.0
SUBMIT, LEGAL, OPTIMIZE, SETUP = "SubmitCommand", "ListLegalActions", "Optimize", "seat a table"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
T = TypeVar("T")


def setting(name: str, default: str) -> str:
    return os.environ.get(name, "").strip() or default


SCALE = float(setting("SHIKOKU_LOAD_SCALE", "1"))


def scaled(games: int) -> int:
    return max(1, round(games * SCALE))


LEVELS = sorted(
    {scaled(int(n)) for n in setting("SHIKOKU_LOAD_LEVELS", "5,10,50,100,200").split(",")}
)
LEVEL_SECONDS = float(setting("SHIKOKU_LOAD_SECONDS", "15"))
OPEN_GAMES = scaled(int(setting("SHIKOKU_LOAD_OPEN_GAMES", "200")))
OPEN_RATE = float(setting("SHIKOKU_LOAD_OPEN_RATE", "2"))
OPEN_SECONDS = float(setting("SHIKOKU_LOAD_OPEN_SECONDS", "20"))
DECIDE_GAMES = int(setting("SHIKOKU_LOAD_DECIDE_GAMES", "10"))
LIVE_LEVELS = sorted({scaled(int(n)) for n in setting("SHIKOKU_LOAD_LIVE", "5,50,200").split(",")})
LIVE_RATE = float(setting("SHIKOKU_LOAD_LIVE_RATE", "200"))
LIVE_SECONDS = float(setting("SHIKOKU_LOAD_LIVE_SECONDS", "10"))
WARM_UP_GAMES, WARM_UP_SECONDS = 4, 3.0
GATEWAYS = int(setting("SHIKOKU_LOAD_GATEWAYS", "1"))


# -- the machine and its processes ------------------------------------------------------------


#: A service's processes (several when it runs as several), by the service's name.
Processes = dict[str, list[int]]


def cpu_seconds(pids: list[int]) -> float:
    """CPU time of the processes (all their threads) so far."""
    return sum(thread_seconds(pid) for pid in pids)


def rss_total(pids: list[int]) -> float:
    """The processes' resident memory together, MB."""
    return sum(rss_mb(pid) for pid in pids)


def machine_jiffies() -> tuple[int, int]:
    """The whole machine's (busy, all) CPU time so far, in clock ticks (/proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


class OthersMeter:
    """From its creation on: the share of the machine's CPU time that went to processes other
    than this one and its (finished) children, e.g. other programs on a shared machine."""

    def __init__(self) -> None:
        self._busy, self._all = machine_jiffies()
        self._ours = self._own()

    @staticmethod
    def _own() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    def share(self) -> float:
        busy, all_ = machine_jiffies()
        elapsed = (all_ - self._all) / CLOCK_TICKS
        if elapsed <= 0:
            return 0.0
        return max(0.0, ((busy - self._busy) / CLOCK_TICKS - (self._own() - self._ours)) / elapsed)


def watched_processes(system: System) -> Processes:
    """The processes of each service of the system (several when it runs as several), and
    this one (the load generator) as `loadgen`."""
    pids: dict[str, list[int]] = defaultdict(list)
    for service in system.services:
        pids[service.name].append(service.process.pid)
    for n, pid in enumerate(redis_pids()):
        pids["redis" if n == 0 else f"redis{n}"] = [pid]
    pids["loadgen"] = [os.getpid()]
    return dict(pids)


# -- figures ----------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def spread(seconds: list[float]) -> str:
    """p50/p99/max in ms."""
    if not seconds:
        return "-"
    ms = [1000 * s for s in seconds]
    return f"{percentile(ms, 0.5):.1f}/{percentile(ms, 0.99):.1f}/{max(ms):.0f}"


@dataclass
class Record:
    """What one bot (or, merged, one level) saw."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)
    commands: int = 0  # SubmitCommand acknowledged within the window
    games_ended: int = 0
    lag: list[float] = field(default_factory=list)  # open loop: start behind its slot
    from_slot: list[float] = field(default_factory=list)  # open loop: slot to the answer
    crash: str = ""

    def merge(self, other: Record) -> None:
        for name, values in other.latencies.items():
            self.latencies[name] += values
        self.errors += other.errors
        self.commands += other.commands
        self.games_ended += other.games_ended
        self.lag += other.lag
        self.from_slot += other.from_slot
        self.crash = self.crash or other.crash

    def errors_text(self) -> str:
        if not self.errors:
            return "none"
        return ", ".join(f"{what} x{count}" for what, count in sorted(self.errors.items()))


@dataclass
class Window:
    """A level's measuring window; bots start when `go` is set and stop starting calls at
    `end`."""

    ready: threading.Barrier
    go: threading.Event = field(default_factory=threading.Event)
    start: float = 0.0
    end: float = 0.0


@dataclass
class Level:
    label: str
    games: int
    seconds: float
    record: Record
    cpu: dict[str, float]  # process -> CPU seconds within the window
    rss: dict[str, float]  # process -> MB after the level
    machine_busy: float  # the share of every CPU's time in the window that was busy
    others: float  # the share of it taken by processes not ours (e.g. other programs)

    @property
    def rate(self) -> float:
        return self.record.commands / self.seconds


# -- the bots ---------------------------------------------------------------------------------


@dataclass
class Game:
    """A game a bot plays: its seats, the legal actions the last answer carried, and the
    seats that have acted."""

    game_id: str
    seats: dict[int, Client]
    listed: game_pb2.ListLegalActionsResponse | None = None
    acted: set[int] = field(default_factory=set)


#: For seating tables ahead: about how many commands a second the system serves (closed loop)
#: and how many a random game takes at the least.
EXPECTED_RATE, STEPS_PER_GAME = 700, 500


def tables_ahead(games: int, seconds: float, rate: float | None) -> int:
    """How many tables each bot seats before the window for the games that end in it."""
    per_bot = (rate * seconds) if rate else EXPECTED_RATE * seconds / games
    return round(per_bot / STEPS_PER_GAME)


class Bot:
    """Plays games one after another for its window: closed loop (`rate` None), or open loop
    with one command slot every 1/rate seconds."""

    def __init__(
        self,
        system: System,
        seed: int,
        window: Window,
        rate: float | None = None,
        ahead: int = 0,
    ) -> None:
        self._target = system.gateway_target
        self._api_key = system.api_key
        self._rng = random.Random(seed)
        self._window = window
        self._rate = rate
        self.record = Record()
        self._ahead = ahead
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _timed(self, name: str, call: Callable[[], T]) -> T | None:
        """The call's answer, or None when it failed (counted by status); timed either way."""
        begin = time.perf_counter()
        try:
            return call()
        except ShikokuError as error:
            self.record.errors[f"{name} {error.code.name}"] += 1
            return None
        finally:
            self.record.latencies[name].append(time.perf_counter() - begin)

    def _seat(self, client: Client) -> Game | None:
        table = self._timed(SETUP, lambda: seat_table(client, SEATS))
        return None if table is None else Game(table.game_id, table.seats)

    def _run(self) -> None:
        try:
            # Every attempt is seen (and counted): a failed call is followed by a fresh look.
            with Client(self._target, api_key=self._api_key, attempts=1, timeout=CALL_SECONDS) as c:
                self._play(c)
        except Exception as error:  # a bug in the benchmark or the SDK: reported, not hidden
            self.record.crash = f"{type(error).__name__}: {error}"
            if not self._window.go.is_set():
                self._window.ready.abort()

    def _seated_ahead(self, client: Client) -> list[Game]:
        """The table played first and the `ahead` that replace games ending in the window,
        seated before it opens, each played until every seat has acted once: a seat's first
        access check (a grant is then kept until its table changes) and a table's seating are
        a game's cost once, not the steady cost of a live game, which the window measures."""
        games: list[Game] = []
        for _ in range(20 * (1 + self._ahead)):
            if len(games) > self._ahead:
                break
            if (game := self._seat(client)) is None:
                time.sleep(0.1)
                continue
            for _ in range(4 * SEATS):
                if self._turn(game, end=time.perf_counter()) is None or game.acted >= set(
                    game.seats
                ):
                    break
            games.append(game)
        if not games:
            raise RuntimeError(f"no table seated: {self.record.errors_text()}")
        return games

    def _play(self, client: Client) -> None:
        ahead = self._seated_ahead(client)
        game: Game | None = ahead.pop(0)
        self.record = Record()  # the window's figures only
        self._window.ready.wait()
        self._window.go.wait()
        end = self._window.end
        period = 1 / self._rate if self._rate else 0.0
        slot = self._window.start + self._rng.uniform(0, period)
        while time.perf_counter() < end:
            if game is None:
                game = ahead.pop(0) if ahead else self._seat(client)
                if game is None:
                    time.sleep(0.05)
                continue
            if period and (wait := slot - time.perf_counter()) > 0:
                time.sleep(wait)
            begun = time.perf_counter()
            if begun >= end:
                return
            taken = self._turn(game, end)
            if taken is None:  # over: the next game takes this slot
                self.record.games_ended += 1
                game = None
                continue
            if period:
                self.record.lag.append(max(0.0, begun - slot))
                if taken:
                    self.record.from_slot.append(taken - slot)
                slot += period

    def _turn(self, game: Game, end: float) -> float | None:
        """One command for the seat that must act: when it was answered (0 if a call failed),
        or None when the game is over. One call a step: the legal actions come with the last
        command's answer (include_legal_actions); only a game's first step, or one after a
        failed call, lists them."""
        game_id, seats = game.game_id, game.seats
        reader = next(iter(seats.values()))
        listed, game.listed = game.listed, None
        if listed is None:
            listed = self._timed(LEGAL, lambda: reader.legal_actions(game_id))
        if listed is None:
            return 0.0
        actions = [a for a in listed.actions if a.seat in seats]
        if not actions:
            return None
        action = choose(actions, self._rng)

        def best_routes(corporation: str) -> list[game_pb2.RouteRun]:
            solution = self._timed(OPTIMIZE, lambda: reader.best_routes(game_id, corporation))
            if solution is None:
                return []
            return [game_pb2.RouteRun(train=r.train, hexes=r.hexes) for r in solution.routes]

        command = command_for(action, self._rng, best_routes)
        acting = seats[action.seat]
        game.acted.add(action.seat)
        answer = self._timed(
            SUBMIT, lambda: acting.act(game_id, command, include_legal_actions=True)
        )
        answered = time.perf_counter()
        if answer is None:
            return 0.0
        game.listed = answer.legal_actions
        if answered <= end:
            self.record.commands += 1
        return answered


def run_level(
    system: System, label: str, games: int, seconds: float, seed: int, rate: float | None = None
) -> Level:
    pids = watched_processes(system)
    window = Window(threading.Barrier(games + 1))
    ahead = tables_ahead(games, seconds, rate)
    bots = [Bot(system, seed + n, window, rate, ahead) for n in range(games)]
    for bot in bots:
        bot.thread.start()
    try:
        window.ready.wait(timeout=300)
    except threading.BrokenBarrierError:
        crashes = {bot.record.crash for bot in bots if bot.record.crash}
        raise RuntimeError(f"{label}: the bots could not seat their tables: {crashes}") from None
    before = {name: cpu_seconds(each) for name, each in pids.items()}
    busy_before, all_before = machine_jiffies()
    window.start = time.perf_counter()
    window.end = window.start + seconds
    window.go.set()
    time.sleep(max(0.0, window.end - time.perf_counter()))
    cpu = {name: cpu_seconds(each) - before[name] for name, each in pids.items()}
    busy_after, all_after = machine_jiffies()
    elapsed = (all_after - all_before) / CLOCK_TICKS  # CPU-seconds of every CPU
    machine_busy = (busy_after - busy_before) / CLOCK_TICKS / elapsed
    others = max(0.0, machine_busy - sum(cpu.values()) / elapsed)
    for bot in bots:
        bot.thread.join(timeout=2 * CALL_SECONDS + 10)
    record = Record()
    for bot in bots:
        record.merge(bot.record)
        if bot.thread.is_alive():
            record.crash = record.crash or "a bot did not finish its last call"
    rss = {name: rss_total(each) for name, each in pids.items()}
    return Level(label, games, seconds, record, cpu, rss, machine_busy, others)


# -- printing the levels ----------------------------------------------------------------------


def print_latencies(levels: list[Level]) -> None:
    print(
        f"{'level':<14} {'games':>5} {'cmd/s':>7} {'cmd/bot':>8} {'ended':>5}  "
        f"{'Submit p50/p99/max ms':>22}  {'Legal p50/p99/max ms':>21}  "
        f"{'Optimize p50/p99 ms':>19}  errors"
    )
    for level in levels:
        r = level.record
        optimize = r.latencies.get(OPTIMIZE, [])
        opt = (
            f"{1000 * percentile(optimize, 0.5):.1f}/{1000 * percentile(optimize, 0.99):.1f}"
            if optimize
            else "-"
        )
        print(
            f"{level.label:<14} {level.games:>5} {level.rate:>7.1f} "
            f"{r.commands / level.games:>8.1f} {r.games_ended:>5}  "
            f"{spread(r.latencies.get(SUBMIT, [])):>22}  {spread(r.latencies.get(LEGAL, [])):>21}  "
            f"{opt:>19}  {r.errors_text()}"
        )
        if r.crash:
            print(f"{'':<14} BOT CRASHED: {r.crash}")


def print_cpu(levels: list[Level], cores: int) -> None:
    names = list(levels[0].cpu)
    services = [n for n in names if n != "loadgen"]
    print(
        f"{'level':<14} {'games':>5} "
        + " ".join(f"{n:>7}" for n in names)
        + f" {'system':>7}  {'busy':>5} {'others':>6}"
    )
    for level in levels:
        commands = max(1, level.record.commands)
        per = {n: 1000 * level.cpu[n] / commands for n in names}
        system = sum(per[n] for n in services)
        print(
            f"{level.label:<14} {level.games:>5} "
            + " ".join(f"{per[n]:>7.2f}" for n in names)
            + f" {system:>7.2f}  {100 * level.machine_busy:>4.0f}% {100 * level.others:>5.0f}%"
        )
    print(
        f"(CPU ms per acknowledged command, utime+stime over the window; loadgen: this process, "
        f"the bots; system: the others of ours; busy: the machine's {cores} CPUs; others: "
        f"of that, processes not ours)"
    )


#: Issue 28's acceptance: CPU of all services per bot step, SubmitCommand's p99 in the open
#: loop, and the lobby's CPU per step staying within this share of its mean over the levels.
STEP_CPU_MS, OPEN_P99_MS, LOBBY_FLAT = 1.5, 50.0, 0.20


def print_acceptance(levels: list[Level]) -> None:
    def per_step(level: Level, names: Iterable[str]) -> float:
        return 1000 * sum(level.cpu[n] for n in names) / max(1, level.record.commands)

    def verdict(holds: bool) -> str:
        return "meets" if holds else "MISSES"

    services = [n for n in levels[0].cpu if n != "loadgen"]
    steps = {f"{level.label} {level.games}": per_step(level, services) for level in levels}
    worst = max(steps.values())
    print(
        "CPU per bot step, all services: "
        + ", ".join(f"{name} {ms:.2f}" for name, ms in steps.items())
        + f" ms; the most {worst:.2f} ms, target <= {STEP_CPU_MS} ({verdict(worst <= STEP_CPU_MS)})"
    )
    opened = levels[-1]
    p99 = 1000 * percentile(opened.record.latencies.get(SUBMIT, [float("inf")]), 0.99)
    clean = not opened.record.errors
    print(
        f"SubmitCommand p99, {opened.games} games offered {OPEN_RATE:g} steps/s: {p99:.1f} ms, "
        f"errors {opened.record.errors_text()}; target <= {OPEN_P99_MS:g} ms and none "
        f"({verdict(p99 <= OPEN_P99_MS and clean)})"
    )
    # The lobby's sweep: the same commands/s spread over more and more live games.
    live = {level.games: per_step(level, ["lobby"]) for level in levels if level.label == "live"}
    mean = sum(live.values()) / len(live) if live else 0.0
    off = max(abs(ms - mean) for ms in live.values()) / mean if mean else 0.0
    print(
        f"lobby CPU per step, {LIVE_RATE:g} steps/s over N live games: "
        + ", ".join(f"{games} {ms:.4f}" for games, ms in live.items())
        + f" ms; at most {100 * off:.0f}% off their mean, target <= {100 * LOBBY_FLAT:.0f}% "
        f"({verdict(bool(live) and off <= LOBBY_FLAT)})"
    )


def print_rss(levels: list[Level]) -> None:
    names = list(levels[0].rss)
    print(f"{'level':<14} {'games':>5} " + " ".join(f"{n:>7}" for n in names) + "  (RSS MB)")
    for level in levels:
        print(
            f"{level.label:<14} {level.games:>5} "
            + " ".join(f"{level.rss[n]:>7.0f}" for n in names)
        )


def print_open_lag(level: Level) -> None:
    r = level.record
    offered = level.games * OPEN_RATE
    late = sum(1 for lag in r.lag if lag > 0.1)
    print(
        f"open loop: offered {offered:.0f} cmd/s, achieved {level.rate:.1f} cmd/s; "
        f"start behind its slot p50/p99 {spread(r.lag).rsplit('/', 1)[0]} ms, "
        f"{late}/{len(r.lag)} slots started >100 ms late; slot to SubmitCommand answered "
        f"p50/p99/max {spread(r.from_slot)} ms"
    )


# -- the pure domain in this process ----------------------------------------------------------


def random_game(seed: int) -> tuple[list[Command], list[Event]]:
    """A 4-player game of the domain-level random bot (as bench_rules.py plays it)."""
    rng = random.Random(seed)
    players = tuple(SeatedPlayer(s, f"p{s}") for s in range(1, SEATS + 1))
    create = CreateGame(players=players, seed=seed)
    commands: list[Command] = [create]
    log = decide(GameState(), create)
    state = fold(log)
    while state.result is None:
        command = bots.command_for(bots.choose(legal_actions(state), rng), rng, state)
        events = decide(state, command)
        commands.append(command)
        log += events
        state = fold(events, state)
    return commands, log


def decide_fold(commands: Iterable[Command]) -> float:
    """Seconds to decide and fold the commands one after another from an empty game."""
    state = GameState()
    start = time.perf_counter()
    for command in commands:
        state = fold(decide(state, command), state)
    return time.perf_counter() - start


@dataclass
class InProcess:
    games: int
    commands: int
    decide_rate: float  # decide+fold, commands/s (the best of DECIDE_PASSES)
    bot_rate: float  # legal actions + choice + routes + decide + fold, commands/s
    others: float  # the machine's share taken by other processes meanwhile


DECIDE_PASSES = 3


def in_process() -> InProcess:
    meter = OthersMeter()
    start = time.perf_counter()
    games = [random_game(seed) for seed in range(DECIDE_GAMES)]
    bot_seconds = time.perf_counter() - start
    commands = sum(len(c) for c, _log in games)
    seconds = min(sum(decide_fold(c) for c, _log in games) for _ in range(DECIDE_PASSES))
    return InProcess(
        len(games), commands, commands / seconds, commands / bot_seconds, meter.share()
    )


# -- main -------------------------------------------------------------------------------------


def load_levels(log: TextIO) -> list[Level]:
    """The closed-loop levels, then the open loop, on one system started for them."""
    levels: list[Level] = []
    with System.on_free_ports(log=log, processes={"gateway": GATEWAYS}) as system:
        run_level(system, "warm-up", WARM_UP_GAMES, WARM_UP_SECONDS, seed=999_000)
        for n, games in enumerate(LEVELS):
            level = run_level(system, "closed", games, LEVEL_SECONDS, seed=1000 * (n + 1))
            levels.append(level)
            print(
                f"  closed {games:>4} games: {level.rate:7.1f} cmd/s, "
                f"errors {level.record.errors_text()}",
                flush=True,
            )
        for n, games in enumerate(LIVE_LEVELS):
            live = run_level(
                system, "live", games, LIVE_SECONDS, seed=2_000_000 + n, rate=LIVE_RATE / games
            )
            print(f"  live   {games:>4} games: {live.rate:7.1f} cmd/s", flush=True)
            levels.append(live)
        opened = run_level(system, "open", OPEN_GAMES, OPEN_SECONDS, seed=1_000_000, rate=OPEN_RATE)
        print(f"  open   {OPEN_GAMES:>4} games: {opened.rate:7.1f} cmd/s", flush=True)
        levels.append(opened)
        if (dead := system.failed()) is not None:
            raise RuntimeError(f"{dead.name} died with code {dead.process.returncode}")
    return levels


def main() -> None:
    os.environ.setdefault("SHIKOKU_RATE_PER_SECOND", "0")
    cores = len(os.sched_getaffinity(0))
    print(machine())
    print(
        f"closed-loop levels {LEVELS} x {LEVEL_SECONDS:.0f} s; open loop {OPEN_GAMES} games x "
        f"{OPEN_RATE:g} cmd/s for {OPEN_SECONDS:.0f} s; {SEATS}-player random-bot games; "
        f"{GATEWAYS} gateway process{'es' if GATEWAYS > 1 else ''}; "
        f"SHIKOKU_RATE_PER_SECOND={os.environ['SHIKOKU_RATE_PER_SECOND']}"
    )
    print()

    pure = in_process()
    print(
        f"in-process, pure domain (one core): {pure.games} random games, {pure.commands} "
        f"commands: decide+fold {pure.decide_rate:,.0f} commands/s (best of {DECIDE_PASSES} "
        f"passes); the whole bot step (legal actions, routes, decide, fold) "
        f"{pure.bot_rate:,.0f} commands/s; other processes took {100 * pure.others:.0f}% of "
        f"the machine meanwhile"
    )
    print()

    # The bots' own process is set as the services are (infra.garbage): its full collections
    # would otherwise hold up the answers it times.
    garbage.settle()
    # The processes' output is kept aside, and shown only when one of them fails.
    with tempfile.TemporaryFile("w+") as log:
        try:
            levels = load_levels(log)
        except RuntimeError as error:
            log.seek(0)
            tail = "".join(log.readlines()[-40:])
            raise SystemExit(f"{error}; the processes' last output:\n{tail}") from None
    opened = levels[-1]
    print()
    print(f"latencies (closed: as fast as answered; open: offered {OPEN_RATE:g} cmd/s per game)")
    print_latencies(levels)
    print_open_lag(opened)
    print()
    print_cpu(levels, cores)
    print()
    print_acceptance(levels)
    print()
    print_rss(levels)
    print()
    best = max(levels, key=lambda level: level.rate)
    print(
        f"gateway / in-process: best {best.rate:.1f} cmd/s ({best.label}, {best.games} games) / "
        f"decide+fold {pure.decide_rate:,.0f} cmd/s = {best.rate / pure.decide_rate:.3f} "
        f"(/ whole in-process bot step {pure.bot_rate:,.0f} cmd/s = "
        f"{best.rate / pure.bot_rate:.3f})"
    )
    if any(level.record.crash for level in levels):
        raise SystemExit("a bot crashed")


if __name__ == "__main__":
    main()
