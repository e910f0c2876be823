"""Benchmark: the figures of the capacity model (docs/operations.md, "Capacity model").

The whole system runs as real processes on loopback (shikoku_dev.supervisor, embedded Redis, one
process of each service); random-bot games of `SEATS` players are played through it, and each
process's CPU is read from /proc over each measuring window (bench_load's helpers). Printed:

- **idle**: each process's CPU share with nothing played (what a replica costs standing still);
- **CPU ms per command** of every process, in three kinds of play. A command is one
  acknowledged SubmitCommand with the reads its player makes for it (one ListLegalActions, an
  Optimize when running trains); commands/s per core of a process is 1000 / its ms.
  - *bot pace (gRPC)*: `BOT_GAMES` SDK bots acting as soon as answered (then playing their
    games to the end, unmeasured, so that there are finished games to weigh);
  - *bot pace (web)*: `WEB_GAMES` bots doing the same through the web entrypoint, in Connect
    JSON over HTTP/1.1 keep-alive, as the board page's fetch calls do;
  - *human pace, board pages*: `HUMAN_GAMES` tables offered one command every `HUMAN_PERIOD`
    s each, every seat's page watching the game through the web entrypoint (WatchGame with
    the state, a Connect stream) and asking for its legal actions after each state, as
    app.js does. First measured with nothing played (*tables at rest*: heartbeats, CPU ms a
    second per table), then played; the commands are charged what the rest did not cost;
- **RSS per page**: web and gateway RSS before and after the human tables' pages opened;
- **Redis memory**: MEMORY USAGE of every key of each game and its table, for the finished
  games and for a table just started, per event and per command, and INFO used_memory before
  and after all the play, over the games played;
- **RSS per cached game**: rules, gateway and lobby read every stored game again (GetState as
  one of its seats) after rules is restarted with an empty cache; their RSS before and after,
  over the number of games, finished and unfinished apart.

Settings (environment): SHIKOKU_CAPACITY_SECONDS (each load window, default 15),
SHIKOKU_CAPACITY_IDLE_SECONDS (default 8), SHIKOKU_CAPACITY_SCALE (multiplies the numbers of
games, default 1). `make bench` runs it with SHIKOKU_RATE_PER_SECOND=0; about 2 minutes.
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import json
import os
import random
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO, TypeVar, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc
import redis
from google.protobuf import json_format
from google.protobuf.message import Message

from bench.bench_load import cpu_seconds, rss_total, watched_processes
from bench.processes import machine
from shikoku.v1 import game_pb2, routes_pb2
from shikoku_dev.supervisor import System
from shikoku_sdk import Client, ShikokuError
from shikoku_sdk.random_player import RandomPlayer, choose, command_for
from shikoku_sdk.tables import SeatedTable, seat_table

SEATS = 4
M = TypeVar("M", bound=Message)


def setting(name: str, default: str) -> float:
    return float(os.environ.get(name, "").strip() or default)


SCALE = setting("SHIKOKU_CAPACITY_SCALE", "1")
WINDOW_SECONDS = setting("SHIKOKU_CAPACITY_SECONDS", "15")
IDLE_SECONDS = setting("SHIKOKU_CAPACITY_IDLE_SECONDS", "8")
BOT_GAMES = max(1, round(8 * SCALE))
HUMAN_GAMES = max(1, round(40 * SCALE))
# Seconds between one table's commands: longer than a gateway remembers a credential's grants
# (SHIKOKU_GRANT_SECONDS, 5), as at a human pace of 10-30 s, so every call is checked again.
HUMAN_PERIOD = 6.0
HUMAN_SECONDS = max(2 * WINDOW_SECONDS, 20.0)  # few commands: a longer window
WEB_GAMES = max(1, round(6 * SCALE))
HEARTBEAT_SECONDS = 10  # the board page's (watch.js)
SERVICES = ("rules", "routes", "lobby", "gateway", "web", "redis")


# -- measuring windows ------------------------------------------------------------------------


@dataclass
class Window:
    label: str
    seconds: float
    commands: int
    cpu: dict[str, float]  # process -> CPU seconds in the window

    def ms_per_command(self, name: str, idle: dict[str, float] | None = None) -> float:
        """CPU ms per command; with `idle` (cores at rest), less what the process spends idle."""
        spent = self.cpu.get(name, 0.0) - (idle or {}).get(name, 0.0) * self.seconds
        return 1000 * max(spent, 0.0) / max(self.commands, 1)


class Counter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0
        self.errors: dict[str, int] = {}

    def add(self) -> None:
        with self._lock:
            self.value += 1

    def error(self, what: str) -> None:
        with self._lock:
            self.errors[what] = self.errors.get(what, 0) + 1


def measure(system: System, label: str, seconds: float, counted: Counter) -> Window:
    """Every process's CPU, and the commands `counted`, over the next `seconds`."""
    pids = watched_processes(system)
    cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    commands_before = counted.value
    time.sleep(seconds)
    cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
    return Window(label, seconds, counted.value - commands_before, cpu)


