"""`shikoku bot --players-json FILE`: one process plays every seat the players of FILE (what
`shikoku tournament create --json` printed) hold at their tournament's tables, round after
round, until the tournament has finished (or Ctrl-C).

Seats are found from the tournament (GetTournament: each table of the current round lists its
players in seat order); a player's own credential acts for each of their seats. Each game is
played by the SDK's random player (`shikoku_sdk.random_player.RandomPlayer`) in short slices on
a few threads: a slice takes actions while one of our seats must act and hands the game back
when none does, so a game waiting for a seat played elsewhere (`--only`) holds no thread.
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
from tools.gateway_command import require_gateway, run_against_gateway
from tools.tournament_input import InputError

STRATEGIES = ("random",)
WORKERS = 8
SLICE_ACTIONS = 40  # a slice's actions at most, so that every game gets its turns
WAIT_SECONDS = 0.3  # before asking again about a game where none of our seats had to act
REFRESH_SECONDS = 1.0  # between reads of the tournament (a new round, results recorded)
TICK_SECONDS = 0.02
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
    player: RandomPlayer
    due: float = 0.0
    slice: Future[int] | None = field(default=None, repr=False)


class TournamentBot:
    """Plays `players`' seats at `tournament_id`'s tables over `client`'s channel."""

    def __init__(
        self, client: Client, tournament_id: str, players: list[BotPlayer], say: Say
    ) -> None:
        self._client = client
        self._tournament_id = tournament_id
        self._by_id = {p.player_id: client.with_credential(p.credential) for p in players}
        self._say = say
        self._games: dict[str, Game] = {}  # by table id
        self._stop = threading.Event()
        self._round = 0

    def run(self) -> lobby_pb2.Tournament:
        """Plays until the tournament has finished; returns it as it ended."""
        with ThreadPoolExecutor(WORKERS, thread_name_prefix="bot") as pool:
            try:
                return self._run(pool)
            finally:
                self._stop.set()  # slices under way end after their current action

    def _run(self, pool: ThreadPoolExecutor) -> lobby_pb2.Tournament:
        refresh_at = 0.0
        while True:
            now = time.monotonic()
            if now >= refresh_at:
                tournament = self._client.get_tournament(self._tournament_id)
                if tournament.finished:
                    return tournament
                self._follow(tournament)
                refresh_at = now + REFRESH_SECONDS
            for game in self._games.values():
                if game.slice is None and game.due <= now:
                    game.slice = pool.submit(self._play_slice, game.player)
                elif game.slice is not None and game.slice.done():
                    taken = game.slice.result()  # a refused call stops the bot
                    game.slice = None
                    game.due = now if taken else now + WAIT_SECONDS
            time.sleep(TICK_SECONDS)

    def _follow(self, tournament: lobby_pb2.Tournament) -> None:
        """Takes up the current round's tables where we hold seats; lets go of those whose
        result is recorded."""
        if not tournament.rounds:
            return
        current = tournament.rounds[-1]
        if current.number != self._round:
            self._round = current.number
            self._say(f"round {current.number}: {len(current.tables)} tables")
        live = set()
        for entry in current.tables:
            if entry.end_reason:
                continue
            seats = {
                seat: self._by_id[player_id]
                for seat, player_id in enumerate(entry.player_ids, start=1)
                if player_id in self._by_id
            }
            if not entry.table_id or not seats:
                continue
            live.add(entry.table_id)
            if entry.table_id not in self._games:
                game_id = self._client.get_table(entry.table_id).game_id
                if game_id:
                    rng = random.Random(game_id)  # the same game plays the same way again
                    player = RandomPlayer(game_id, seats, rng)
                    self._games[entry.table_id] = Game(entry.table_id, player)
        for table_id in [t for t, g in self._games.items() if t not in live and g.slice is None]:
            del self._games[table_id]

    def _play_slice(self, player: RandomPlayer) -> int:
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
            ended = TournamentBot(client, players.tournament_id, players.players, say).run()
        say(f"tournament {ended.tournament_id} finished after {len(ended.rounds)} rounds")
        return 0

    return run_against_gateway("shikoku bot", gateway, work)
