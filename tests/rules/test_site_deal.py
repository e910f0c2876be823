"""The beginner game's deal (14.1) under both profiles: under `18xx.games` as the site's engine
deals it from the seed (services/rules/domain/site_deal.py, switch `beginner_deal_as_site`),
under the rulebook as before the switch.

The expected values below are reference outputs, recorded once from the real site engine
(tobymao/18xx's lib/engine under /work/site-engine, run with Debian's Ruby 3.1 and
ENGINE_LOG_LEVEL=4), not from our code:

- the generator: `g = Engine::Game::G1889::Game.new(%w[a b c], id: 1, seed: seed)` (no
  beginner game, so nothing drew from it), then `g.instance_variable_get(:@rand)` and five
  `g.send(:rand)`;
- the deals: `Engine::Game::G1889::Game.new(names, id: 1, seed: seed,
  optional_rules: [:beginner_game])` with `names` the seats' names in the given order, then
  each player's `companies.map(&:sym)` and `cash`, and `send(:priority_deal_player)`.

The same comparison was run once on 1,500 deals (300 random seeds below 2**62, 2 to 6
players): all equal.
"""

from __future__ import annotations

import pytest

from services.rules.domain.site_deal import SiteRandom, site_beginner_deal
from tests.rules.helpers import new_game

# seed -> (the generator's state after seeding, its first five draws), from the site's engine.
SITE_DRAWS = {
    0: (0, [12345, 1406932606, 654583775, 1449466924, 229283573]),
    1: (1, [1103527590, 377401575, 662824084, 1147902781, 2035015474]),
    42: (42, [1250496027, 1116302264, 1000676753, 1668674806, 908095735]),
    2**31 + 7: (7, [1282168116, 642666333, 712265938, 1486001571, 2131988640]),
    987654321: (987654321, [1048490390, 638681367, 965945604, 390061805, 1953255714]),
    3141592653589793: (170224929, [28685638, 297644807, 414944308, 1355463261, 1812455378]),
}


@pytest.mark.parametrize("seed", SITE_DRAWS)
def test_the_generator_draws_as_the_site_engine_does(seed: int) -> None:
    state, draws = SITE_DRAWS[seed]
    rng = SiteRandom(seed)
    assert rng.state == state
    assert [rng.rand() for _ in draws] == draws


# (players, seed) -> each player's private in the site's player order p1, p2, ..., from the
# site's engine.
SITE_DEALS = {
    (2, 0): ["DR", "SIR"],
    (2, 1): ["SIR", "DR"],
    (3, 0): ["ER", "SIR", "DR"],
    (3, 12345): ["DR", "ER", "SIR"],
    (4, 42): ["DR", "SMR", "ER", "SIR"],
    (4, 987654321): ["SIR", "SMR", "DR", "ER"],
    (5, 0): ["TR", "SIR", "SMR", "ER", "DR"],
    (5, 3141592653589793): ["TR", "ER", "SMR", "DR", "SIR"],
    (6, 12345): ["SMR", "MF", "SIR", "DR", "TR", "ER"],
    (6, 2**40 + 99): ["MF", "DR", "SIR", "ER", "SMR", "TR"],
}


@pytest.mark.parametrize(("players", "seed"), SITE_DEALS)
def test_the_deal_is_the_site_engines(players: int, seed: int) -> None:
    dealt = site_beginner_deal(seed, range(1, players + 1))
    assert [d.company for d in dealt] == SITE_DEALS[players, seed]
    assert [d.seat for d in dealt] == list(range(1, players + 1))


# (players, seed): our drawn seat order (seats not fixed) and, per player in that order,
# (seat, private, cash after paying), then the priority deal's seat. Recorded from the site's
# engine with the players named in that order (its player list is the export's).
SITE_GAMES = {
    (3, 20261202): ([(3, "DR", 360), (2, "SIR", 330), (1, "ER", 380)], 3),
    (4, 5): ([(1, "SMR", 360), (2, "DR", 360), (4, "ER", 380), (3, "SIR", 330)], 1),
    (5, 99): (
        [(2, "ER", 350), (3, "SIR", 300), (1, "SMR", 330), (5, "DR", 330), (4, "TR", 370)],
        2,
    ),
    (6, 123456789): (
        [
            (1, "TR", 370),
            (3, "SIR", 300),
            (2, "SMR", 330),
            (5, "MF", 350),
            (4, "DR", 330),
            (6, "ER", 350),
        ],
        1,
    ),
}


@pytest.mark.parametrize(("players", "seed"), SITE_GAMES)
def test_a_beginner_game_under_the_site_profile_is_dealt_as_the_site_deals_it(
    players: int, seed: int
) -> None:
    state = new_game(players, seed=seed, fixed=False, beginner=True, rules_profile="18xx.games")
    expected, priority = SITE_GAMES[players, seed]
    assert [(p.seat, *p.privates, p.cash) for p in state.players] == expected
    assert state.priority == priority
    assert state.acting_seats == (priority,)


# (players, seed): (seat, private, price) in the order dealt, then the priority deal's seat and
# the seat order, as the rulebook deal gave them before the switch existed (recorded from
# services/rules/domain/setup.py at commit b84a75f, seats not fixed).
RULEBOOK_GAMES = {
    (2, 31337): ([(2, "DR", 60), (1, "SIR", 80)], 2, (2, 1)),
    (4, 31337): ([(3, "DR", 60), (1, "SIR", 80), (4, "ER", 40), (2, "SMR", 50)], 3, (3, 1, 4, 2)),
    (5, 31337): (
        [(3, "SMR", 50), (1, "MF", 30), (4, "DR", 60), (2, "SIR", 80), (5, "ER", 40)],
        5,
        (3, 1, 4, 2, 5),
    ),
}


@pytest.mark.parametrize(("players", "seed"), RULEBOOK_GAMES)
def test_under_the_rulebook_the_deal_is_unchanged(players: int, seed: int) -> None:
    state = new_game(players, seed=seed, fixed=False, beginner=True, rules_profile="rulebook")
    dealt, priority, order = RULEBOOK_GAMES[players, seed]
    assert tuple(p.seat for p in state.players) == order
    assert sorted((p.seat, *p.privates) for p in state.players) == sorted(
        (seat, company) for seat, company, _price in dealt
    )
    starting = 420 if players < 5 else 390
    assert {p.seat: p.cash for p in state.players} == {
        seat: starting - price for seat, _company, price in dealt
    }
    assert state.priority == priority


def test_five_players_are_dealt_tr_on_the_site_and_mf_by_the_rulebook() -> None:
    site = new_game(5, seed=0, beginner=True, rules_profile="18xx.games")
    rulebook = new_game(5, seed=0, beginner=True, rules_profile="rulebook")
    assert {c for p in site.players for c in p.privates} == {"TR", "ER", "SMR", "DR", "SIR"}
    assert {c for p in rulebook.players for c in p.privates} == {"MF", "ER", "SMR", "DR", "SIR"}


def test_the_site_deals_to_two_to_six_players_only() -> None:
    with pytest.raises(ValueError, match="not 7"):
        site_beginner_deal(1, range(1, 8))
