import pytest

from kernel.rejection import Rejected
from services.rules.domain import events as ev
from services.rules.domain.commands import CreateGame
from services.rules.domain.decide import decide
from services.rules.domain.evolve import fold
from services.rules.domain.state import GameState, PrivateAuction, StockRound
from tests.rules.helpers import new_game


@pytest.mark.parametrize(
    ("players", "capital", "privates"),
    [
        (2, 420, ["TR", "MF", "ER", "SMR", "DR"]),
        (3, 420, ["TR", "MF", "ER", "SMR", "DR", "SIR"]),
        (4, 420, ["TR", "MF", "ER", "SMR", "DR", "SIR", "UTF"]),
        (5, 390, ["TR", "MF", "ER", "SMR", "DR", "SIR", "UTF"]),
        (6, 390, ["TR", "MF", "ER", "SMR", "DR", "SIR", "UTF"]),
    ],
)
def test_setup_by_player_count(players: int, capital: int, privates: list[str]) -> None:
    state = new_game(players)
    assert [p.cash for p in state.players] == [capital] * players
    assert state.bank == 7000 - capital * players
    assert isinstance(state.round, PrivateAuction)
    assert list(state.round.offer) == privates
    assert state.acting_seats == (state.priority,) == (state.players[0].seat,)


def test_random_order_is_recorded_and_follows_the_seed() -> None:
    seated = tuple(ev.SeatedPlayer(s, f"p{s}") for s in (1, 2, 3, 4, 5, 6))
    orders = {
        decide(GameState(), CreateGame(players=seated, seed=seed))[1].order  # type: ignore[attr-defined]
        for seed in range(20)
    }
    assert len(orders) > 1
    assert all(sorted(order) == [1, 2, 3, 4, 5, 6] for order in orders)
    again = decide(GameState(), CreateGame(players=seated, seed=7))
    assert again == decide(GameState(), CreateGame(players=seated, seed=7))


@pytest.mark.parametrize("count", [1, 7])
def test_player_count_outside_two_to_six_is_rejected(count: int) -> None:
    seated = tuple(ev.SeatedPlayer(s, f"p{s}") for s in range(1, count + 1))
    with pytest.raises(Rejected) as rejected:
        decide(GameState(), CreateGame(players=seated, seed=1))
    assert rejected.value.reason == "PLAYER_COUNT"


@pytest.mark.parametrize(
    ("players", "dealt"),
    [(2, {"DR", "SIR"}), (3, {"ER", "DR", "SIR"}), (5, {"MF", "ER", "SMR", "DR", "SIR"})],
)
def test_beginner_game_deals_one_private_each_at_face_value(players: int, dealt: set[str]) -> None:
    state = new_game(players, seed=3, beginner=True)
    assert isinstance(state.round, StockRound)
    assert {c for p in state.players for c in p.privates} == dealt
    assert all(len(p.privates) == 1 for p in state.players)
    faces = {"MF": 30, "ER": 40, "SMR": 50, "DR": 60, "SIR": 80}
    assert all(
        p.cash == (420 if players < 5 else 390) - faces[p.privates[0]] for p in state.players
    )


@pytest.mark.parametrize("profile", ["rulebook", "18xx.games"])
def test_the_rules_profile_is_recorded_in_the_game(profile: str) -> None:
    seated = tuple(ev.SeatedPlayer(s, f"p{s}") for s in (1, 2, 3))
    created = decide(GameState(), CreateGame(players=seated, seed=1, rules_profile=profile))[0]
    assert isinstance(created, ev.GameCreated)
    assert created.rules_profile == profile
    state = fold([created])
    assert state.rules_profile == profile


def test_the_rulebook_is_the_default_profile() -> None:
    seated = tuple(ev.SeatedPlayer(s, f"p{s}") for s in (1, 2, 3))
    assert CreateGame(players=seated, seed=1).rules_profile == "rulebook"
    stored = {"title": "1889", "players": [], "beginner_game": False, "bank": 7000}
    old = ev.event_from_payload("GameCreated", 1, stored)
    assert isinstance(old, ev.GameCreated)
    assert old.rules_profile == "rulebook"


def test_an_unknown_rules_profile_is_refused() -> None:
    seated = tuple(ev.SeatedPlayer(s, f"p{s}") for s in (1, 2, 3))
    with pytest.raises(Rejected) as rejected:
        decide(GameState(), CreateGame(players=seated, seed=1, rules_profile="house"))
    assert rejected.value.reason == "UNKNOWN_RULES_PROFILE"
    assert rejected.value.details == {"field": "rules_profile"}
