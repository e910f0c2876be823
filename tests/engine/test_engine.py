"""The local engine's game API (shikoku_engine) held to the rules service's own pure core: the
legal actions ListLegalActions would list, the refusals SubmitCommand would give, the state
document GetState would serve, and whole games played to their end in this process."""

from __future__ import annotations

import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from google.protobuf import json_format

from services.routes.engine.validation import evaluate
from services.rules import wire
from services.rules.domain import commands as cmd
from services.rules.domain.decide import decide, legal_actions
from services.rules.domain.events import SeatedPlayer
from services.rules.domain.evolve import fold
from services.rules.domain.game_end import net_worth
from services.rules.domain.route_pricing import price_routes_at_once
from services.rules.domain.state import GameState
from services.rules.domain.view import state_document
from shikoku.v1 import game_pb2
from shikoku_engine import VERSION, Game, Refused
from shikoku_sdk import random_player
from shikoku_sdk.commands import to_command
from shikoku_sdk.version import VERSION as PROJECT_VERSION

ROOT = Path(__file__).resolve().parents[2]
ACTIONS_LIMIT = 5000
PASS = game_pb2.Command(pass_turn=game_pb2.Pass())


@dataclass
class Domain:
    """The same game kept on the domain's functions directly, as the rules service keeps it:
    decide, fold, and the routes priced by the routes engine."""

    state: GameState
    version: int

    @classmethod
    def new(cls, players: int, seed: int, profile: str = "rulebook") -> Domain:
        seated = tuple(SeatedPlayer(s, f"Player {s}") for s in range(1, players + 1))
        events = decide(GameState(), cmd.CreateGame(seated, seed, rules_profile=profile))
        return cls(fold(events), len(events))

    def apply(self, seat: int, message: game_pb2.Command) -> None:
        command = wire.command_from_proto(seat, message)
        assert not isinstance(command, cmd.Undo)
        if isinstance(command, cmd.RunRoutes):
            command = price_routes_at_once(self.state, command, evaluate)
        events = decide(self.state, command)
        self.state, self.version = fold(events, self.state), self.version + len(events)


def random_move(game: Game, rng: random.Random) -> tuple[int, game_pb2.Command]:
    """The SDK's random player's choice, with the engine's best routes."""
    action = random_player.choose(game.legal_actions(), rng)

    def routes(corporation: str) -> list[game_pb2.RouteRun]:
        solution = game.best_routes(corporation).routes
        return [game_pb2.RouteRun(train=r.train, hexes=r.hexes) for r in solution]

    return action.seat, random_player.command_for(action, rng, routes)


def first_of(game: Game, kind: str) -> game_pb2.LegalAction:
    return next(a for a in game.legal_actions() if a.WhichOneof("action") == kind)


def play_to(game: Game, rng: random.Random, kind: str) -> game_pb2.LegalAction:
    """Random moves until `kind` is offered; that offer."""
    for _ in range(ACTIONS_LIMIT):
        offered = [a for a in game.legal_actions() if a.WhichOneof("action") == kind]
        if offered:
            return offered[0]
        seat, command = random_move(game, rng)
        game.apply(command, seat)
    raise AssertionError(f"no {kind} within {ACTIONS_LIMIT} actions")


def test_the_version_is_the_projects() -> None:
    assert VERSION == PROJECT_VERSION


def test_a_new_game_seats_its_players_and_is_what_create_game_makes() -> None:
    game = Game.new(["Ann", "Bo", "Cy"], seed=5)
    domain = Domain.new(3, 5)
    document = game.state()
    assert sorted((p["seat"], p["name"]) for p in document["players"]) == [
        (1, "Ann"),
        (2, "Bo"),
        (3, "Cy"),
    ]
    # The seating is drawn from the seed as CreateGame draws it, and the versions agree.
    assert [p["seat"] for p in document["players"]] == list(domain.state.order)
    assert game.version == domain.version > 1
    assert game.acting_seats == domain.state.acting_seats and len(game.acting_seats) == 1
    assert document["rules_profile"] == "rulebook" and document["beginner_game"] is False
    assert game.net_worths() == {seat: 420 for seat in (1, 2, 3)}  # rulebook 2.2: ¥1260 / 3
    assert not game.is_over() and game.result_reason() is None