# -- players ----------------------------------------------------------------------------------


class Closable(Protocol):
    def close(self) -> None: ...


class Play:
    """Threads that play random games, one table each, replaced when it ends, until `stop`;
    with `period`, one command per table every `period` s; with `watch`, every seat also
    watches its game as the board page does (`_follow`)."""

    def __init__(
        self,
        system: System,
        games: int,
        period: float = 0.0,
        watch: bool = False,
        paused: bool = False,
        finish: bool = False,
    ) -> None:
        self.system = system
        self.period = period
        self.watch = watch
        #: Told to stop, each player still plays its game to the end (for finished games).
        self.finish = finish
        #: Set when the players may act (`paused`: not until the caller sets it).
        self.go = threading.Event()
        if not paused:
            self.go.set()
        self.stop = threading.Event()
        self.counted = Counter()
        self.tables: list[SeatedTable] = []
        self._watches: list[Closable] = []
        self._watchers: list[threading.Thread] = []
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._ready = threading.Barrier(games + 1)
        self.threads = [
            threading.Thread(target=self._run, args=(n,), daemon=True) for n in range(games)
        ]

    def __enter__(self) -> Play:
        for thread in self.threads:
            thread.start()
        self._ready.wait(timeout=300)  # every first table seated
        if self.watch:  # and every seat's watch open
            deadline = time.monotonic() + 60
            while len(self._watches) < SEATS * len(self.threads):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"only {len(self._watches)} watches opened")
                time.sleep(0.1)
            time.sleep(1.0)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.go.set()
        with self._lock:
            for watch in self._watches:
                watch.close()
        for thread in self._watchers:
            thread.join(timeout=30)
        self._released.set()  # now the players may close their channels
        for thread in self.threads:
            thread.join(timeout=60)

    def _seat(self, client: Client) -> SeatedTable:
        table = seat_table(client, SEATS)
        with self._lock:
            self.tables.append(table)
        if self.watch:
            for seat in table.seats.values():
                follower = threading.Thread(
                    target=self._follow_quietly, args=(seat, table.game_id), daemon=True
                )
                with self._lock:
                    self._watchers.append(follower)
                follower.start()
        return table

    def _watching(self, watch: Closable) -> None:
        with self._lock:
            self._watches.append(watch)

    def _follow_quietly(self, seat: Client, game_id: str) -> None:
        try:
            self._follow(seat, game_id)
        except (ShikokuError, OSError, ValueError, http.client.HTTPException):  # closed at the end
            return

    def _follow(self, seat: Client, game_id: str) -> None:
        """One seat's board page over gRPC: the game's batches with the state after each, and
        after each state the seat's legal actions (as app.js asks for them)."""
        watch = seat.watch(game_id, include_state=True, heartbeat_seconds=HEARTBEAT_SECONDS)
        self._watching(watch)
        for update in watch:
            if self.stop.is_set():
                return
            if update.state is not None:
                seat.legal_actions(game_id)

    def _run(self, n: int) -> None:
        rng = random.Random(n)
        with Client(self.system.gateway_target, api_key=self.system.api_key) as client:
            table = self._seat(client)
            self._ready.wait()
            self.go.wait()
            self._play(client, table, rng)
            self._released.wait(timeout=60)

    def _play(self, client: Client, table: SeatedTable, rng: random.Random) -> None:
        player = RandomPlayer(table.game_id, table.seats, rng)
        slot = time.perf_counter() + rng.uniform(0, self.period)
        while self.finish or not self.stop.is_set():
            wait = slot - time.perf_counter() if self.period else 0.0
            if wait > 0 and self.stop.wait(wait):
                return
            slot += self.period
            try:
                more = self.step(player, table)
            except ShikokuError as error:
                self.counted.error(error.code.name)
                if self.stop.is_set():
                    return
                continue
            if not more:
                if self.stop.is_set():
                    return
                table = self._seat(client)
                player = RandomPlayer(table.game_id, table.seats, rng)
                continue
            self.counted.add()

    def step(self, player: RandomPlayer, table: SeatedTable) -> bool:
        return player.step()


