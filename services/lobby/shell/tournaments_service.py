"""Tournaments in the lobby: their streams, their tables, and the results of their games.

Handlers raise Rejected; the server's interceptor turns them into statuses.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import cast

from redis.asyncio import Redis

from infra.eventlog import EventLog, NewEvent, VersionConflict
from kernel.rejection import Kind, Rejected, quoted
from services.lobby.domain import tables, tournament
from services.lobby.domain.access import Caller, require_registered_host, require_tournament_host
from services.lobby.domain.clocks import ClockSettings
from services.lobby.domain.standings import standings_csv, standings_json
from services.lobby.domain.tables import Spectating
from services.lobby.shell.accounts import PlayerRepository
from services.lobby.shell.at_once import each_at_once
from services.lobby.shell.credentials import credential_hash, new_credential, new_id
from services.lobby.shell.repository import TableRepository
from services.projections.game_summaries import Summary
from shikoku.v1 import lobby_pb2

SCHEMA = 1
ATTEMPTS = 5  # appends that lost a race to a concurrent writer, looked at again
ACTIVE = "tournaments:active"
SEATING = {
    lobby_pb2.SEATING_METHOD_UNSPECIFIED: "random",
    lobby_pb2.SEATING_METHOD_RANDOM: "random",
    lobby_pb2.SEATING_METHOD_SEEDED: "seeded",
}
POLICIES = {lobby_pb2.CLOCK_POLICY_FLAG: "flag", lobby_pb2.CLOCK_POLICY_FORFEIT: "forfeit"}


def clock_settings(options: lobby_pb2.TableOptions) -> ClockSettings | None:
    if not options.HasField("clock"):
        return None
    clock = options.clock
    try:
        return ClockSettings(
            clock.bank_seconds * 1000,
            clock.increment_seconds * 1000,
            POLICIES.get(clock.policy, "?"),  # type: ignore[arg-type]
        )
    except ValueError as error:
        raise Rejected(
            "INVALID_CLOCK", str(error), Kind.INVALID_ARGUMENT, {"field": "options.clock"}
        ) from None


def spectating(options: lobby_pb2.TableOptions) -> Spectating:
    try:
        return Spectating(not options.closed_to_spectators, options.spectator_delay_actions)
    except ValueError as error:
        raise Rejected(
            "INVALID_SPECTATOR_DELAY",
            str(error),
            Kind.INVALID_ARGUMENT,
            {"field": "options.spectator_delay_actions"},
        ) from None


class TournamentRepository:
    def __init__(self, store: EventLog, redis: Redis) -> None:
        self._store = store
        self._redis = redis

    async def load(self, tournament_id: str) -> tuple[int, tournament.Tournament]:
        events = await self._store.read(tournament_id) if tournament_id else []
        found = tournament.fold((e.type, e.payload) for e in events)
        if not found.exists:
            raise Rejected(
                "TOURNAMENT_NOT_FOUND",
                f"no tournament {quoted(tournament_id)!r}",
                Kind.NOT_FOUND,
                {"tournament_id": tournament_id},
            )
        return len(events), found

    async def append(
        self, tournament_id: str, version: int, events: list[tournament.TournamentEvent]
    ) -> tournament.Tournament:
        await self._store.append(
            tournament_id, version, [NewEvent(kind, SCHEMA, data) for kind, data in events]
        )
        return (await self.load(tournament_id))[1]

    async def options(self, tournament_id: str) -> lobby_pb2.TableOptions:
        raw = await self._redis.get(f"tournament:{{{tournament_id}}}:options")
        options = lobby_pb2.TableOptions()
        if isinstance(raw, bytes):
            options.ParseFromString(raw)
        return options

    async def keep_options(self, tournament_id: str, options: lobby_pb2.TableOptions) -> None:
        await self._redis.set(
            f"tournament:{{{tournament_id}}}:options", options.SerializeToString()
        )

    async def active(self) -> list[str]:
        members = cast(set[bytes], await self._redis.smembers(ACTIVE))
        return sorted(member.decode() for member in members)

    async def activate(self, tournament_id: str) -> None:
        await self._redis.sadd(ACTIVE, tournament_id)


def tournament_to_proto(found: tournament.Tournament) -> lobby_pb2.Tournament:
    rounds = []
    for round_ in found.rounds:
        round_tables = []
        for slot, players in enumerate(round_.seating):
            table_id = round_.table_ids[slot] if slot < len(round_.table_ids) else ""
            result = round_.result_of(table_id) if table_id else None
            round_tables.append(
                lobby_pb2.TournamentTable(
                    table_id=table_id,
                    player_ids=players,
                    net_worths=dict(result.net_worths) if result else {},
                    end_reason=result.end if result else "",
                    forfeited=result.forfeited if result else (),
                )
            )
        rounds.append(
            lobby_pb2.TournamentRound(
                number=round_.number, tables=round_tables, finished=round_.finished
            )
        )
    rows = standings_json(tournament.standings(found))
    return lobby_pb2.Tournament(
        tournament_id=found.tournament_id,
        name=found.name,
        rounds=rounds,
        round_count=found.round_count,
        finished=found.finished,
        standings=[
            lobby_pb2.Standing(
                position=row["position"],
                player_id=row["player_id"],
                display_name=row["display_name"],
                points=float(row["points"]),
                net_worth=row["net_worth"],
                games=row["games"],
            )
            for row in rows
        ],
    )


class Tournaments:
    def __init__(
        self,
        repo: TournamentRepository,
        tables_repo: TableRepository,
        players_repo: PlayerRepository,
        secret: bytes | None = None,
    ) -> None:
        """`secret` keys the rounds' seeds: the deployment's token (a random key for a process
        on its own; a round records its seed, so only its first write depends on it)."""
        self._repo = repo
        self._tables = tables_repo
        self._players = players_repo
        self._secret = secret or secrets.token_bytes(32)
        #: Each started table's game, which never changes: results are looked for by game.
        self._games: dict[str, str] = {}

    async def create(
        self, caller: Caller, request: lobby_pb2.CreateTournamentRequest
    ) -> tournament.Tournament:
        host_player_id = require_registered_host(caller)
        # Refuse bad options now, not at the first round.
        clock_settings(request.table_options)
        spectating(request.table_options)
        tables.checked_rules_profile(
            request.table_options.rules_profile, "table_options.rules_profile"
        )
        entrants = []
        for player_id in request.player_ids:
            _version, player = await self._players.load(player_id)
            entrants.append(tournament.Player(player.player_id, player.display_name))
        tournament_id = new_id("tn-")
        events = tournament.create(
            tournament_id,
            request.name,
            host_player_id,
            entrants,
            request.table_size,
            first_round=SEATING.get(request.first_round, "random"),
            seed_order=tuple(request.seed_order),
            round_count=request.rounds or 1,
        )
        await self._repo.keep_options(tournament_id, request.table_options)
        try:
            created = await self._repo.append(tournament_id, 0, events)
        except VersionConflict:
            # The same request again (its id derived from it): the same tournament.
            _version, created = await self._repo.load(tournament_id)
        await self._repo.activate(tournament_id)
        return created

    async def seat_round(
        self, caller: Caller, tournament_id: str
    ) -> tuple[tournament.Tournament, list[tuple[int, tables.Table]]]:
        """Seats the tournament's next round and creates its tables (not yet started), each
        with its stream version; or, while a round is in progress, the same for that round:
        what an earlier attempt cut short (a crash, a lost reply) wrote is found, the rest
        written, so every attempt ends with one round and the same tables.

        Each write is one atomic append that a later attempt recognises: the round (its seed
        derived from the tournament and the round's number), each table under the id the round
        gives it (`tournament.round_table_ids`), then the table ids with the round."""
        found, host_player_id = await self._round_in_progress(caller, tournament_id)
        current = found.current_round
        assert current is not None
        table_ids = tournament.round_table_ids(found, current)
        if current.tables_assigned:  # assigned once every table was created
            return found, await each_at_once(table_ids, self._tables.load)
        options = await self._repo.options(tournament_id)

        async def create(slot: int) -> tuple[int, tables.Table]:
            table_id = table_ids[slot]
            return await self._create_table(found, current, slot, table_id, host_player_id, options)

        seated = await each_at_once(range(len(table_ids)), create)
        return await self._assign(tournament_id, table_ids), seated

    async def _create_table(
        self,
        found: tournament.Tournament,
        round_: tournament.Round,
        slot: int,
        table_id: str,
        host_player_id: str,
        options: lobby_pb2.TableOptions,
    ) -> tuple[int, tables.Table]:
        """The table of a seating slot, with its version: created with its players seated in
        one append, or as an earlier attempt created it (perhaps started since)."""
        names = {p.player_id: p.display_name for p in found.players}
        players = round_.seating[slot]
        events = tables.create(
            table_id,
            len(players),
            f"{found.name}, round {round_.number}",
            options.beginner_game,
            True,  # the tournament's draw decided the seat order
            credential_hash(new_credential(table_id)),
            undo_allowed=False,
            host_player_id=host_player_id,
            tournament_id=found.tournament_id,
            clock=clock_settings(options),
            spectating=spectating(options),
            rules_profile=options.rules_profile,
        )
        for seat, player_id in enumerate(players, start=1):
            seat_hash = credential_hash(new_credential(table_id))  # players act with theirs
            events += tables.join(tables.fold(events), names[player_id], seat, seat_hash, player_id)
        try:
            created = (len(events), await self._tables.append(table_id, 0, events))
        except VersionConflict:
            created = await self._tables.load(table_id)
        await self._tables.index(table_id)  # again if an attempt stopped between the two
        return created

    async def _round_in_progress(
        self, caller: Caller, tournament_id: str
    ) -> tuple[tournament.Tournament, str]:
        """The tournament with a round in progress, started now if none was; and its host."""
        for attempt in range(1, ATTEMPTS + 1):
            version, found = await self._repo.load(tournament_id)
            host_player_id = require_tournament_host(caller, found)
            if tournament.in_progress(found) is not None:
                return found, host_player_id
            seed = self._round_seed(tournament_id, len(found.rounds) + 1)
            try:
                started = await self._repo.append(
                    tournament_id, version, tournament.start_round(found, seed)
                )
                return started, host_player_id
            except VersionConflict:
                if attempt == ATTEMPTS:
                    raise
                # Another StartRound (or a result) came first: look again.
        raise AssertionError("unreachable")

    async def _assign(
        self, tournament_id: str, table_ids: tuple[str, ...]
    ) -> tournament.Tournament:
        """Records the round's table ids, unless a concurrent attempt has."""
        for attempt in range(1, ATTEMPTS + 1):
            version, found = await self._repo.load(tournament_id)
            current = found.current_round
            if current is not None and current.tables_assigned:
                return found
            try:
                return await self._repo.append(
                    tournament_id, version, tournament.assign_tables(found, table_ids)
                )
            except VersionConflict:
                if attempt == ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    def _round_seed(self, tournament_id: str, number: int) -> int:
        """The seed of a round's draw: the same for every attempt at starting it, and nobody
        without the deployment's secret can work it out in advance."""
        key = f"round seed\0{tournament_id}\0{number}".encode()
        return int.from_bytes(hmac.new(self._secret, key, hashlib.sha256).digest()[:4], "big")

    async def record_finished(self, tournament_id: str) -> bool:
        """Records the result of every finished game of the current round; True if any."""
        version, found = await self._repo.load(tournament_id)
        current = found.current_round
        if current is None:
            return False
        recorded = False
        waiting = [t for t in current.table_ids if current.result_of(t) is None]
        for table_id, summary in zip(waiting, await self._summaries(waiting), strict=True):
            if summary is None or not summary.document["finished"]:
                continue
            _table_version, table = await self._tables.load(table_id)
            result = summary.document["result"]
            by_seat = {int(seat): worth for seat, worth in result["net_worths"].items()}
            entrants = tournament.seated_at(found, table_id)
            net_worths = {entrants[s.number - 1]: by_seat[s.number] for s in table.seats}
            forfeited = [
                entrants[s.number - 1]
                for s in table.seats
                if (s.number, "forfeited") in table.ran_out
            ]
            end = "forfeit" if forfeited else result["reason"]
            found = await self._repo.append(
                tournament_id,
                version,
                tournament.record_result(found, table_id, net_worths, end, forfeited),
            )
            version = (await self._repo.load(tournament_id))[0]
            recorded = True
        return recorded

    async def _summaries(self, table_ids: list[str]) -> list[Summary | None]:
        """The game summaries of the tables (None for a table not started), read at once:
        the tables are loaded only the first time, for their game ids."""
        for table_id in table_ids:
            if table_id not in self._games:
                _version, table = await self._tables.load(table_id)
                if table.started:
                    self._games[table_id] = table.game_id
        started = [t for t in table_ids if t in self._games]
        summaries = await self._tables.summaries([self._games[t] for t in started])
        found = dict(zip(started, summaries, strict=True))
        return [found.get(table_id) for table_id in table_ids]

    async def load(self, tournament_id: str) -> tuple[int, tournament.Tournament]:
        return await self._repo.load(tournament_id)

    async def export(self, tournament_id: str, json_format: bool) -> tuple[str, str]:
        _version, found = await self._repo.load(tournament_id)
        rows = tournament.standings(found)
        if json_format:
            return "application/json", json.dumps(standings_json(rows), indent=1)
        return "text/csv", standings_csv(rows)
