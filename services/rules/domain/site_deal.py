"""The beginner game's deal (rulebook 14.1) as the 18xx.games site's engine makes it from the
game's seed, so that a game dealt here replays there from its export's `settings.seed`.

Facts from the site's engine (tobymao/18xx, read for them, not copied): `Engine::Game::Base`
does not use Ruby's `Random` but its own linear congruential generator, `@rand = seed % 2**31`
and each `rand` call `@rand = (1103515245 * @rand + 12345) % 2**31`, returning the new value.
`G1889::Game#setup` for the beginner game keeps the privates of its own table for the player
count (which differs from 14.1's for five players), in the order of its company list, sorts
them by one `rand` each (`sort_by! { rand }`, the keys drawn in that order) and gives the
i-th to the i-th player of the game's player list, who pays the site's beginner value for it
(not the face value). The priority deal is then the first player's, as in any stock round the
site begins with nobody having acted (`Game::Base#priority_deal_player`). No other `rand` is
drawn before the deal in 1889.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MODULUS = 2**31
MULTIPLIER = 1_103_515_245
INCREMENT = 12_345

#: The site's company list for 1889, in its order (the order its deal draws keys in).
SITE_PRIVATE_ORDER = ("TR", "MF", "ER", "SMR", "DR", "SIR")
#: The privates the site deals per player count (`BEGINNER_GAME_PRIVATES`); 14.1 deals MF,
#: not TR, to five players.
SITE_BEGINNER_PRIVATES = {
    2: frozenset({"DR", "SIR"}),
    3: frozenset({"DR", "SIR", "ER"}),
    4: frozenset({"DR", "SIR", "ER", "SMR"}),
    5: frozenset({"DR", "SIR", "ER", "SMR", "TR"}),
    6: frozenset({"DR", "SIR", "ER", "SMR", "TR", "MF"}),
}
#: What a player pays the bank for the private dealt (`BEGINNER_GAME_PRIVATE_VALUES`).
SITE_BEGINNER_PRICES = {"TR": 20, "MF": 40, "ER": 40, "SMR": 60, "DR": 60, "SIR": 90}
#: What each private pays its owner in the site's beginner game (`BEGINNER_GAME_PRIVATE_REVENUES`,
#: set with its value when `neuter_company` strips its abilities).
SITE_BEGINNER_REVENUES = {"TR": 5, "MF": 15, "ER": 15, "SMR": 20, "DR": 20, "SIR": 25}


class SiteRandom:
    """The site engine's `Game::Base#rand`: each call advances the state and returns it."""

    def __init__(self, seed: int) -> None:
        self.state = seed % MODULUS  # Ruby's % floors as Python's does, for any sign

    def rand(self) -> int:
        self.state = (MULTIPLIER * self.state + INCREMENT) % MODULUS
        return self.state


@dataclass(frozen=True, slots=True)
class SiteDeal:
    seat: int
    company: str
    price: int


def site_beginner_deal(seed: int, order: Sequence[int]) -> tuple[SiteDeal, ...]:
    """Who receives which private for what, `order` being the seats in the game's player
    order (the export's player list). The priority deal goes to `order[0]`."""
    if len(order) not in SITE_BEGINNER_PRIVATES:
        raise ValueError(f"the site deals the beginner game to 2 to 6 players, not {len(order)}")
    dealt = [c for c in SITE_PRIVATE_ORDER if c in SITE_BEGINNER_PRIVATES[len(order)]]
    rng = SiteRandom(seed)
    # The LCG's period is 2**31, so the keys of one deal are distinct and Ruby's unstable sort
    # orders them as Python's does.
    keys = {company: rng.rand() for company in dealt}
    dealt.sort(key=keys.__getitem__)
    return tuple(
        SiteDeal(seat=seat, company=company, price=SITE_BEGINNER_PRICES[company])
        for seat, company in zip(order, dealt, strict=True)
    )
