"""The SDK's heuristic player (shikoku_sdk/heuristic.py), in process on the rules' own legal
actions, through the public messages: it only picks what is listed, plays the same game for the
same seed, runs the best routes, pays out or saves for a train, and beats random bots."""

from __future__ import annotations

import random

import pytest

from services.rules.domain.commands import CreateGame, DeclareBankruptcy
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.events import SeatedPlayer
from services.rules.domain.evolve import fold
from services.rules.domain.legal import BankruptcyOption, BuyTrainOption, allows
from services.rules.domain.state import GameState
from services.rules.domain.view import state_document
from services.rules.shell.titles import title_to_proto
from services.rules.wire import legal_action_to_proto
from shikoku.v1 import game_pb2
from shikoku_sdk.commands import PAYOUT, WITHHOLD
from shikoku_sdk.heuristic import decide as heuristic_decide
from shikoku_sdk.heuristic_facts import TitleFacts
from tools.bots import best_routes, heuristic_command
from tools.selfplay import random_game

FACTS = TitleFacts.from_title(title_to_proto("1889"))


def heuristic_game(players: int, seed: int, steps: int = 100000) -> list[GameState]:
    """The states of a heuristic-only game, each checked: the command is one listed."""
    rng = random.Random(seed)
    seated = tuple(SeatedPlayer(s, f"bot {s}") for s in range(1, players + 1))
    state = fold(
        decide(GameState(), CreateGame(seated, seed=seed, rules_profile="18xx.games")), GameState()
    )
    states = [state]
    for _ in range(steps):
        if state.result is not None:
            break
        options = legal_actions(state)
        mine = [o for o in options if o.seat == options[0].seat]
        command = heuristic_command(state, mine, rng)
        assert any(allows(option, command) for option in mine), command
        if isinstance(command, DeclareBankruptcy):  # never while anything else is allowed
            assert all(isinstance(option, BankruptcyOption) for option in mine), mine
        state = fold(decide(state, command), state)
        states.append(state)
    return states


def test_it_only_picks_listed_actions_and_a_seed_plays_the_same_game() -> None:
    first = heuristic_game(3, seed=5)
    assert first[-1].result is not None
    again = heuristic_game(3, seed=5)
    assert len(again) == len(first)
    assert state_document(again[-1]) == state_document(first[-1])


def test_another_seed_plays_another_game() -> None:
    """1889's only chance is the seating: without the generator's taste every heuristic-only
    game of a player count would be one game, seated differently."""
    finals = [heuristic_game(3, seed)[-1].result for seed in (5, 8)]
    assert finals[0] is not None and finals[1] is not None
    assert sorted(w for _, w in finals[0].net_worths) != sorted(w for _, w in finals[1].net_worths)


def _operating(states: list[GameState], step: str) -> GameState:
    for state in states:
        document = state_document(state)
        round_ = document["round"] or {}
        at_step = round_.get("type") == "operating_round" and round_.get("step") == step
        if at_step and legal_actions(state):
            return state
    raise AssertionError(f"no {step} step")


def _choose(state: GameState) -> game_pb2.Command:
    options = legal_actions(state)
    mine = [legal_action_to_proto(o) for o in options if o.seat == options[0].seat]

    def routes(corporation: str) -> list[game_pb2.RouteRun]:
        found = best_routes(state, corporation, options[0].seat)
        return [game_pb2.RouteRun(train=r.train, hexes=list(r.hexes)) for r in found.priced or ()]

    return heuristic_decide(state_document(state), mine, FACTS, random.Random(1), routes)


def test_it_runs_the_best_routes() -> None:
    state = _operating(heuristic_game(4, seed=2, steps=400), "routes")
    command = _choose(state)
    operating = state_document(state)["round"]["operating"]
    best = best_routes(state, operating, 0)
    assert [r.train for r in command.run_routes.routes] == [r.train for r in best.priced or ()]
    assert [list(r.hexes) for r in command.run_routes.routes] == [
        list(r.hexes) for r in best.priced or ()
    ]


def test_it_pays_out_a_revenue_when_no_train_is_urgently_needed() -> None:
    checked = 0
    for state in heuristic_game(4, seed=2, steps=500):
        document = state_document(state)
        round_ = document["round"] or {}
        if round_.get("type") != "operating_round" or round_.get("step") != "dividend":
            continue
        if not legal_actions(state) or document["phase"] not in ("2", "3"):
            continue
        corporation = state.corporation(round_["operating"])
        cheapest = min(FACTS.train(t).price for t, left in state.depot.items() if left)
        if corporation.cash >= cheapest and corporation.trains:
            assert _choose(state).pay_dividends.kind == PAYOUT
            checked += 1
    assert checked


def test_a_corporation_without_a_train_buys_one() -> None:
    for state in heuristic_game(4, seed=3, steps=600):
        round_ = state_document(state)["round"] or {}
        if round_.get("type") != "operating_round" or round_.get("step") != "trains":
            continue
        corporation = state.corporation(round_["operating"])
        options = legal_actions(state)
        cheapest = min(
            (o.min_price for o in options if isinstance(o, BuyTrainOption)), default=None
        )
        if not corporation.trains and cheapest is not None and cheapest <= corporation.cash:
            assert _choose(state).WhichOneof("action") == "buy_train"
            return
    raise AssertionError("no trainless corporation at its train step")


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4, 5])
def test_heuristic_players_go_bankrupt_only_when_nothing_else_is_allowed(players: int) -> None:
    final = heuristic_game(players, seed=players)[-1]  # which checks each bankruptcy
    assert final.result is not None
    assert final.result.reason in ("bank", "bankrupt")


