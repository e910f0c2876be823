"""Translation between the public protobuf messages and the pure domain's values."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from google.protobuf import struct_pb2

from kernel.rejection import Kind, Rejected, reason_code
from services.rules.domain import commands as cmd
from services.rules.domain.legal import (
    BankruptcyOption,
    BidRange,
    BuyOption,
    BuyShareOption,
    BuyTrainOption,
    CorporationPrivateOption,
    DiscardOption,
    DividendOption,
    ExchangeOption,
    LayTileOption,
    LegalAction,
    PassOption,
    PlaceTokenOption,
    PrivateTileOption,
    RunRoutesOption,
    SellOption,
    StartOption,
)
from shikoku.v1 import game_pb2

if TYPE_CHECKING:
    # A type only: the engine's wheel (shikoku_engine) carries this module without the event
    # store, whose module imports Redis.
    from infra.eventlog import StoredEvent


def command_from_proto(seat: int, command: game_pb2.Command) -> cmd.PlayerCommand | cmd.Undo:
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
        case "start_corporation":
            start = command.start_corporation
            return cmd.StartCorporation(
                seat=seat, corporation=_required(start.corporation, "corporation"), par=start.par
            )
        case "buy_share":
            buy = command.buy_share
            return cmd.BuyShare(
                seat=seat,
                corporation=_required(buy.corporation, "corporation"),
                source=_source(buy.source),
            )
        case "sell_shares":
            sell = command.sell_shares
            return cmd.SellShares(
                seat=seat, corporation=_required(sell.corporation, "corporation"), count=sell.count
            )
        case "run_routes":
            return cmd.RunRoutes(seat=seat, routes=route_submissions(command.run_routes.routes))
        case "pay_dividends":
            kind = command.pay_dividends.kind
            if kind == game_pb2.DIVIDEND_KIND_UNSPECIFIED:
                raise Rejected(
                    "MISSING_DIVIDEND_KIND",
                    "say whether to pay out or withhold",
                    Kind.INVALID_ARGUMENT,
                    {"field": "kind"},
                )
            return cmd.PayDividends(seat=seat, payout=kind == game_pb2.DIVIDEND_KIND_PAYOUT)
        case "buy_train":
            train = command.buy_train
            return cmd.BuyTrain(
                seat=seat,
                train=_required(train.train, "train"),
                source=_required(train.source, "source"),
                price=train.price,
                exchange=train.exchange,
            )
        case "discard_train":
            discard = command.discard_train
            return cmd.DiscardTrain(
                seat=seat,
                corporation=_required(discard.corporation, "corporation"),
                train=_required(discard.train, "train"),
            )
        case "corporation_buy_private":
            purchase = command.corporation_buy_private
            return cmd.BuyPrivateForCorporation(
                seat=seat, company=_required(purchase.company), price=purchase.price
            )
        case "declare_bankruptcy":
            return cmd.DeclareBankruptcy(seat=seat)
        case "lay_tile":
            lay = command.lay_tile
            if not 0 <= lay.rotation <= 5:
                raise Rejected(
                    "BAD_ROTATION",
                    f"a rotation is 0 to 5, not {lay.rotation}",
                    Kind.INVALID_ARGUMENT,
                    {"field": "rotation"},
                )
            if lay.company:
                return cmd.LayPrivateTile(
                    seat=seat,
                    company=lay.company,
                    hex=_required(lay.hex, "hex"),
                    tile=_required(lay.tile, "tile"),
                    rotation=lay.rotation,
                )
            return cmd.LayTile(
                seat=seat,
                hex=_required(lay.hex, "hex"),
                tile=_required(lay.tile, "tile"),
                rotation=lay.rotation,
            )
        case "undo":
            return cmd.Undo(seat=seat)
        case "exchange_private":
            exchange = command.exchange_private
            return cmd.ExchangePrivate(seat=seat, company=_required(exchange.company))
        case "place_token":
            token = command.place_token
            return cmd.PlaceToken(seat=seat, hex=_required(token.hex, "hex"), city=token.city)
    raise Rejected(
        "MISSING_ACTION",
        "the command has no action set",
        Kind.INVALID_ARGUMENT,
        {"field": "command.action"},
    )


_SOURCES = {
    game_pb2.SHARE_SOURCE_INITIAL_OFFERING: "initial_offering",
    game_pb2.SHARE_SOURCE_OPEN_MARKET: "open_market",
}


def _source(source: game_pb2.ShareSource.ValueType) -> str:
    if source not in _SOURCES:
        raise Rejected(
            "MISSING_SOURCE",
            "say where the share comes from: initial offering or open market",
            Kind.INVALID_ARGUMENT,
            {"field": "source"},
        )
    return _SOURCES[source]


def route_submissions(routes: Iterable[game_pb2.RouteRun]) -> tuple[cmd.RouteSubmission, ...]:
    """Routes as RunRoutes gives them (and RoutesService.CheckRoutes, which checks them alike)."""
    return tuple(
        cmd.RouteSubmission(
            train=_required(r.train, "train"),
            hexes=tuple(r.hexes),
            connections=tuple(tuple(c.hexes) for c in r.connections),
            revenue=r.revenue,
        )
        for r in routes
    )


def _required(value: str, field: str = "company") -> str:
    if not value:
        raise Rejected(
            reason_code(f"MISSING_{field.upper()}"),
            f"the command names no {field}",
            Kind.INVALID_ARGUMENT,
            {"field": field},
        )
    return value


def struct(document: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(document)
    return message


def event_to_proto(game_id: str, event: StoredEvent) -> game_pb2.GameEvent:
    message = game_pb2.GameEvent(
        game_id=game_id,
        version=event.version,
        type=event.type,
        schema_version=event.schema_version,
        payload=struct(event.payload),
    )
    if event.cause is not None:
        message.command.CopyFrom(struct(event.cause))
    return message


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
        case StartOption(corporation=corporation, par_prices=pars, seat=seat):
            return game_pb2.LegalAction(
                seat=seat,
                start_corporation=game_pb2.StartCorporationOption(
                    corporation=corporation, par_prices=pars
                ),
            )
        case BuyShareOption(corporation=corporation, source=source, price=price, seat=seat):
            proto_source = next(k for k, v in _SOURCES.items() if v == source)
            return game_pb2.LegalAction(
                seat=seat,
                buy_share=game_pb2.BuyShareOption(
                    corporation=corporation, source=proto_source, price=price
                ),
            )
        case SellOption(corporation=corporation, max_count=most, price=price, seat=seat):
            return game_pb2.LegalAction(
                seat=seat,
                sell_shares=game_pb2.SellSharesOption(
                    corporation=corporation, max_count=most, price=price
                ),
            )
        case RunRoutesOption(corporation=corporation, trains=trains, seat=seat):
            return game_pb2.LegalAction(
                seat=seat,
                run_routes=game_pb2.RunRoutesOption(corporation=corporation, trains=trains),
            )
        case DividendOption(corporation=corporation, revenue=revenue, seat=seat):
            return game_pb2.LegalAction(
                seat=seat,
                pay_dividends=game_pb2.PayDividendsOption(corporation=corporation, revenue=revenue),
            )
        case BuyTrainOption() as offer:
            return game_pb2.LegalAction(
                seat=offer.seat,
                buy_train=game_pb2.BuyTrainOption(
                    train=offer.train,
                    source=offer.source,
                    min_price=offer.min_price,
                    max_price=offer.max_price,
                    exchange=offer.exchange,
                    president_contribution=offer.contribution,
                ),
            )
        case DiscardOption(corporation=corporation, train=train, seat=seat):
            return game_pb2.LegalAction(
                seat=seat,
                discard_train=game_pb2.DiscardTrainOption(corporation=corporation, train=train),
            )
        case CorporationPrivateOption() as private:
            return game_pb2.LegalAction(
                seat=private.seat,
                corporation_buy_private=game_pb2.CorporationBuyPrivateOption(
                    company=private.company,
                    owner_seat=private.owner,
                    min_price=private.min_price,
                    max_price=private.max_price,
                ),
            )
        case LayTileOption(hex=hex_, tile=tile, rotation=rotation, cost=cost, seat=seat):
            return game_pb2.LegalAction(
                seat=seat,
                lay_tile=game_pb2.LayTileOption(hex=hex_, tile=tile, rotation=rotation, cost=cost),
            )
        case PlaceTokenOption(hex=hex_, city=city, cost=cost, seat=seat):
            return game_pb2.LegalAction(
                seat=seat, place_token=game_pb2.PlaceTokenOption(hex=hex_, city=city, cost=cost)
            )
        case PrivateTileOption(company=company, hex=hex_, tile=tile, rotation=rotation, seat=seat):
            return game_pb2.LegalAction(
                seat=seat,
                lay_tile=game_pb2.LayTileOption(
                    hex=hex_, tile=tile, rotation=rotation, company=company
                ),
            )
        case ExchangeOption(company=company, seat=seat):
            return game_pb2.LegalAction(
                seat=seat, exchange_private=game_pb2.ExchangePrivate(company=company)
            )
        case BankruptcyOption(seat=seat):
            return game_pb2.LegalAction(seat=seat, declare_bankruptcy=game_pb2.DeclareBankruptcy())
    raise TypeError(action)