class WebPlay(Play):
    """The same players through the web entrypoint, as the board page calls it: unary calls
    in Connect JSON over HTTP/1.1 keep-alive, WatchGame as a Connect stream (tables are seated
    over gRPC, outside the counts)."""

    def __init__(self, system: System, games: int, *args: Any, **options: Any) -> None:
        super().__init__(system, games, *args, **options)
        self._local = threading.local()
        host, _, port = system.env["SHIKOKU_WEB_ADDR"].rpartition(":")
        self._address = (host, int(port))

    def _headers(self, token: str, content_type: str) -> dict[str, str]:
        return {
            "content-type": content_type,
            "connect-protocol-version": "1",
            "x-api-key": self.system.api_key,
            "authorization": f"Bearer {token}",
        }

    def _call(self, method: str, token: str, request: Message, answer: type[M]) -> M:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = http.client.HTTPConnection(*self._address)
        body = json.dumps(json_format.MessageToDict(request)).encode()
        headers = self._headers(token, "application/json")
        connection.request("POST", f"/shikoku.v1.{method}", body=body, headers=headers)
        response = connection.getresponse()
        text = response.read()
        if response.status != 200:
            failed = (
                grpc.StatusCode.UNAVAILABLE if response.status >= 500 else grpc.StatusCode.UNKNOWN
            )
            raise ShikokuError(failed, text.decode(errors="replace")[:200])
        return json_format.Parse(text, answer(), ignore_unknown_fields=True)

    def _follow(self, seat: Client, game_id: str) -> None:
        """One seat's board page: WatchGame with the state as a Connect stream, and after each
        state the seat's legal actions."""
        token = cast(str, seat.credential)
        watch = ConnectStream(self._address)
        self._watching(watch)
        request = {
            "gameId": game_id,
            "fromVersion": "1",
            "includeState": True,
            "heartbeatSeconds": HEARTBEAT_SECONDS,
        }
        headers = self._headers(token, "application/connect+json")
        for message in watch.open("/shikoku.v1.GameService/WatchGame", request, headers):
            if self.stop.is_set():
                return
            if "state" in message:
                self._call(
                    "GameService/ListLegalActions",
                    token,
                    game_pb2.ListLegalActionsRequest(game_id=game_id),
                    game_pb2.ListLegalActionsResponse,
                )
            if message.get("event", {}).get("type") == "GameEnded":
                return

    def step(self, player: RandomPlayer, table: SeatedTable) -> bool:
        game = table.game_id
        reader = cast(str, next(iter(table.seats.values())).credential)
        listed = self._call(
            "GameService/ListLegalActions",
            reader,
            game_pb2.ListLegalActionsRequest(game_id=game),
            game_pb2.ListLegalActionsResponse,
        )
        actions = list(listed.actions)
        if not actions:
            return False
        action = choose(actions, player.rng)

        def best_routes(corporation: str) -> list[game_pb2.RouteRun]:
            found = self._call(
                "RoutesService/Optimize",
                reader,
                routes_pb2.OptimizeRequest(game_id=game, corporation=corporation),
                routes_pb2.RouteSolution,
            )
            return [game_pb2.RouteRun(train=r.train, hexes=r.hexes) for r in found.routes]

        command = command_for(action, player.rng, best_routes)
        self._call(
            "GameService/SubmitCommand",
            cast(str, table.seats[action.seat].credential),
            game_pb2.SubmitCommandRequest(
                game_id=game, command=command, command_id=str(uuid.uuid4())
            ),
            game_pb2.SubmitCommandResponse,
        )
        return True


