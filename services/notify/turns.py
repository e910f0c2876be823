"""Which notifications a game's new summary calls for (pure): compared with what was last
told of the game, so that a turn change is told once, however many commands a player sends in
a row, and a summary seen twice tells nothing again."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from services.notify.messages import Notification, notification_id


@dataclass(frozen=True, slots=True)
class Told:
    """What the notifier last told of a game: at which summary version, who was then to act,
    and whether the game had ended."""

    version: int = 0
    acting: tuple[int, ...] = ()
    ended: bool = False

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Told:
        stored = json.loads(text)
        return cls(stored["version"], tuple(stored["acting"]), stored["ended"])


@dataclass(frozen=True, slots=True)
class Seating:
    """The game-players record: the table, the tournament and round if any, and the
    registered player at each seat."""

    table_id: str = ""
    tournament_id: str = ""
    round: int = 0
    players: dict[int, str] = field(default_factory=dict)

    @classmethod
    def from_record(cls, record: dict[bytes, bytes]) -> Seating:
        text = {key.decode(): value.decode() for key, value in record.items()}
        return cls(
            text.get("table_id", ""),
            text.get("tournament_id", ""),
            int(text.get("round") or 0),
            {
                int(key.removeprefix("seat:")): player
                for key, player in text.items()
                if key.startswith("seat:") and key.removeprefix("seat:").isdigit() and player
            },
        )


def to_tell(
    game_id: str,
    told: Told | None,
    version: int,
    summary: dict[str, Any],
    seating: Seating,
) -> tuple[Told, list[Notification]] | None:
    """What to record and tell for the summary at `version`; None when it is no newer than
    what was told. A game first seen is told started (round_started in a tournament) to every
    seated player; a seat that comes to act is told your_turn; a finished game game_ended."""
    if told is not None and (told.ended or version <= told.version):
        return None
    finished = bool(summary.get("finished"))
    acting = () if finished else tuple(sorted({int(seat) for seat in summary["acting_seats"]}))
    before = told or Told()
    wanted: list[tuple[str, int]] = []
    if told is None:
        started = "round_started" if seating.tournament_id else "game_started"
        wanted += [(started, seat) for seat in sorted(seating.players)]
    wanted += [("your_turn", seat) for seat in acting if seat not in before.acting]
    if finished:
        wanted += [("game_ended", seat) for seat in sorted(seating.players)]

    def notification(event: str, player_id: str) -> Notification:
        return Notification(
            notification_id(game_id, version, event, player_id),
            event,
            player_id,
            seating.table_id,
            game_id,
            version,
            seating.tournament_id,
            seating.round,
        )

    notifications = [
        notification(event, seating.players[seat])
        for event, seat in wanted
        if seat in seating.players
    ]
    return Told(version, acting, finished), notifications
