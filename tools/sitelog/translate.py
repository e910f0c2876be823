"""From a site action to our command, given our state at that point.

The site names shares, trains and tiles by copy (`KO_3`, `2-1`, `8-0`); our commands name
kinds and sources. `Translator` follows those copies through the log to know, for instance,
whether a share came from the initial offering or the open market.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from shikoku.v1 import game_pb2
from tools.sitelog.certificates import (
    OPEN_MARKET,
    PRESIDENT,
    Certificates,
    certificate_number,
)
from tools.sitelog.export_format import Action, SiteGame, copy_name

_HEX = re.compile(r"^[A-Z]\d+$")


class Untranslatable(ValueError):
    """The action has no equivalent command (or names something unknown)."""


@dataclass(frozen=True, slots=True)
class Submit:
    seat: int
    command: game_pb2.Command


@dataclass(frozen=True, slots=True)
class EndGame:
    """The players ended the game (the table's host does it here)."""


Step = Submit | EndGame


@dataclass
class Translator:
    game: SiteGame
    certificates: Certificates = field(default_factory=Certificates)
    #: corporation -> its president's seat, as of the last action
    presidents: dict[str, int] = field(default_factory=dict)
    #: a sale whose certificates move once the new president, if any, is known
    pending_sale: tuple[int, str, list[int], int] | None = None
    #: train id -> "depot", "open_market" or the corporation holding it
    trains: dict[str, str] = field(default_factory=dict)
    #: tile copy id -> hex
    tiles: dict[str, str] = field(default_factory=dict)

    def seat_of_player(self, player_id: Any) -> int:
        for index, player in enumerate(self.game.players, start=1):
            if player.id == str(player_id):
                return index
        raise Untranslatable(f"unknown player {player_id}")

    def acting_seat(self, action: Action, view: dict[str, Any]) -> int:
        if action.get("entity_type") == "company":
            ability = (view.get("round") or {}).get("ability") or {}
            if ability.get("company") == action["entity"]:
                return int(ability["seat"])
            owner = next(
                (p["seat"] for p in view["players"] if action["entity"] in p["privates"]), None
            )
            if owner is None:
                raise Untranslatable(f"nobody can act for {action['entity']}")
            return int(owner)
        if action.get("entity_type") == "corporation":
            corporation = next(
                (c for c in view["corporations"] if c["id"] == action["entity"]), None
            )
            if corporation is None or not corporation.get("president"):
                raise Untranslatable(f"corporation {action['entity']} has no president")
            return int(corporation["president"])
        return self.seat_of_player(action["entity"])

    def settle(self, view: dict[str, Any]) -> None:
        """After our game took an action: move the certificates of a sale, and of a presidency
        that changed hands, as the site does."""
        presidents = {
            str(c["id"]): int(c["president"]) for c in view["corporations"] if c.get("president")
        }
        sale, self.pending_sale = self.pending_sale, None
        for corporation, now in presidents.items():
            before = self.presidents.get(corporation)
            changed = before is not None and before != now
            if sale is not None and sale[1] == corporation:
                seat, _, numbers, count = sale
                self.certificates.sell(seat, corporation, numbers, count, now if changed else None)
            elif changed and before is not None:
                self.certificates.swap_presidency(corporation, now, before)
        self.presidents = presidents

    def translate(self, action: Action, view: dict[str, Any]) -> Step:
        kind = action["type"]
        if kind == "end_game":
            return EndGame()
        handler = getattr(self, f"_{kind}", None)
        if handler is None:
            raise Untranslatable(f"no command for the site's {kind!r} action")
        seat = self.acting_seat(action, view)
        return Submit(seat, handler(action, view))

    # ---- one method per site action type ------------------------------------------------

    def _pass(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        return game_pb2.Command(pass_turn=game_pb2.Pass())

    def _bid(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        company, price = action["company"], int(action["price"])
        round_ = view.get("round") or {}
        offer = round_.get("offer") or []
        top = offer[0] if not round_.get("closed_auction") and offer else {}
        # The site's purchase of the topmost private is a bid at its face value; a bid at
        # another price stays a bid, which only the 18xx.games profile takes as a purchase at
        # that price (the logged amount is never changed).
        if top.get("company") == company and int(top["price"]) == price:
            return game_pb2.Command(buy_private=game_pb2.BuyPrivate(company=company))
        return game_pb2.Command(place_bid=game_pb2.PlaceBid(company=company, price=price))

    def _par(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        par = int(str(action["share_price"]).split(",")[0])
        self.certificates.start(self.seat_of_player(action["entity"]), action["corporation"])
        start = game_pb2.StartCorporation(corporation=action["corporation"], par=par)
        return game_pb2.Command(start_corporation=start)

    def _buy_shares(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        seat = self.acting_seat(action, view)
        if action.get("entity_type") == "company":  # a private exchanged for a share
            for share in action["shares"]:
                self.certificates.take(seat, share)
            exchange = game_pb2.ExchangePrivate(company=action["entity"])
            return game_pb2.Command(exchange_private=exchange)
        (share,) = action["shares"][:1]
        corporation = share.split("_")[0]
        sources = [self.certificates.take(seat, bought) for bought in action["shares"]]
        from_market = sources[0] == OPEN_MARKET
        source = (
            game_pb2.SHARE_SOURCE_OPEN_MARKET
            if from_market
            else game_pb2.SHARE_SOURCE_INITIAL_OFFERING
        )
        return game_pb2.Command(buy_share=game_pb2.BuyShare(corporation=corporation, source=source))

    def _sell_shares(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        named = [certificate_number(share) for share in action["shares"]]
        corporation = named[0][0]
        numbers = [number for _, number in named]
        whole = sum(2 if number == PRESIDENT else 1 for number in numbers)
        count = int(action["percent"]) // 10 if "percent" in action else whole
        self.pending_sale = (self.acting_seat(action, view), corporation, numbers, count)
        return game_pb2.Command(
            sell_shares=game_pb2.SellShares(corporation=corporation, count=count)
        )

    def _lay_tile(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        self.tiles[action["tile"]] = action["hex"]
        lay = game_pb2.LayTile(
            hex=action["hex"],
            tile=copy_name(action["tile"]),
            rotation=int(action["rotation"]),
            company=action["entity"] if action.get("entity_type") == "company" else "",
        )
        return game_pb2.Command(lay_tile=lay)

    def _place_token(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        tile_id, _, city = str(action["city"]).rpartition("-")
        hex_id = self.tiles.get(tile_id) or tile_id.split("-")[0]
        if not _HEX.match(hex_id):
            raise Untranslatable(f"no hex known for city {action['city']}")
        token = game_pb2.PlaceToken(hex=hex_id, city=int(city))
        return game_pb2.Command(place_token=token)

    def _run_routes(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        routes = []
        for route in action["routes"]:
            # The newer form has `connections` (hex sequences between revenue centres) and no
            # revenue; the older, `hexes` and the revenue it earned.
            connections = [game_pb2.HexPath(hexes=c) for c in route.get("connections") or ()]
            routes.append(
                game_pb2.RouteRun(
                    train=copy_name(route["train"]),
                    hexes=route.get("hexes") or (),
                    connections=connections,
                    revenue=int(route.get("revenue", 0)),
                )
            )
        return game_pb2.Command(run_routes=game_pb2.RunRoutes(routes=routes))

    def _dividend(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        kind = (
            game_pb2.DIVIDEND_KIND_PAYOUT
            if action["kind"] == "payout"
            else game_pb2.DIVIDEND_KIND_WITHHOLD
        )
        return game_pb2.Command(pay_dividends=game_pb2.PayDividends(kind=kind))

    def _buy_train(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        train = action["train"]
        source = self.trains.get(train, "depot")
        exchange = action.get("exchange") or ""
        self.trains[train] = str(action["entity"])
        if exchange:
            self.trains[exchange] = "open_market"
        return game_pb2.Command(
            buy_train=game_pb2.BuyTrain(
                train=copy_name(train),
                source=source,
                price=int(action["price"]),
                exchange=copy_name(exchange) if exchange else "",
            )
        )

    def _discard_train(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        self.trains[action["train"]] = "open_market"
        discard = game_pb2.DiscardTrain(
            corporation=str(action["entity"]), train=copy_name(action["train"])
        )
        return game_pb2.Command(discard_train=discard)

    def _buy_company(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        purchase = game_pb2.CorporationBuyPrivate(
            company=action["company"], price=int(action["price"])
        )
        return game_pb2.Command(corporation_buy_private=purchase)

    def _bankrupt(self, action: Action, view: dict[str, Any]) -> game_pb2.Command:
        return game_pb2.Command(declare_bankruptcy=game_pb2.DeclareBankruptcy())
