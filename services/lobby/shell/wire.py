"""Tables and game summaries in their public protobuf form."""

from __future__ import annotations

from collections.abc import Mapping

from services.lobby.domain import chat, tables
from services.lobby.domain.clocks import SeatClock
from services.projections.game_summaries import Summary
from shikoku.v1 import lobby_pb2


def game_summary(summary: Summary | None) -> lobby_pb2.GameSummary | None:
    if summary is None:
        return None
    document = summary.document
    result = document.get("result") or {}
    return lobby_pb2.GameSummary(
        version=summary.version,
        round=str(document["round"].get("type", "")),
        round_number=int(document["round"].get("number", 0)),
        operating=str(document["round"].get("operating", "")),
        phase=str(document["phase"]),
        acting_seats=document["acting_seats"],
        finished=bool(document["finished"]),
        end_reason=str(result.get("reason", "")),
        net_worths={int(seat): int(worth) for seat, worth in result.get("net_worths", {}).items()},
        moved_at_ms=summary.moved_at_ms,
    )


def table_to_proto(
    table: tables.Table,
    summary: Summary | None = None,
    seat_clocks: Mapping[int, SeatClock] | None = None,
    as_of_ms: int = 0,
) -> lobby_pb2.Table:
    status = lobby_pb2.TABLE_STATUS_OPEN
    if table.abandoned:
        status = lobby_pb2.TABLE_STATUS_ABANDONED
    elif table.started:
        finished = summary is not None and summary.document["finished"]
        status = lobby_pb2.TABLE_STATUS_FINISHED if finished else lobby_pb2.TABLE_STATUS_STARTED
    message = lobby_pb2.Table(
        table_id=table.table_id,
        display_name=table.display_name,
        seat_count=len(table.seats),
        options=lobby_pb2.TableOptions(
            beginner_game=table.beginner_game,
            fixed_seat_order=table.fixed_seat_order,
            trust_submitted_revenue=table.trust_submitted_revenue,
            undo_allowed=table.undo_allowed,
            rules_profile=table.rules_profile,
            closed_to_spectators=not table.spectating.open,
            spectator_delay_actions=table.spectating.delay_actions,
        ),
        seats=[
            lobby_pb2.Seat(
                number=s.number,
                player_name=s.player_name,
                taken=s.taken,
                ran_out=dict(table.ran_out).get(s.number, ""),
                ready=s.ready,
            )
            for s in table.seats
        ],
        status=status,
        game_id=table.game_id,
    )
    if table.clock is not None:
        message.options.clock.CopyFrom(
            lobby_pb2.ClockOptions(
                bank_seconds=table.clock.bank_ms // 1000,
                increment_seconds=table.clock.increment_ms // 1000,
                policy=POLICIES[table.clock.policy],
            )
        )
    if (game := game_summary(summary)) is not None:
        message.game.CopyFrom(game)
    for seat in message.seats:
        if (clock := (seat_clocks or {}).get(seat.number)) is not None:
            seat.clock.CopyFrom(
                lobby_pb2.SeatClock(
                    remaining_ms=clock.remaining_ms,
                    used_ms=clock.used_ms,
                    running=clock.running,
                    as_of_ms=as_of_ms,
                )
            )
    return message


POLICIES = {"flag": lobby_pb2.CLOCK_POLICY_FLAG, "forfeit": lobby_pb2.CLOCK_POLICY_FORFEIT}


def chat_message_to_proto(message: chat.Message) -> lobby_pb2.ChatMessage:
    return lobby_pb2.ChatMessage(
        number=message.number,
        seat=message.seat,
        author=message.author,
        text=message.text,
        posted_at_ms=message.posted_at_ms,
        game_version=message.game_version,
        hidden=message.hidden,
    )
