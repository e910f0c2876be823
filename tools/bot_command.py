"""`shikoku bot --players-json FILE`: one process plays every seat the players of FILE (what
`shikoku tournament create --json` printed) hold at their tournament's tables, round after
round, until the tournament has finished (or Ctrl-C).

Seats are found from the tournament (each table of the current round lists its players in seat
order), which comes over WatchTournament, the tournament's one stream, with each change of its
tables; a player's own credential acts for each of their seats. Each game is played by the SDK's
random player (`shikoku_sdk.random_player.RandomPlayer`), or with --strategy heuristic its
heuristic player (`shikoku_sdk.heuristic.HeuristicPlayer`), in short slices on a few threads: a
slice takes actions while one of our seats must act and hands the game back when none does, so
a game waiting for a seat played elsewhere (`--only`) holds no thread. A game handed back is
taken up again as soon as the stream says its table changed, and otherwise asked about after
waits that double from FIRST_WAIT_SECONDS to IDLE_SECONDS: the stream trails the game by a
moment, which a quick look saves when another bot plays the other seats, while a seat whose
player thinks for minutes is asked about once every IDLE_SECONDS.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from shikoku.v1 import lobby_pb2
from shikoku_sdk import Client, RandomPlayer, ShikokuError
from shikoku_sdk.heuristic import HeuristicPlayer
from tools.gateway_command import require_gateway, run_against_gateway
from tools.tournament_input import InputError

STRATEGIES = ("random", "heuristic")
WORKERS = 8
SLICE_ACTIONS = 40  # a slice's actions at most, so that every game gets its turns
# Before asking again about a game where none of our seats could act: FIRST_WAIT_SECONDS,
# doubling while nothing changes up to IDLE_SECONDS; a change heard of on the stream asks at once.
FIRST_WAIT_SECONDS = 0.1
IDLE_SECONDS = 5.0
HEARTBEAT_SECONDS = 5  # the stream's, so that a dead one is noticed
SEATING_SECONDS = 0.5  # before looking again at a table of ours whose game has not started
TICK_SECONDS = 0.02
STREAM_END_SECONDS = 2.0  # for the stream's thread to end once the channel is closed
Say = Callable[[str], None]


@dataclass(frozen=True)
class BotPlayer:
    """One player of the players file: who they are and the credential that acts for them."""

    name: str
    player_id: str
    credential: str


@dataclass(frozen=True)
class PlayersFile:
    """What `shikoku bot` reads: the tournament and the players it plays for."""

    tournament_id: str
    players: list[BotPlayer]


def read_players_json(path: Path, only: Iterable[str] = ()) -> PlayersFile:
    """The tournament and players of `path` (the output of `tournament create --json`), only
    those named in `only` when it names any (each must be in the file)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        players = [
            BotPlayer(str(p["name"]), str(p["player_id"]), str(p["credential"]))
            for p in document["players"]
        ]
        tournament_id = str(document["tournament_id"])
    except OSError as error:
        raise InputError(f"{path}: cannot read it: {error.strerror or error}") from None
    except (ValueError, KeyError, TypeError) as error:
        raise InputError(
            f"{path}: not what `shikoku tournament create --json` prints ({error!r})"
        ) from None
    wanted = [name for name in only if name]
    if wanted:
        known = {player.name for player in players}
        if missing := [name for name in wanted if name not in known]:
            raise InputError(f"--only: {missing[0]!r} is not a player of {path}")
        players = [player for player in players if player.name in wanted]
    return PlayersFile(tournament_id, players)


@dataclass
class Game:
    """A game the bot plays: its random player and when it is next worth a slice."""

    table_id: str
    player: RandomPlayer | HeuristicPlayer
    due: float = 0.0
    slice: Future[int] | None = field(default=None, repr=False)
    changed: bool = False  # its table changed while a slice was under way
    wait: float = FIRST_WAIT_SECONDS  # after the next slice that takes no action


