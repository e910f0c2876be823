"""to_command: from every kind of LegalAction to its Command, the defaults, the choices, and
the refusals of a choice the option does not allow (no server needed)."""

from __future__ import annotations

import pytest

from shikoku.v1 import game_pb2, routes_pb2
from shikoku_sdk import PAYOUT, WITHHOLD, Client, to_command
from shikoku_sdk.commands import KNOWN_ACTIONS

BID = game_pb2.LegalAction(
    seat=2,
    place_bid=game_pb2.PlaceBidOption(company="MF", min_price=65, max_price=120, step=5),
)
START = game_pb2.LegalAction(
    seat=1,
    start_corporation=game_pb2.StartCorporationOption(corporation="AR", par_prices=[65, 70, 75]),
)
SELL = game_pb2.LegalAction(
    sell_shares=game_pb2.SellSharesOption(corporation="IR", max_count=3, price=80)
)
TRAIN = game_pb2.LegalAction(
    buy_train=game_pb2.BuyTrainOption(
        train="3", source="UR", min_price=1, max_price=250, exchange=""
    )
)
PRIVATE = game_pb2.LegalAction(
    corporation_buy_private=game_pb2.CorporationBuyPrivateOption(
        company="SMR", owner_seat=3, min_price=50, max_price=200
    )
)
RUN = game_pb2.LegalAction(run_routes=game_pb2.RunRoutesOption(corporation="AR", trains=["2"]))
DIVIDENDS = game_pb2.LegalAction(
    pay_dividends=game_pb2.PayDividendsOption(corporation="AR", revenue=40)
)


def test_every_kind_of_legal_action_the_protos_define_is_known() -> None:
    oneof = game_pb2.LegalAction.DESCRIPTOR.oneofs_by_name["action"]
    assert {field.name for field in oneof.fields} == KNOWN_ACTIONS


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (BID, game_pb2.Command(place_bid=game_pb2.PlaceBid(company="MF", price=65))),
        (
            START,
            game_pb2.Command(start_corporation=game_pb2.StartCorporation(corporation="AR", par=65)),
        ),
        (SELL, game_pb2.Command(sell_shares=game_pb2.SellShares(corporation="IR", count=1))),
        (TRAIN, game_pb2.Command(buy_train=game_pb2.BuyTrain(train="3", source="UR", price=1))),
        (
            PRIVATE,
            game_pb2.Command(
                corporation_buy_private=game_pb2.CorporationBuyPrivate(company="SMR", price=50)
            ),
        ),
        (RUN, game_pb2.Command(run_routes=game_pb2.RunRoutes())),
        (DIVIDENDS, game_pb2.Command(pay_dividends=game_pb2.PayDividends(kind=PAYOUT))),
    ],
)
def test_a_choice_left_out_takes_the_lowest_or_first_value(
    action: game_pb2.LegalAction, expected: game_pb2.Command
) -> None:
    assert to_command(action) == expected


def test_options_without_choices_are_copied_into_their_commands() -> None:
    lay = game_pb2.LegalAction(
        lay_tile=game_pb2.LayTileOption(hex="K8", tile="57", rotation=2, cost=80, company="MF")
    )
    assert to_command(lay).lay_tile == game_pb2.LayTile(
        hex="K8", tile="57", rotation=2, company="MF"
    )
    token = game_pb2.LegalAction(place_token=game_pb2.PlaceTokenOption(hex="I4", city=1, cost=40))
    assert to_command(token).place_token == game_pb2.PlaceToken(hex="I4", city=1)
    share = game_pb2.LegalAction(
        buy_share=game_pb2.BuyShareOption(
            corporation="KO", source=game_pb2.SHARE_SOURCE_OPEN_MARKET, price=90
        )
    )
    assert to_command(share).buy_share == game_pb2.BuyShare(
        corporation="KO", source=game_pb2.SHARE_SOURCE_OPEN_MARKET
    )
    diesel = game_pb2.LegalAction(
        buy_train=game_pb2.BuyTrainOption(
            train="D", source="depot", min_price=800, max_price=800, exchange="4"
        )
    )
    assert to_command(diesel).buy_train.exchange == "4"
    for action in (
        game_pb2.LegalAction(pass_turn=game_pb2.Pass()),
        game_pb2.LegalAction(declare_bankruptcy=game_pb2.DeclareBankruptcy()),
        game_pb2.LegalAction(exchange_private=game_pb2.ExchangePrivate(company="DR")),
        game_pb2.LegalAction(buy_private=game_pb2.BuyPrivateOption(company="TR", price=20)),
        game_pb2.LegalAction(
            discard_train=game_pb2.DiscardTrainOption(corporation="AR", train="2")
        ),
    ):
        assert to_command(action).WhichOneof("action") == action.WhichOneof("action")
    assert to_command(
        game_pb2.LegalAction(exchange_private=game_pb2.ExchangePrivate(company="DR"))
    ).exchange_private == game_pb2.ExchangePrivate(company="DR")


def test_choices_within_the_option_are_taken() -> None:
    assert to_command(BID, price=120).place_bid.price == 120
    assert to_command(START, par=75).start_corporation.par == 75
    assert to_command(SELL, count=3).sell_shares.count == 3
    assert to_command(TRAIN, price=250).buy_train.price == 250
    assert to_command(PRIVATE, price=200).corporation_buy_private.price == 200
    assert to_command(DIVIDENDS, kind=WITHHOLD).pay_dividends.kind == WITHHOLD
    solution = routes_pb2.RouteSolution(
        routes=[routes_pb2.TrainRoute(train="2", hexes=["K4", "J5"], revenue=40)]
    )
    assert list(to_command(RUN, routes=solution.routes).run_routes.routes) == [
        game_pb2.RouteRun(train="2", hexes=["K4", "J5"])
    ]


@pytest.mark.parametrize(
    ("action", "choice", "message"),
    [
        (BID, {"price": 60}, "price 60 is outside 65..120"),
        (BID, {"price": 125}, "outside 65..120"),
        (BID, {"price": 67}, "a multiple of 5"),
        (START, {"par": 100}, "par 100 is not one of"),
        (SELL, {"count": 0}, "count 0 is outside 1..3"),
        (SELL, {"count": 4}, "outside 1..3"),
        (TRAIN, {"price": 251}, "outside 1..250"),
        (PRIVATE, {"price": 49}, "outside 50..200"),
        (DIVIDENDS, {"kind": game_pb2.DIVIDEND_KIND_UNSPECIFIED}, "neither"),
        (BID, {"par": 70}, "place_bid takes price; got par"),
        (SELL, {"price": 10}, "sell_shares takes count; got price"),
        (game_pb2.LegalAction(pass_turn=game_pb2.Pass()), {"count": 1}, "takes no choices"),
    ],
)
def test_a_choice_the_option_does_not_allow_is_refused_before_sending(
    action: game_pb2.LegalAction, choice: dict[str, int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        to_command(action, **choice)  # type: ignore[arg-type]


def test_an_action_of_no_known_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown legal action"):
        to_command(game_pb2.LegalAction(seat=1))


def test_act_takes_choices_only_with_a_legal_action() -> None:
    with Client("127.0.0.1:1", api_key="k") as client, pytest.raises(ValueError, match="choices"):
        client.act("g-1", game_pb2.Command(pass_turn=game_pb2.Pass()), price=10)