@pytest.mark.slow
def test_it_beats_random_bots_in_most_games() -> None:
    wins = 0
    for game in range(6):
        seat = game % 4 + 1
        bots = ["random"] * 4
        bots[seat - 1] = "heuristic"
        _, final = random_game(4, 100 + game, "18xx.games", bots)
        assert final.result is not None
        top = max(worth for _, worth in final.result.net_worths)
        wins += dict(final.result.net_worths)[seat] == top
    assert wins >= 4


def test_it_refuses_an_empty_list() -> None:
    with pytest.raises(ValueError):
        heuristic_decide({}, [], FACTS, random.Random(0), lambda _c: [])


def test_a_forced_purchase_is_never_a_bankruptcy_while_a_train_can_be_bought() -> None:
    sale = game_pb2.LegalAction(
        seat=1,
        buy_train=game_pb2.BuyTrainOption(
            train="4", source="depot", min_price=300, max_price=300, president_contribution=100
        ),
    )
    bankrupt = game_pb2.LegalAction(seat=1, declare_bankruptcy=game_pb2.DeclareBankruptcy())
    document = state_document(heuristic_game(4, seed=2, steps=400)[-1])
    document["round"] = {"type": "operating_round", "operating": "", "step": "trains"}
    command = heuristic_decide(document, [sale, bankrupt], FACTS, random.Random(0), lambda _c: [])
    assert command.WhichOneof("action") == "buy_train"


def _late_document(phase: str) -> dict[str, object]:
    """A real mid-game document, moved to `phase` with only Diesels left in the depot."""
    document = state_document(heuristic_game(4, seed=2, steps=400)[-1])
    document["phase"] = phase
    document["depot"] = {"D": -1}
    return document


def _corporation(document: dict[str, object], **fields: object) -> dict[str, object]:
    corporations = document["corporations"]
    assert isinstance(corporations, list)
    corporation: dict[str, object] = corporations[0]
    corporation.update(fields)
    return corporation


def test_a_corporation_holding_a_4_exchanges_it_for_a_diesel() -> None:
    document = _late_document("6")
    corporation = _corporation(document, trains=["4", "5"], cash=900)
    document["round"] = {"type": "operating_round", "operating": corporation["id"]}

    def diesel(price: int, exchange: str) -> game_pb2.LegalAction:
        option = game_pb2.BuyTrainOption(
            train="D", source="depot", min_price=price, max_price=price, exchange=exchange
        )
        return game_pb2.LegalAction(seat=1, buy_train=option)

    actions = [
        diesel(1100, ""),
        diesel(800, "5"),
        diesel(800, "4"),
        game_pb2.LegalAction(seat=1, pass_turn=game_pb2.Pass()),
    ]
    command = heuristic_decide(document, actions, FACTS, random.Random(0), lambda _c: [])
    assert command.WhichOneof("action") == "buy_train"
    assert (command.buy_train.train, command.buy_train.exchange) == ("D", "4")
    assert command.buy_train.price == 800


def test_from_phase_5_a_corporation_withholds_to_reach_its_diesel() -> None:
    document = _late_document("6")
    corporation = _corporation(document, trains=["5"], cash=700)
    document["round"] = {"type": "operating_round", "operating": corporation["id"]}
    option = game_pb2.PayDividendsOption(corporation=str(corporation["id"]), revenue=200)
    actions = [game_pb2.LegalAction(seat=1, pay_dividends=option)]
    command = heuristic_decide(document, actions, FACTS, random.Random(0), lambda _c: [])
    assert command.pay_dividends.kind == WITHHOLD
    corporation["cash"] = 100  # the Diesel out of reach for years: pay out meanwhile
    option.revenue = 100
    actions = [game_pb2.LegalAction(seat=1, pay_dividends=option)]
    command = heuristic_decide(document, actions, FACTS, random.Random(0), lambda _c: [])
    assert command.pay_dividends.kind == PAYOUT


def test_at_the_certificate_limit_it_sells_a_share_to_float_its_corporation() -> None:
    document = _late_document("5")
    corporations = document["corporations"]
    assert isinstance(corporations, list)
    ours, theirs, own_running = corporations[0], corporations[1], corporations[2]
    ours.update(president=1, floated=False, par=100, share_price=100)
    theirs.update(president=2, floated=True)
    own_running.update(president=1, floated=True)
    for player in document["players"]:  # type: ignore[attr-defined]
        if player["seat"] == 1:
            player.update(cash=1000, shares={ours["id"]: 3, theirs["id"]: 2, own_running["id"]: 4})
    document["round"] = {"type": "stock_round"}

    def sale(corporation: object, price: int) -> game_pb2.LegalAction:
        option = game_pb2.SellSharesOption(corporation=str(corporation), max_count=2, price=price)
        return game_pb2.LegalAction(seat=1, sell_shares=option)

    actions = [
        sale(own_running["id"], 150),
        sale(theirs["id"], 90),
        game_pb2.LegalAction(seat=1, pass_turn=game_pb2.Pass()),
    ]
    command = heuristic_decide(document, actions, FACTS, random.Random(0), lambda _c: [])
    assert command.WhichOneof("action") == "sell_shares"
    assert (command.sell_shares.corporation, command.sell_shares.count) == (theirs["id"], 1)