class TournamentBot:
    """Plays `players`' seats at `tournament_id`'s tables over `client`'s channel."""

    def __init__(
        self,
        client: Client,
        tournament_id: str,
        players: list[BotPlayer],
        say: Say,
        strategy: str = "random",
    ) -> None:
        self._strategy = strategy
        self._client = client
        self._tournament_id = tournament_id
        self._by_id = {p.player_id: client.with_credential(p.credential) for p in players}
        self._say = say
        self._games: dict[str, Game] = {}  # by table id
        self._stop = threading.Event()
        self._round = 0
        self._live: set[str] = set()  # the tables of ours whose result is not recorded
        self._heard = _Heard()
        self._listener = threading.Thread(target=self._listen, name="bot-stream", daemon=True)

    def run(self) -> lobby_pb2.Tournament:
        """Plays until the tournament has finished; returns it as it ended."""
        self._listener.start()
        with ThreadPoolExecutor(WORKERS, thread_name_prefix="bot") as pool:
            try:
                return self._run(pool)
            finally:
                self._stop.set()  # slices under way end after their current action

    def join_stream(self, seconds: float) -> None:
        """Waits for the stream's thread to end once the channel is closed: a thread still in a
        gRPC call while the interpreter exits can crash it (SIGSEGV after "stopped")."""
        if self._listener.is_alive():
            self._listener.join(seconds)

    def _listen(self) -> None:
        """Follows WatchTournament (the SDK opens it again when it breaks) until the bot stops;
        the channel's closing ends a call under way."""
        try:
            for item in self._client.watch_tournament(self._tournament_id, HEARTBEAT_SECONDS):
                if self._stop.is_set():
                    return
                kind = item.WhichOneof("item")
                if kind == "tournament":
                    self._heard.tournament(item.tournament)
                elif kind == "table":
                    self._heard.table(item.table.table_id)
        except Exception as error:  # handed to the main thread, which raises it
            if not self._stop.is_set():
                self._heard.failed(error)

    def _run(self, pool: ThreadPoolExecutor) -> lobby_pb2.Tournament:
        followed: lobby_pb2.Tournament | None = None
        seated_by = 0.0  # when to follow it (again: a table of ours had no game yet)
        while True:
            now = time.monotonic()
            tournament, changed = self._heard.take()
            if tournament is not None and tournament.finished:
                return tournament
            if tournament is not None:
                followed, seated_by = tournament, now
            if followed is not None and 0 < seated_by <= now:
                seated_by = 0.0 if self._follow(followed) else now + SEATING_SECONDS
            for table_id in changed:
                if (woken := self._games.get(table_id)) is not None:
                    woken.changed = True
            for game in list(self._games.values()):
                if game.slice is not None and game.slice.done():
                    taken = game.slice.result()  # a refused call stops the bot
                    game.slice = None
                    if taken:
                        game.due, game.wait = now, FIRST_WAIT_SECONDS
                    else:
                        game.due, game.wait = now + game.wait, min(2 * game.wait, IDLE_SECONDS)
                if game.slice is None and game.table_id not in self._live:
                    del self._games[game.table_id]
                    continue
                if game.slice is None and game.changed:
                    game.changed, game.due, game.wait = False, now, FIRST_WAIT_SECONDS
                if game.slice is None and game.due <= now:
                    game.slice = pool.submit(self._play_slice, game.player)
            time.sleep(TICK_SECONDS)

    def _follow(self, tournament: lobby_pb2.Tournament) -> bool:
        """Takes up the current round's tables where we hold seats; lets go of those whose
        result is recorded. False if one of ours has no game yet (to be looked at again)."""
        if not tournament.rounds:
            return True
        current = tournament.rounds[-1]
        if current.number != self._round:
            self._round = current.number
            self._say(f"round {current.number}: {len(current.tables)} tables")
        live: set[str] = set()
        seated = True
        for entry in current.tables:
            seats = {
                seat: self._by_id[player_id]
                for seat, player_id in enumerate(entry.player_ids, start=1)
                if player_id in self._by_id
            }
            if entry.end_reason or not seats:
                continue
            if not entry.table_id:
                seated = False  # a round still being seated
                continue
            live.add(entry.table_id)
            if entry.table_id not in self._games:
                game_id = self._client.get_table(entry.table_id).game_id
                if not game_id:
                    seated = False
                    continue
                rng = random.Random(game_id)  # the same game plays the same way again
                kind = HeuristicPlayer if self._strategy == "heuristic" else RandomPlayer
                player = kind(game_id, seats, rng)
                self._games[entry.table_id] = Game(entry.table_id, player)
        self._live = live
        return seated

    def _play_slice(self, player: RandomPlayer | HeuristicPlayer) -> int:
        """Actions while one of our seats must act, up to SLICE_ACTIONS; how many."""
        taken = 0
        try:
            while taken < SLICE_ACTIONS and not self._stop.is_set() and player.step():
                taken += 1
        except ShikokuError as error:
            # A rule refusal here is a race with the game's end or a seat given to someone
            # else (ReplaceSeat): nothing to do now. Anything else stops the bot.
            if error.code != grpc.StatusCode.FAILED_PRECONDITION:
                raise
        return taken


class _Heard:
    """What the stream has brought since the bot last looked, handed from its thread: the
    latest tournament, the tables that have changed, or why it stopped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tournament: lobby_pb2.Tournament | None = None
        self._tables: set[str] = set()
        self._error: Exception | None = None

    def tournament(self, tournament: lobby_pb2.Tournament) -> None:
        with self._lock:
            self._tournament = tournament

    def table(self, table_id: str) -> None:
        with self._lock:
            self._tables.add(table_id)

    def failed(self, error: Exception) -> None:
        with self._lock:
            self._error = error

    def take(self) -> tuple[lobby_pb2.Tournament | None, set[str]]:
        """The tournament if a newer one came (else None) and the tables changed since the
        last take; raises what stopped the stream."""
        with self._lock:
            if self._error is not None:
                raise self._error
            tournament, tables = self._tournament, self._tables
            self._tournament, self._tables = None, set()
        return tournament, tables


def main(
    players_json: Path,
    strategy: str,
    only: str | None,
    gateway: str,
    api_key: str | None,
) -> int:
    """`shikoku bot`: exit 0 once the tournament has finished."""

    def say(line: str) -> None:
        print(line, flush=True)

    def work() -> int:
        if strategy not in STRATEGIES:
            raise InputError(f"--strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
        players = read_players_json(players_json, (only or "").split(","))
        if not players.players:
            raise InputError(f"{players_json}: no players")
        require_gateway(gateway, api_key)
        with Client(gateway, api_key=api_key) as client:
            say(f"playing {len(players.players)} players in {players.tournament_id}")
            bot = TournamentBot(client, players.tournament_id, players.players, say, strategy)
            try:
                ended = bot.run()
            finally:
                client.close()  # ends the bot's stream
                bot.join_stream(STREAM_END_SECONDS)
        say(f"tournament {ended.tournament_id} finished after {len(ended.rounds)} rounds")
        return 0

    return run_against_gateway("shikoku bot", gateway, work)