class ConnectStream:
    """A server stream in the Connect protocol with JSON: the request and every message of
    the answer enveloped (a flags byte, 0x02 for the end; a 4-byte big-endian length)."""

    def __init__(self, address: tuple[str, int]) -> None:
        self._connection = http.client.HTTPConnection(*address, timeout=120)

    def open(self, path: str, request: dict[str, Any], headers: dict[str, str]) -> Iterator[Any]:
        body = json.dumps(request).encode()
        self._connection.request(
            "POST", path, body=struct.pack(">BI", 0, len(body)) + body, headers=headers
        )
        response = self._connection.getresponse()
        if response.status != 200:
            raise ShikokuError(grpc.StatusCode.UNKNOWN, f"HTTP {response.status}")
        while len(head := response.read(5)) == 5:
            flags, length = struct.unpack(">BI", head)
            message = json.loads(response.read(length))
            if flags & 0x02:
                if "error" in message:
                    raise ShikokuError(grpc.StatusCode.UNKNOWN, str(message["error"]))
                return
            yield message

    def close(self) -> None:
        if (sock := self._connection.sock) is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


# -- Redis memory -----------------------------------------------------------------------------


@dataclass
class GameMemory:
    game_id: str
    events: int
    commands: int
    finished: bool
    bytes: dict[str, int] = field(default_factory=dict)  # key suffix -> MEMORY USAGE

    @property
    def total(self) -> int:
        return sum(self.bytes.values())

    @property
    def without_command_ids(self) -> int:
        """What stays after the day the command ids are kept (`game:{id}:commands`)."""
        return self.total - self.bytes.get("game commands", 0)


GAME_KEYS = {
    "game events": "game:{{{id}}}:events",
    "game commands": "game:{{{id}}}:commands",
    "game snapshot": "game:{{{id}}}:snapshot",
    "game summary": "game:{{{id}}}:summary",
    "table events": "table:{{{id}}}:events",
    "table commands": "table:{{{id}}}:commands",
}


def game_memory(client: redis.Redis, game_id: str) -> GameMemory:
    usage: dict[str, int] = {}
    for name, pattern in GAME_KEYS.items():
        found = client.memory_usage(pattern.format(id=game_id), samples=0)
        usage[name] = int(found or 0)
    events_key = GAME_KEYS["game events"].format(id=game_id)
    events = int(client.xlen(events_key))
    last = cast(list[tuple[bytes, dict[bytes, bytes]]], client.xrevrange(events_key, count=1))
    finished = bool(last) and last[0][1].get(b"t") == b"GameEnded"
    commands = int(client.hlen(GAME_KEYS["game commands"].format(id=game_id)))
    return GameMemory(game_id, events, commands, finished, usage)


