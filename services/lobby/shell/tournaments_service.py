"""Tournaments in the lobby: their streams, their tables, and the results of their games.

Handlers raise Rejected; the server's interceptor turns them into statuses.
"""

from __future__ import annotations

import json
import secrets
from typing import cast

from redis.asyncio import Redis

from infra.eventstore import EventStore, NewEvent, VersionConflict
from infra.rejection import Kind, Rejected
from services.lobby.domain import tables, tournament
from services.lobby.domain.access import Caller, require_registered_host, require_tournament_host
from services.lobby.domain.clocks import ClockSettings
from services.lobby.domain.standings import standings_csv, standings_json
from services.lobby.domain.tables import Spectating
from services.lobby.shell.accounts import PlayerRepository
from services.lobby.shell.credentials import credential_hash, new_credential, new_id
from services.lobby.shell.repository import TableRepository
from shikoku.v1 import lobby_pb2

SCHEMA = 1
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
    def __init__(self, store: EventStore, redis: Redis) -> None:
        self._store = store
        self._redis = redis

    async def load(self, tournament_id: str) -> tuple[int, tournament.Tournament]:
        events = await self._store.read(tournament_id) if tournament_id else []
        found = tournament.fold((e.type, e.payload) for e in events)
        if not found.exists:
            raise Rejected(
                "TOURNAMENT_NOT_FOUND",
                f"no tournament {tournament_id!r}",
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
    ) -> None:
        self._repo = repo
        self._tables = tables_repo
        self._players = players_repo

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
    ) -> tuple[int, tournament.Tournament, list[tables.Table]]:
        """Records the round's seating and creates its tables (not yet started)."""
        version, found = await self._repo.load(tournament_id)
        host_player_id = require_tournament_host(caller, found)
        found = await self._repo.append(
            tournament_id, version, tournament.start_round(found, secrets.randbits(32))
        )
        version += 1
        options = await self._repo.options(tournament_id)
        names = {p.player_id: p.display_name for p in found.players}
        created = []
        current = found.current_round
        assert current is not None
        for players in current.seating:
            table_id = new_id("t-")
            events = tables.create(
                table_id,
                len(players),
                f"{found.name}, round {current.number}",
                options.beginner_game,
                True,  # the tournament's draw decided the seat order
                credential_hash(new_credential(table_id)),
                undo_allowed=False,
                host_player_id=host_player_id,
                tournament_id=tournament_id,
                clock=clock_settings(options),
                spectating=spectating(options),
                rules_profile=options.rules_profile,
            )
            for seat, player_id in enumerate(players, start=1):
                seat_hash = credential_hash(new_credential(table_id))  # players act with theirs
                events += tables.join(
                    tables.fold(events), names[player_id], seat, seat_hash, player_id
                )
            created.append(await self._tables.append(table_id, 0, events))
            await self._tables.index(table_id)
        found = await self._repo.append(
            tournament_id,
            version,
            tournament.assign_tables(found, [table.table_id for table in created]),
        )
        return version + 1, found, created

    async def record_finished(self, tournament_id: str) -> bool:
        """Records the result of every finished game of the current round; True if any."""
        version, found = await self._repo.load(tournament_id)
        current = found.current_round
        if current is None:
            return False
        recorded = False
        for table_id in current.table_ids:
            if current.result_of(table_id) is not None:
                continue
            _table_version, table = await self._tables.load(table_id)
            summary = await self._tables.summary(table)
            if summary is None or not summary.document["finished"]:
                continue
            result = summary.document["result"]
            by_seat = {int(seat): worth for seat, worth in result["net_worths"].items()}
            net_worths = {s.player_id: by_seat[s.number] for s in table.seats}
            forfeited = [
                s.player_id for s in table.seats if (s.number, "forfeited") in table.ran_out
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

    async def load(self, tournament_id: str) -> tuple[int, tournament.Tournament]:
        return await self._repo.load(tournament_id)

    async def export(self, tournament_id: str, json_format: bool) -> tuple[str, str]:
        _version, found = await self._repo.load(tournament_id)
        rows = tournament.standings(found)
        if json_format:
            return "application/json", json.dumps(standings_json(rows), indent=1)
        return "text/csv", standings_csv(rows)
