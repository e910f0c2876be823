"""Which games a cross-check run plays: their player counts, seeds, profiles, seats' bots and
variant."""

from __future__ import annotations

from tools.crosscheck.game import Plan
from tools.selfplay import parse_bots


def plans(
    games: int,
    players: tuple[int, int],
    profile: str,
    first_seed: int,
    bots: str = "",
    variant: str = "",
) -> list[Plan]:
    """Game i: seed first_seed + i, player counts in turn from the lowest to the highest;
    `bots` as `shikoku selfplay --bots` takes them (one name for every seat, or one per seat
    for a single player count; empty: random bots). Raises ValueError for a wrong list."""
    low, high = players
    chosen = []
    for i in range(games):
        count = low + i % (high - low + 1)
        seated = parse_bots(bots, count) if bots else ()
        chosen.append(Plan(count, first_seed + i, profile, seated, variant))
    return chosen


#: `--mix`'s seatings, in turn: heuristic players only (twice as often: their games are the
#: long ones, where Diesels run, the UTF is kept into phase 5 and forced train purchases come
#: at the Diesel's rusting); one heuristic player (its seat moving) among random ones;
#: heuristic and random seats alternating; random players only. Two players are random
#: players but in the "one heuristic" seating: alternating would be that seating again, and a
#: bankruptcy with two players comes about only between random players.
SEATINGS = ("heuristic", "one heuristic", "heuristic", "alternating", "random")
PROFILES = ("18xx.games", "rulebook")


def mixed_plans(games: int, players: tuple[int, int], first_seed: int) -> list[Plan]:
    """Game i of a run that reaches the whole rulebook: the player counts in turn, the
    seatings of SEATINGS each for a run of five games, every fourth game under the rulebook
    (the others under the site's profile) and every seventh the beginner game; the cycles'
    lengths are coprime with the player counts', so each count meets every combination."""
    low, high = players
    chosen = []
    for i in range(games):
        count = low + i % (high - low + 1)
        seating = SEATINGS[(i // 5) % len(SEATINGS)]
        profile = PROFILES[1] if i % 4 == 1 else PROFILES[0]
        variant = "beginner" if i % 7 == 3 else ""
        chosen.append(Plan(count, first_seed + i, profile, _seated(seating, count, i), variant))
    return chosen


def _seated(seating: str, count: int, i: int) -> tuple[str, ...]:
    if seating == "one heuristic":
        return tuple("heuristic" if seat == i % count else "random" for seat in range(count))
    if count == 2:
        return ("random",) * count
    if seating == "alternating":
        return tuple("heuristic" if seat % 2 == 0 else "random" for seat in range(count))
    return (seating,) * count