def used_memory(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


# -- RSS per cached game ----------------------------------------------------------------------


def rss(system: System) -> dict[str, float]:
    pids = watched_processes(system)
    return {name: rss_total(pid) for name, pid in pids.items() if name in SERVICES}


def read_all(system: System, tables: dict[str, SeatedTable], ids: list[str]) -> None:
    """Every game in `ids` read once as one of its seats (GetState), so each is cached."""
    with Client(system.gateway_target, api_key=system.api_key) as client:
        for game_id in ids:
            seat = tables[game_id].seats[1].credential
            assert seat is not None
            client.with_credential(seat).state(game_id)


# -- the run --------------------------------------------------------------------------------


def idle_cores(system: System) -> dict[str, float]:
    """Cores each process takes with nothing played."""
    rest = measure(system, "idle", IDLE_SECONDS, Counter())
    return {name: spent / rest.seconds for name, spent in rest.cpu.items()}


def played(system: System, play: Play, label: str, seconds: float = WINDOW_SECONDS) -> Window:
    with play:
        measured = measure(system, label, seconds, play.counted)
    if play.counted.errors:
        print(f"  {label}: errors {play.counted.errors}", flush=True)
    return measured


def main() -> None:
    os.environ.setdefault("SHIKOKU_RATE_PER_SECOND", "0")
    started = datetime.datetime.now(datetime.UTC)
    print(machine())
    print(
        f"at {started:%Y-%m-%d %H:%M} UTC; {SEATS}-player random-bot games; windows of "
        f"{WINDOW_SECONDS:.0f} s; SHIKOKU_RATE_PER_SECOND={os.environ['SHIKOKU_RATE_PER_SECOND']}"
    )
    # The processes' output is kept aside, and shown only when something fails.
    with tempfile.TemporaryFile("w+") as log:
        try:
            run(log)
        except Exception as error:
            log.seek(0)
            tail = "".join(log.readlines()[-30:])
            raise SystemExit(
                f"{type(error).__name__}: {error}; the processes said:\n{tail}"
            ) from None


def run(log: TextIO) -> None:
    with System.on_free_ports(log=log) as system:
        store = redis.Redis.from_url(system.env["REDIS_URL"])
        idle = idle_cores(system)
        played(system, Play(system, 2), "warm-up", 3.0)
        memory_before = used_memory(store)

        bots = Play(system, BOT_GAMES, finish=True)  # their games end: finished games to weigh
        windows = [(played(system, bots, "bot pace (gRPC)"), idle)]
        browsers = WebPlay(system, WEB_GAMES)
        windows.append((played(system, browsers, "bot pace (web, Connect JSON)"), idle))
        # Human tables at the board page: first seated, every seat's page watching, nothing
        # played (what an open table costs by the second); then played at their pace, the
        # commands charged what the tables cost at rest already.
        humans = WebPlay(system, HUMAN_GAMES, HUMAN_PERIOD, watch=True, paused=True)
        before_streams = rss(system)
        with humans:
            with_streams = rss(system)
            rest = measure(system, "tables at rest", IDLE_SECONDS, humans.counted)
            humans.go.set()
            human = measure(system, "human pace, board pages", HUMAN_SECONDS, humans.counted)
        at_rest = {name: spent / rest.seconds for name, spent in rest.cpu.items()}
        windows.append((human, at_rest))
        print_cpu(windows, idle, at_rest, HUMAN_GAMES)
        streams = HUMAN_GAMES * SEATS
        print(
            f"RSS with {streams} pages watching (a WatchGame stream each, through the web "
            "entrypoint), KiB a page: "
            + ", ".join(
                f"{name} {1024 * (with_streams[name] - before_streams[name]) / streams:.0f}"
                for name in ("web", "gateway")
            )
            + " (seating their tables counted in)"
        )

        tables = {t.game_id: t for play in (bots, browsers, humans) for t in play.tables}
        memory_after = used_memory(store)
        with Client(system.gateway_target, api_key=system.api_key) as client:
            fresh = seat_table(client, SEATS)  # a game at its beginning
        games = [game_memory(store, game) for game in tables]
        print_memory(games, game_memory(store, fresh.game_id), memory_after - memory_before)
        print_rss(system, tables, games)
        if (dead := system.failed()) is not None:
            raise RuntimeError(f"{dead.name} died with code {dead.process.returncode}")


def print_cpu(
    windows: list[tuple[Window, dict[str, float]]],
    idle: dict[str, float],
    at_rest: dict[str, float],
    tables: int,
) -> None:
    print()
    print(
        "idle (nothing played), % of one core: "
        + ", ".join(f"{name} {100 * idle.get(name, 0.0):.2f}" for name in SERVICES)
    )
    print(
        f"{tables} tables at rest, every seat watching, CPU ms a second per table: "
        + ", ".join(
            f"{name} {1000 * (at_rest.get(name, 0.0) - idle.get(name, 0.0)) / tables:.3f}"
            for name in SERVICES
        )
    )
    print(
        f"{'CPU ms per command':<38} {'cmd/s':>6} "
        + " ".join(f"{n:>8}" for n in SERVICES)
        + f" {'all':>8}"
    )
    for w, less in windows:
        per = {name: w.ms_per_command(name, less) for name in SERVICES}
        label = w.label + (" (less rest)" if less is at_rest else "")
        print(
            f"{label:<38} {w.commands / w.seconds:>6.1f} "
            + " ".join(f"{per[n]:>8.2f}" for n in SERVICES)
            + f" {sum(per.values()):>8.2f}"
        )
    print(
        "(less idle, or the tables at rest; commands/s per core of a service = 1000 / its ms; "
        "'all': CPU ms per command of all the processes together; the bots' own not counted)"
    )


def print_memory(games: list[GameMemory], fresh: GameMemory, used: int) -> None:
    finished = [g for g in games if g.finished]
    live = [g for g in games if not g.finished]
    print()
    print(
        f"Redis: {len(games)} games played ({len(finished)} finished, {len(live)} unfinished);"
        f" INFO used_memory grew {used / 1024:,.0f} KiB = {used / max(len(games), 1) / 1024:.1f}"
        f" KiB a game"
    )
    if finished:
        events = statistics.mean(g.events for g in finished)
        commands = statistics.mean(g.commands for g in finished)
        print(
            f"  a finished game: {events:.0f} events, {commands:.0f} commands on average; "
            f"MEMORY USAGE of its keys, mean (max):"
        )
        for name in GAME_KEYS:
            values = [g.bytes[name] for g in finished]
            print(
                f"    {name:<15} {statistics.mean(values) / 1024:>8.1f} KiB "
                f"({max(values) / 1024:.1f})"
            )
        total = statistics.mean(g.total for g in finished)
        kept = statistics.mean(g.without_command_ids for g in finished)
        per_event = statistics.mean(g.bytes["game events"] / g.events for g in finished)
        per_command = statistics.mean(
            g.bytes["game commands"] / g.commands for g in finished if g.commands
        )
        print(
            f"    all keys {total / 1024:.1f} KiB; after its command ids expire (a day) "
            f"{kept / 1024:.1f} KiB; {per_event:.0f} bytes an event, {per_command:.0f} bytes "
            f"a command id"
        )
    print(f"  a table just started: {fresh.events} events, all keys {fresh.total / 1024:.1f} KiB")
    if live:
        print(
            f"  the unfinished games: {statistics.mean(g.events for g in live):.0f} events, "
            f"{statistics.mean(g.total for g in live) / 1024:.1f} KiB on average"
        )


def print_rss(system: System, tables: dict[str, SeatedTable], games: list[GameMemory]) -> None:
    finished = [g.game_id for g in games if g.finished and g.game_id in tables]
    live = [g.game_id for g in games if not g.finished and g.game_id in tables]
    rules = system.processes("rules")[0]
    system.restart(rules)  # an empty cache
    read_all(system, tables, live[:1] or finished[:1])  # the first call's own allocations
    before = rss(system)
    read_all(system, tables, live)
    middle = rss(system)
    read_all(system, tables, finished)
    after = rss(system)
    print()
    print(
        f"RSS per cached game, KiB (rules restarted, then every game read once as a seat): "
        f"{len(live)} unfinished, then {len(finished)} finished"
    )
    for name in ("rules", "gateway", "lobby"):
        per_live = 1024 * (middle[name] - before[name]) / max(len(live), 1)
        per_done = 1024 * (after[name] - middle[name]) / max(len(finished), 1)
        print(
            f"  {name:<8} {before[name]:6.0f} MB -> {after[name]:6.0f} MB: unfinished "
            f"{per_live:6.0f}, finished {per_done:6.0f}"
        )
    print("  RSS MB now: " + ", ".join(f"{n} {v:.0f}" for n, v in after.items()))


if __name__ == "__main__":
    main()
