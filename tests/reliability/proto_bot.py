"""Choosing a command from the public API's legal actions (no route running: the reliability
tests stop before trains run)."""

from __future__ import annotations

from shikoku.v1 import game_pb2


def command_from(option: game_pb2.LegalAction) -> game_pb2.Command | None:
    match option.WhichOneof("action"):
        case "pass_turn":
            return game_pb2.Command(pass_turn=game_pb2.Pass())
        case "buy_private":
            return game_pb2.Command(
                buy_private=game_pb2.BuyPrivate(company=option.buy_private.company)
            )
        case "place_bid":
            bid = option.place_bid
            return game_pb2.Command(
                place_bid=game_pb2.PlaceBid(company=bid.company, price=bid.min_price)
            )
        case "start_corporation":
            start = option.start_corporation
            return game_pb2.Command(
                start_corporation=game_pb2.StartCorporation(
                    corporation=start.corporation, par=start.par_prices[-1]
                )
            )
        case "buy_share":
            buy = option.buy_share
            return game_pb2.Command(
                buy_share=game_pb2.BuyShare(corporation=buy.corporation, source=buy.source)
            )
    return None


def next_command(actions: list[game_pb2.LegalAction]) -> tuple[int, game_pb2.Command] | None:
    """The first listed action this bot knows how to take, preferring to buy."""
    ranked = sorted(actions, key=lambda a: a.WhichOneof("action") == "pass_turn")
    for option in ranked:
        command = command_from(option)
        if command is not None:
            return option.seat, command
    return None
