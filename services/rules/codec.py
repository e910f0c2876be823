"""Translation between the public protobuf messages and the pure domain's values."""

from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2

from services.rules.domain import commands as cmd
from services.rules.domain.legal import BidRange, BuyOption, LegalAction, PassOption
from shikoku.eventstore import StoredEvent
from shikoku.rejection import Kind, Rejected
from shikoku.v1 import game_pb2


def command_from_proto(seat: int, command: game_pb2.Command) -> cmd.PlayerCommand:
    match command.WhichOneof("action"):
        case "buy_private":
            return cmd.BuyPrivate(seat=seat, company=_required(command.buy_private.company))
        case "place_bid":
            bid = command.place_bid
            if bid.price <= 0:
                raise Rejected(
                    "INVALID_PRICE",
                    f"a bid must be a positive amount, not {bid.price}",
                    Kind.INVALID_ARGUMENT,
                    {"field": "command.place_bid.price"},
                )
            return cmd.PlaceBid(seat=seat, company=_required(bid.company), price=bid.price)
        case "pass_turn":
            return cmd.Pass(seat=seat)
    raise Rejected(
        "MISSING_ACTION",
        "the command has no action set",
        Kind.INVALID_ARGUMENT,
        {"field": "command.action"},
    )


def _required(company: str) -> str:
    if not company:
        raise Rejected(
            "MISSING_COMPANY",
            "the command names no company",
            Kind.INVALID_ARGUMENT,
            {"field": "company"},
        )
    return company


def struct(document: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(document)
    return message


def event_to_proto(game_id: str, event: StoredEvent) -> game_pb2.GameEvent:
    return game_pb2.GameEvent(
        game_id=game_id,
        version=event.version,
        type=event.type,
        schema_version=event.schema_version,
        payload=struct(event.payload),
    )


def legal_action_to_proto(action: LegalAction) -> game_pb2.LegalAction:
    match action:
        case PassOption(seat=seat):
            return game_pb2.LegalAction(seat=seat, pass_turn=game_pb2.Pass())
        case BuyOption(company=company, price=price, seat=seat):
            return game_pb2.LegalAction(
                seat=seat, buy_private=game_pb2.BuyPrivateOption(company=company, price=price)
            )
        case BidRange(company=company, min_price=low, max_price=high, step=step, seat=seat):
            return game_pb2.LegalAction(
                seat=seat,
                place_bid=game_pb2.PlaceBidOption(
                    company=company, min_price=low, max_price=high, step=step
                ),
            )
    raise TypeError(action)