def test_a_new_game_takes_a_profile_and_the_beginner_variant() -> None:
    counted = Game.new(4, seed=2, profile="18xx.games", variant="beginner")
    document = counted.state()
    assert document["rules_profile"] == "18xx.games" and document["beginner_game"] is True
    assert [p["name"] for p in sorted(document["players"], key=lambda p: p["seat"])] == [
        "Player 1",
        "Player 2",
        "Player 3",
        "Player 4",
    ]
    # The beginner game deals the privates: nobody starts with all of its cash.
    assert any(p["privates"] for p in document["players"])


@pytest.mark.parametrize(
    ("players", "profile", "reason"),
    [
        (1, "rulebook", "PLAYER_COUNT"),
        (7, "rulebook", "PLAYER_COUNT"),
        (3, "nope", "UNKNOWN_RULES_PROFILE"),
    ],
)
def test_a_set_up_the_rules_refuse_is_refused_with_their_reason(
    players: int, profile: str, reason: str
) -> None:
    with pytest.raises(Refused) as refused:
        Game.new(players, seed=1, profile=profile)
    assert refused.value.reason == reason and refused.value.code == "INVALID_ARGUMENT"
    assert str(refused.value).startswith(f"{reason}: ")


def test_an_unknown_variant_is_named() -> None:
    with pytest.raises(ValueError, match="unknown variant 'advanced'"):
        Game.new(3, seed=1, variant="advanced")


def test_the_legal_actions_are_those_list_legal_actions_gives_all_game_long() -> None:
    game, domain, rng = Game.new(4, seed=11), Domain.new(4, 11), random.Random(11)
    for _ in range(150):
        listed = [wire.legal_action_to_proto(option) for option in legal_actions(domain.state)]
        assert game.legal_actions() == listed and listed
        seat, command = random_move(game, rng)
        game.apply(command, seat)
        domain.apply(seat, command)
        assert game.version == domain.version
        assert game.state() == state_document(domain.state)


def test_a_refused_command_gives_the_rules_reason_and_changes_nothing() -> None:
    game = Game.new(3, seed=1)
    before, version = game.state(), game.version
    (acting,) = game.acting_seats
    other = next(seat for seat in (1, 2, 3) if seat != acting)
    refusals = [
        (PASS, other, "NOT_YOUR_TURN", "FAILED_PRECONDITION"),
        (PASS, 9, "SEAT_NOT_IN_GAME", "PERMISSION_DENIED"),
        (game_pb2.Command(), None, "MISSING_ACTION", "INVALID_ARGUMENT"),
        (
            game_pb2.Command(place_bid=game_pb2.PlaceBid(company="MF", price=0)),
            None,
            "INVALID_PRICE",
            "INVALID_ARGUMENT",
        ),
        (game_pb2.Command(undo=game_pb2.Undo()), None, "UNDO_NOT_ALLOWED", "FAILED_PRECONDITION"),
    ]
    for command, seat, reason, code in refusals:
        with pytest.raises(Refused) as refused:
            game.apply(command, seat)
        assert (refused.value.reason, refused.value.code) == (reason, code), command
        assert refused.value.message
    assert game.state() == before and game.version == version
    assert game.acting_seats == (acting,)


def test_routes_are_checked_and_priced_by_the_routes_engine_here() -> None:
    game, rng = Game.new(4, seed=3), random.Random(3)
    offer = play_to(game, rng, "run_routes")
    corporation = offer.run_routes.corporation
    best = game.best_routes(corporation)
    assert (
        best.proven
        and best.revenue > 0
        and best.revenue == sum(route.revenue for route in best.routes)
    )
    # A route through a hex the corporation cannot reach is refused as the service refuses it.
    train = offer.run_routes.trains[0]
    bogus = game_pb2.RouteRun(train=train, hexes=["A1", "Z99"])
    with pytest.raises(Refused) as refused:
        game.apply(to_command(offer, routes=[bogus]), offer.seat)
    assert refused.value.reason == "ROUTE_UNKNOWN_HEX" and refused.value.details["hex"] == "A1"
    game.apply(to_command(offer, routes=best.routes), offer.seat)
    dividends = first_of(game, "pay_dividends").pay_dividends
    assert (
        (dividends.corporation, dividends.revenue)
        == (corporation, best.revenue)
        != (corporation, 0)
    )
    with pytest.raises(ValueError, match="no corporation 'XX'"):
        game.best_routes("XX")


def test_a_clone_goes_its_own_way() -> None:
    game = Game.new(3, seed=4)
    copy = game.clone()
    copy.apply(PASS)
    assert copy.version > game.version and copy.state() != game.state()
    assert game.state() == Game.new(3, seed=4).state()
    game.apply(to_command(first_of(game, "buy_private")))
    assert game.state() != copy.state()
    assert copy.state()["players"] == Game.new(3, seed=4).clone().state()["players"]


def test_the_same_seed_and_commands_give_the_same_game() -> None:
    def played(seed: int) -> list[tuple[int, dict[str, object]]]:
        game, rng = Game.new(5, seed=seed), random.Random(seed)
        seen = []
        for _ in range(120):
            seat, command = random_move(game, rng)
            game.apply(command, seat)
            seen.append((game.version, game.state()))
        return seen

    assert played(8) == played(8)
    assert played(8) != played(9)


def test_a_whole_random_game_plays_to_its_end_in_this_process() -> None:
    game, domain, rng = Game.new(4, seed=21), Domain.new(4, 21), random.Random(21)
    for _ in range(ACTIONS_LIMIT):
        if game.is_over():
            break
        worths = game.net_worths()
        assert worths == {p.seat: net_worth(domain.state, p) for p in domain.state.players}
        seat, command = random_move(game, rng)
        game.apply(command, seat)
        domain.apply(seat, command)
    assert game.is_over() and domain.state.result is not None
    assert game.result_reason() in {"bankrupt", "bank"}
    document = game.state()
    assert document == state_document(domain.state)
    assert document["result"]["reason"] == game.result_reason()
    assert game.net_worths() == dict(domain.state.result.net_worths)
    assert sorted(game.net_worths()) == [1, 2, 3, 4]
    assert game.legal_actions() == [] and game.acting_seats == ()
    with pytest.raises(Refused) as refused:
        game.apply(PASS, 1)
    assert refused.value.reason == "GAME_OVER"
    # GetState serves the same document in a protobuf Struct (its numbers as floats).
    served = json_format.MessageToDict(wire.struct(document))
    assert served == json_format.MessageToDict(wire.struct(state_document(domain.state)))
    assert served["bank"] == document["bank"]


def test_the_engine_imports_neither_redis_nor_grpc() -> None:
    probe = (
        "import sys, random\n"
        "from shikoku_engine import Game\n"
        "from shikoku.v1 import game_pb2\n"
        "game = Game.new(3, seed=1)\n"
        "game.apply(game_pb2.Command(pass_turn=game_pb2.Pass()))\n"
        "game.best_routes('AR')\n"
        "roots = {name.split('.')[0] for name in sys.modules}\n"
        "print(sorted(roots & {'redis', 'grpc', 'infra', 'shikoku_sdk', 'msgpack', 'asyncio'}))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]"


def test_the_guide_shows_the_search_bot_example_as_it_is() -> None:
    guide = (ROOT / "docs/api.md").read_text()
    section = guide[guide.index("\n## The engine, locally\n") :]
    shown = section[section.index("```python\n") + len("```python\n") :]
    shown = shown[: shown.index("```\n")]
    example = (ROOT / "examples/engine_search_bot.py").read_text()
    assert example.endswith(shown) and example[: -len(shown)].rstrip().endswith('"""')
