"""The pure tournament domain: seating, results, standings, exports and every rejection."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import pytest

from kernel.rejection import Kind, Rejected
from services.lobby.domain import standings as standings_module
from services.lobby.domain import tournament
from services.lobby.domain.standings import Standing, place_table, standings_csv, standings_json
from services.lobby.domain.tournament import (
    Player,
    Tournament,
    TournamentEvent,
    assign_tables,
    create,
    evolve,
    fold,
    record_result,
    seat_round,
    standings,
    start_round,
    table_sizes,
)


def make_players(count: int) -> list[Player]:
    players = [Player(f"p{n:02d}", f"Player {n}") for n in range(1, count + 1)]
    if count >= 6:
        players[5] = Player("p06", "Ono, Ai")  # a comma, for the CSV quoting
    return players


class Log:
    """A tournament built the way the lobby builds it: each decision's events evolved into the
    state as they are decided, and kept for replays."""

    def __init__(self) -> None:
        self.state = Tournament()
        self.events: list[TournamentEvent] = []

    def apply(self, events: Sequence[TournamentEvent]) -> list[TournamentEvent]:
        for event in events:
            self.state = evolve(self.state, event)
        self.events.extend(events)
        return list(events)


def created(count: int = 24, **options: Any) -> Log:
    log = Log()
    options.setdefault("round_count", 3)
    log.apply(create("spring", "Spring Cup", "host-hash", make_players(count), 4, **options))
    return log


def rejection(decide: Callable[..., object], *args: Any, **kwargs: Any) -> Rejected:
    with pytest.raises(Rejected) as caught:
        decide(*args, **kwargs)
    return caught.value


def as_table(rows: Iterable[Standing]) -> list[tuple[str, float, int, int | None, int]]:
    # Every expected total is a multiple of 1/2, which floats hold exactly.
    return [(s.player_id, float(s.points), s.net_worth, s.best_rank, s.games) for s in rows]


# --- the 24-player tournament in tables of 4 ---------------------------------------------------

ROUND_1_SEED = 1889
# seat_round's output for the seed, pinned so that the results below can name the players.
ROUND_1_SEATING = (
    ("p20", "p08", "p23", "p15"),
    ("p13", "p09", "p05", "p17"),
    ("p12", "p06", "p24", "p02"),
    ("p16", "p21", "p22", "p04"),
    ("p11", "p14", "p03", "p18"),
    ("p10", "p19", "p07", "p01"),
)
ROUND_1_TABLES = ("r1-a", "r1-b", "r1-c", "r1-d", "r1-e", "r1-f")

Result = tuple[dict[str, int], str, tuple[str, ...]]

ROUND_1_RESULTS: dict[str, Result] = {
    # p08 and p23 tie for ranks 2-3: (3 + 2) / 2 = 2.5 points each
    "r1-a": ({"p20": 500, "p08": 400, "p23": 400, "p15": 100}, "bank", ()),
    "r1-b": ({"p13": 300, "p09": 600, "p05": 450, "p17": 200}, "ended", ()),
    "r1-c": ({"p12": 700, "p06": 0, "p24": 350, "p02": 360}, "bankrupt", ()),
    # p21 has the most money but forfeited: last, 1 point
    "r1-d": ({"p16": 300, "p21": 900, "p22": 310, "p04": 290}, "forfeit", ("p21",)),
    # a three-way tie for ranks 1-3: (4 + 3 + 2) / 3 = 3 points each
    "r1-e": ({"p11": 550, "p14": 550, "p03": 550, "p18": 200}, "bank", ()),
    "r1-f": ({"p10": 800, "p19": 520, "p07": 500, "p01": 450}, "ended", ()),
}

# (player, points, total net worth, best rank, games), worked out by hand from the results.
STANDINGS_AFTER_ROUND_1 = [
    ("p10", 4, 800, 1, 1),
    ("p12", 4, 700, 1, 1),
    ("p09", 4, 600, 1, 1),
    ("p20", 4, 500, 1, 1),
    ("p22", 4, 310, 1, 1),
    ("p03", 3, 550, 1, 1),  # p03, p11, p14 tie on everything: player id
    ("p11", 3, 550, 1, 1),
    ("p14", 3, 550, 1, 1),
    ("p19", 3, 520, 2, 1),
    ("p05", 3, 450, 2, 1),
    ("p02", 3, 360, 2, 1),
    ("p16", 3, 300, 2, 1),
    ("p08", 2.5, 400, 2, 1),
    ("p23", 2.5, 400, 2, 1),
    ("p07", 2, 500, 3, 1),
    ("p24", 2, 350, 3, 1),
    ("p13", 2, 300, 3, 1),
    ("p04", 2, 290, 3, 1),
    ("p21", 1, 900, 4, 1),
    ("p01", 1, 450, 4, 1),
    ("p17", 1, 200, 4, 1),
    ("p18", 1, 200, 4, 1),
    ("p15", 1, 100, 4, 1),
    ("p06", 1, 0, 4, 1),
]

ROUND_2_SEED = 2
# The standings after round 1 cut into tables of 4.
ROUND_2_GROUPS = (
    {"p10", "p12", "p09", "p20"},
    {"p22", "p03", "p11", "p14"},
    {"p19", "p05", "p02", "p16"},
    {"p08", "p23", "p07", "p24"},
    {"p13", "p04", "p21", "p01"},
    {"p17", "p18", "p15", "p06"},
)
ROUND_2_TABLES = ("r2-a", "r2-b", "r2-c", "r2-d", "r2-e", "r2-f")
ROUND_2_RESULTS: dict[str, Result] = {
    "r2-a": ({"p10": 600, "p12": 650, "p09": 300, "p20": 700}, "bank", ()),
    "r2-b": ({"p22": 500, "p03": 400, "p11": 450, "p14": 450}, "ended", ()),
    "r2-c": ({"p19": 100, "p05": 600, "p02": 500, "p16": 400}, "bankrupt", ()),
    # two forfeits: p07 and p24 share ranks 3-4, (2 + 1) / 2 = 1.5 each
    "r2-d": ({"p08": 300, "p23": 250, "p07": 800, "p24": 50}, "forfeit", ("p07", "p24")),
    # all four tie: 2.5 each
    "r2-e": ({"p13": 400, "p04": 400, "p21": 400, "p01": 400}, "ended", ()),
    "r2-f": ({"p17": 300, "p18": 200, "p15": 250, "p06": 100}, "bank", ()),
}

FINAL_STANDINGS = [
    ("p20", 8, 1200, 1, 2),
    ("p22", 8, 810, 1, 2),
    ("p12", 7, 1350, 1, 2),
    ("p05", 7, 1050, 1, 2),
    ("p08", 6.5, 700, 1, 2),
    ("p10", 6, 1400, 1, 2),
    ("p02", 6, 860, 2, 2),
    ("p11", 5.5, 1000, 1, 2),
    ("p14", 5.5, 1000, 1, 2),
    ("p23", 5.5, 650, 2, 2),
    ("p09", 5, 900, 1, 2),
    ("p16", 5, 700, 2, 2),
    ("p17", 5, 500, 1, 2),
    ("p13", 4.5, 700, 1, 2),
    ("p04", 4.5, 690, 1, 2),
    ("p03", 4, 950, 1, 2),
    ("p19", 4, 620, 2, 2),
    ("p15", 4, 350, 2, 2),
    ("p21", 3.5, 1300, 1, 2),  # ties p07 on points and net worth; a better best rank
    ("p07", 3.5, 1300, 3, 2),
    ("p01", 3.5, 850, 1, 2),
    ("p24", 3.5, 400, 3, 2),
    ("p18", 3, 400, 3, 2),
    ("p06", 2, 100, 4, 2),
]

FINAL_CSV = """\
position,player_id,display_name,points,net_worth,best_rank,games
1,p20,Player 20,8,1200,1,2
2,p22,Player 22,8,810,1,2
3,p12,Player 12,7,1350,1,2
4,p05,Player 5,7,1050,1,2
5,p08,Player 8,6.5,700,1,2
6,p10,Player 10,6,1400,1,2
7,p02,Player 2,6,860,2,2
8,p11,Player 11,5.5,1000,1,2
9,p14,Player 14,5.5,1000,1,2
10,p23,Player 23,5.5,650,2,2
11,p09,Player 9,5,900,1,2
12,p16,Player 16,5,700,2,2
13,p17,Player 17,5,500,1,2
14,p13,Player 13,4.5,700,1,2
15,p04,Player 4,4.5,690,1,2
16,p03,Player 3,4,950,1,2
17,p19,Player 19,4,620,2,2
18,p15,Player 15,4,350,2,2
19,p21,Player 21,3.5,1300,1,2
20,p07,Player 7,3.5,1300,3,2
21,p01,Player 1,3.5,850,1,2
22,p24,Player 24,3.5,400,3,2
23,p18,Player 18,3,400,3,2
24,p06,"Ono, Ai",2,100,4,2
"""


def record_all(log: Log, results: Mapping[str, Result]) -> None:
    for table_id, (net_worths, end, forfeited) in results.items():
        log.apply(record_result(log.state, table_id, net_worths, end, forfeited))


def after_round_1() -> Log:
    log = created()
    log.apply(start_round(log.state, ROUND_1_SEED))
    log.apply(assign_tables(log.state, ROUND_1_TABLES))
    record_all(log, ROUND_1_RESULTS)
    return log


def after_round_2() -> Log:
    log = after_round_1()
    log.apply(start_round(log.state, ROUND_2_SEED))
    log.apply(assign_tables(log.state, ROUND_2_TABLES))
    record_all(log, ROUND_2_RESULTS)
    return log


def test_round_1_random_seating_depends_only_on_the_seed() -> None:
    state = created().state
    seating = seat_round(state, ROUND_1_SEED)

    assert seating == ROUND_1_SEATING
    assert seat_round(state, ROUND_1_SEED) == seating
    assert seat_round(state, ROUND_1_SEED + 1) != seating
    assert [len(table) for table in seating] == [4] * 6
    assert sorted(p for table in seating for p in table) == list(state.player_ids)


def test_round_started_records_the_seating() -> None:
    log = created()
    events = log.apply(start_round(log.state, ROUND_1_SEED))

    assert events == [
        (
            "RoundStarted",
            {"round": 1, "seed": ROUND_1_SEED, "seating": [list(t) for t in ROUND_1_SEATING]},
        )
    ]
    assert log.apply(assign_tables(log.state, ROUND_1_TABLES)) == [
        ("TablesAssigned", {"round": 1, "table_ids": list(ROUND_1_TABLES)})
    ]
    assert log.state.rounds[0].slot_of("r1-c") == 2


def test_a_result_is_recorded_in_seat_order_and_the_last_one_finishes_the_round() -> None:
    log = created()
    log.apply(start_round(log.state, ROUND_1_SEED))
    log.apply(assign_tables(log.state, ROUND_1_TABLES))
    *first, (last_table, (net_worths, end, forfeited)) = ROUND_1_RESULTS.items()
    record_all(log, dict(first))
    assert not log.state.rounds[0].finished

    events = record_result(log.state, last_table, net_worths, end, forfeited)

    assert events == [
        (
            "TableResultRecorded",
            {
                "round": 1,
                "table_id": "r1-f",
                "net_worths": {"p10": 800, "p19": 520, "p07": 500, "p01": 450},
                "end": "ended",
                "forfeited": [],
            },
        ),
        ("RoundFinished", {"round": 1}),
    ]
    assert list(events[0][1]["net_worths"]) == list(ROUND_1_SEATING[5])


def test_standings_after_round_1() -> None:
    assert as_table(standings(after_round_1().state)) == STANDINGS_AFTER_ROUND_1


def test_round_2_seats_players_of_similar_standing_together() -> None:
    log = after_round_1()
    events = log.apply(start_round(log.state, ROUND_2_SEED))

    assert events[0][1]["round"] == 2
    assert tuple(set(table) for table in log.state.rounds[1].seating) == ROUND_2_GROUPS


def test_final_standings_and_exports() -> None:
    final = standings(after_round_2().state)

    assert as_table(final) == FINAL_STANDINGS
    assert [s.position for s in final] == list(range(1, 25))
    assert standings_csv(final) == FINAL_CSV
    exported = standings_json(final)
    assert exported[0] == {
        "position": 1,
        "player_id": "p20",
        "display_name": "Player 20",
        "points": 8,
        "net_worth": 1200,
        "best_rank": 1,
        "games": 2,
    }
    assert exported[4]["points"] == 6.5
    assert json.loads(json.dumps(exported)) == exported


def test_standings_before_any_result() -> None:
    state = created(count=5).state
    before = standings(state)

    assert as_table(before) == [(p, 0, 0, None, 0) for p in state.player_ids]
    assert standings_csv(before).splitlines()[1] == "1,p01,Player 1,0,0,,0"
    assert standings_json(before)[0]["best_rank"] is None


def test_fold_of_the_events_equals_the_state_built_step_by_step() -> None:
    log = after_round_2()
    replayed_from_json = json.loads(json.dumps(log.events))

    assert fold(log.events) == log.state
    assert fold((kind, payload) for kind, payload in replayed_from_json) == log.state
    assert [kind for kind, _ in log.events].count("RoundFinished") == 2


# --- table sizes and seating -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "size", "expected"),
    [
        (24, 4, (4, 4, 4, 4, 4, 4)),
        (10, 4, (4, 3, 3)),
        (13, 4, (4, 3, 3, 3)),
        (5, 4, (5,)),
        (8, 3, (4, 4)),
        (10, 3, (4, 3, 3)),
        (7, 2, (3, 2, 2)),
        (7, 6, (4, 3)),
        (16, 5, (4, 4, 4, 4)),
    ],
)
def test_table_sizes(players: int, size: int, expected: tuple[int, ...]) -> None:
    assert table_sizes(players, size) == expected


@pytest.mark.parametrize("size", range(2, 7))
def test_every_player_count_gives_valid_tables(size: int) -> None:
    smallest = 2 if size == 2 else 3
    for count in range(size, 80):
        sizes = table_sizes(count, size)
        assert sum(sizes) == count
        assert all(smallest <= s <= 6 for s in sizes), (count, sizes)
        assert list(sizes) == sorted(sizes, reverse=True)
        assert sizes[0] - sizes[-1] <= 1
        if count >= size * (size - 1):
            assert set(sizes) <= {size - 1, size} or size <= 3


@pytest.mark.parametrize(("count", "expected"), [(10, [4, 3, 3]), (13, [4, 3, 3, 3])])
def test_odd_player_counts_are_seated_at_valid_tables(count: int, expected: list[int]) -> None:
    log = created(count=count)
    log.apply(start_round(log.state, 7))
    seating = log.state.rounds[0].seating

    assert [len(table) for table in seating] == expected
    assert sorted(p for table in seating for p in table) == list(log.state.player_ids)


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        # seeds 1..t down, t..1 back, ...; full tables are skipped
        (12, [{1, 6, 7, 12}, {2, 5, 8, 11}, {3, 4, 9, 10}]),
        (10, [{1, 6, 7, 10}, {2, 5, 8}, {3, 4, 9}]),
    ],
)
def test_seeded_round_1_snakes_the_seed_order(count: int, expected: list[set[int]]) -> None:
    # Seed order is the reverse of the ids, so that seeds and ids differ.
    seed_order = [f"p{n:02d}" for n in range(count, 0, -1)]
    state = created(count=count, first_round="seeded", seed_order=seed_order).state

    seating = seat_round(state, 3)

    seeds = {player: seed for seed, player in enumerate(seed_order, start=1)}
    assert [{seeds[p] for p in table} for table in seating] == expected


def test_players_tied_on_everything_are_seated_in_the_seed_s_order() -> None:
    log = created(count=8)
    log.apply(start_round(log.state, 1))
    log.apply(assign_tables(log.state, ["a", "b"]))
    for table_id, table in zip(["a", "b"], log.state.rounds[0].seating, strict=True):
        log.apply(record_result(log.state, table_id, dict.fromkeys(table, 100), "bank"))

    first_tables = {frozenset(seat_round(log.state, seed)[0]) for seed in range(20)}

    assert len(first_tables) > 1


# --- scoring -----------------------------------------------------------------------------------


def test_tied_players_share_the_points_of_the_ranks_they_span() -> None:
    points = tuple(Fraction(p) for p in (4, 3, 2, 1))
    placings = place_table([("a", 90), ("b", 70), ("c", 70), ("d", 50)], (), points)

    assert [(p.player_id, p.rank, p.points) for p in placings] == [
        ("a", 1, 4),
        ("b", 2, Fraction(5, 2)),
        ("c", 2, Fraction(5, 2)),
        ("d", 4, 1),
    ]


def test_forfeiting_players_rank_last_whatever_their_net_worth() -> None:
    points = tuple(Fraction(p) for p in (4, 3, 2, 1))
    placings = place_table([("a", 900), ("b", 70), ("c", 800), ("d", 50)], {"a", "c"}, points)

    assert [(p.player_id, p.rank, p.points) for p in placings] == [
        ("b", 1, 4),
        ("d", 2, 3),
        ("a", 3, Fraction(3, 2)),
        ("c", 3, Fraction(3, 2)),
    ]


def test_default_rank_points_are_recorded_for_every_table_size() -> None:
    (_, payload), *_ = create("t", "T", "h", make_players(4), 4)

    assert payload["rank_points"] == {
        "2": [2, 1],
        "3": [3, 2, 1],
        "4": [4, 3, 2, 1],
        "5": [5, 4, 3, 2, 1],
        "6": [6, 5, 4, 3, 2, 1],
    }


def test_custom_rank_points_score_the_tables_of_their_size() -> None:
    log = created(count=7, rank_points={4: [10, 6, 3, 0], 3: [2.5, 1, 0.1]})
    log.apply(start_round(log.state, 5))
    log.apply(assign_tables(log.state, ["four", "three"]))
    four, three = log.state.rounds[0].seating
    log.apply(
        record_result(log.state, "four", dict(zip(four, [40, 30, 30, 10], strict=True)), "bank")
    )
    log.apply(record_result(log.state, "three", dict(zip(three, [9, 8, 7], strict=True)), "bank"))

    points = {s.player_id: s.points for s in standings(log.state)}

    assert [points[p] for p in four] == [10, Fraction(9, 2), Fraction(9, 2), 0]
    assert [points[p] for p in three] == [Fraction(5, 2), 1, Fraction(1, 10)]
    assert standings_module.format_points(Fraction(10, 3)) == "3.333"


# --- rejections --------------------------------------------------------------------------------


def players_and(*extra: Player) -> list[Player]:
    return [*make_players(4), *extra]


CREATE_REJECTIONS: list[tuple[str, dict[str, Any]]] = [
    ("MISSING_TOURNAMENT_ID", {"tournament_id": " "}),
    ("MISSING_PLAYER_ID", {"players": players_and(Player("", "Nobody"))}),
    ("MISSING_PLAYER_NAME", {"players": players_and(Player("p99", " "))}),
    ("DUPLICATE_PLAYER", {"players": players_and(Player("p01", "Another"))}),
    ("DUPLICATE_PLAYER", {"players": players_and(Player("p99", " player 1"))}),
    ("BAD_TABLE_SIZE", {"table_size": 1}),
    ("BAD_TABLE_SIZE", {"table_size": 7}),
    ("NOT_ENOUGH_PLAYERS", {"players": make_players(3)}),
    ("BAD_RANK_POINTS", {"rank_points": {7: [7, 6, 5, 4, 3, 2, 1]}}),
    ("BAD_RANK_POINTS", {"rank_points": {4: [3, 2, 1]}}),
    ("BAD_RANK_POINTS", {"rank_points": {3: [1, 2, 0]}}),
    ("BAD_RANK_POINTS", {"rank_points": {2: [True, False]}}),
    ("BAD_RANK_POINTS", {"rank_points": {2: [float("inf"), 0]}}),
    ("BAD_SEATING_METHOD", {"first_round": "alphabetical"}),
    ("BAD_SEED_ORDER", {"seed_order": ["p01", "p02", "p03", "p04"]}),
    ("BAD_SEED_ORDER", {"first_round": "seeded", "seed_order": ["p01", "p02", "p03"]}),
    ("BAD_SEED_ORDER", {"first_round": "seeded", "seed_order": ["p01", "p01", "p02", "p03"]}),
    ("PLAYER_UNKNOWN", {"first_round": "seeded", "seed_order": ["p01", "p02", "p03", "p99"]}),
    ("BAD_ROUND_COUNT", {"round_count": 0}),
]


@pytest.mark.parametrize(("reason", "changes"), CREATE_REJECTIONS)
def test_create_rejections(reason: str, changes: dict[str, Any]) -> None:
    request: dict[str, Any] = {
        "tournament_id": "t",
        "name": "T",
        "host_credential_hash": "h",
        "players": make_players(4),
        "table_size": 4,
    }
    refused = rejection(create, **(request | changes))

    assert (refused.reason, refused.kind) == (reason, Kind.INVALID_ARGUMENT)


def round_in_progress() -> Log:
    """8 players, round 1 at tables "a" and "b", with a result for "a" only."""
    log = created(count=8)
    log.apply(start_round(log.state, 1))
    log.apply(assign_tables(log.state, ["a", "b"]))
    log.apply(record_result(log.state, "a", seated_at(log, "a", 100), "bank"))
    return log


def seated_at(log: Log, table_id: str, net_worth: int) -> dict[str, int]:
    current = log.state.rounds[-1]
    slot = current.slot_of(table_id)
    assert slot is not None
    return dict.fromkeys(current.seating[slot], net_worth)


def finished_round() -> Log:
    log = round_in_progress()
    log.apply(record_result(log.state, "b", seated_at(log, "b", 100), "bank"))
    return log


def test_decisions_on_a_missing_tournament_are_not_found() -> None:
    empty = Tournament()
    for refused in (
        rejection(start_round, empty, 1),
        rejection(assign_tables, empty, ["a"]),
        rejection(record_result, empty, "a", {}, "bank"),
    ):
        assert (refused.reason, refused.kind) == ("TOURNAMENT_NOT_FOUND", Kind.NOT_FOUND)


def test_a_round_starts_only_after_the_previous_one_finished() -> None:
    log = created(count=8)
    log.apply(start_round(log.state, 1))
    assert rejection(start_round, log.state, 2).reason == "ROUND_NOT_FINISHED"

    log = round_in_progress()
    assert rejection(start_round, log.state, 2).reason == "ROUND_NOT_FINISHED"

    log = finished_round()
    assert start_round(log.state, 2)[0][0] == "RoundStarted"


def test_a_tournament_is_over_once_its_last_round_has_finished() -> None:
    log = finished_round()  # round 1 of 2
    log.state = dataclasses.replace(log.state, round_count=2)
    assert not log.state.finished
    log.apply(start_round(log.state, 2))
    log.apply(assign_tables(log.state, ["c", "d"]))
    log.apply(record_result(log.state, "c", seated_at(log, "c", 100), "bank"))
    assert not log.state.finished
    log.apply(record_result(log.state, "d", seated_at(log, "d", 100), "bank"))
    assert log.state.finished and tournament.in_progress(log.state) is None
    refused = rejection(start_round, log.state, 3)
    assert (refused.reason, refused.kind) == ("TOURNAMENT_OVER", Kind.FAILED_PRECONDITION)
    assert refused.details == {"rounds": "2"}


def test_a_tournament_recorded_without_a_length_never_ends() -> None:
    log = finished_round()
    log.state = dataclasses.replace(log.state, round_count=0)
    assert not log.state.finished
    assert start_round(log.state, 2)[0][0] == "RoundStarted"


def test_the_round_count_is_recorded_at_creation() -> None:
    log = created(count=8, round_count=2)
    assert log.events[0][1]["round_count"] == 2 and fold(log.events).round_count == 2


def test_a_round_is_in_progress_from_its_start_until_its_last_result() -> None:
    log = created(count=8)
    assert tournament.in_progress(log.state) is None
    log.apply(start_round(log.state, 1))
    assert tournament.in_progress(log.state) == log.state.rounds[0]  # no tables yet
    assert tournament.in_progress(round_in_progress().state) is not None
    assert tournament.in_progress(finished_round().state) is None


def test_a_round_s_table_ids_follow_from_the_round_as_recorded() -> None:
    """Every attempt at creating a round's tables names the same ones: derived from the
    tournament, the round's number and its seed, distinct from any other round's; once
    assigned, the assigned ones."""
    log = created(count=8)
    log.apply(start_round(log.state, 1))
    first = log.state.rounds[0]
    ids = tournament.round_table_ids(log.state, first)
    assert len(ids) == 2 and len(set(ids)) == 2
    assert all(re.fullmatch(r"t-[0-9a-f]{12}", table_id) for table_id in ids)
    assert tournament.round_table_ids(fold(log.events), first) == ids  # a replay, another process
    reseeded = Log()
    reseeded.apply(log.events[:1])
    reseeded.apply(start_round(reseeded.state, 2))
    other_seed = tournament.round_table_ids(reseeded.state, reseeded.state.rounds[0])
    assert set(other_seed) & set(ids) == set()
    log.apply(assign_tables(log.state, ids))
    for table_id in ids:
        log.apply(record_result(log.state, table_id, seated_at(log, table_id, 100), "bank"))
    log.apply(start_round(log.state, 1))  # round 2 with round 1's seed: other tables all the same
    second = tournament.round_table_ids(log.state, log.state.rounds[1])
    assert set(second) & set(ids) == set()
    assigned = finished_round().state
    assert tournament.round_table_ids(assigned, assigned.rounds[0]) == ("a", "b")


def test_assign_tables_rejections() -> None:
    fresh = created(count=8).state
    assert rejection(assign_tables, fresh, ["a", "b"]).reason == "ROUND_NOT_STARTED"

    log = round_in_progress()
    assert rejection(assign_tables, log.state, ["c", "d"]).reason == ("TABLES_ALREADY_ASSIGNED")

    log = created(count=8)
    log.apply(start_round(log.state, 1))
    for wrong in (["a"], ["a", "b", "c"], ["a", " "]):
        assert rejection(assign_tables, log.state, wrong).reason == "BAD_TABLE_ASSIGNMENT"
    assert rejection(assign_tables, log.state, ["a", "a"]).reason == "DUPLICATE_TABLE_ID"

    log = finished_round()
    log.apply(start_round(log.state, 2))
    refused = rejection(assign_tables, log.state, ["b", "c"])
    assert (refused.reason, refused.details["repeated"]) == ("DUPLICATE_TABLE_ID", "b")


def test_results_only_for_tables_of_the_current_round() -> None:
    log = created(count=8)
    assert rejection(record_result, log.state, "a", {}, "bank").reason == ("RESULT_UNKNOWN_TABLE")
    log.apply(start_round(log.state, 1))
    assert rejection(record_result, log.state, "a", {}, "bank").reason == ("RESULT_UNKNOWN_TABLE")

    log = round_in_progress()
    assert rejection(record_result, log.state, "zz", {}, "bank").reason == ("RESULT_UNKNOWN_TABLE")
    again = seated_at(log, "a", 100)
    assert rejection(record_result, log.state, "a", again, "bank").reason == (
        "RESULT_ALREADY_RECORDED"
    )

    log = finished_round()
    log.apply(start_round(log.state, 2))
    log.apply(assign_tables(log.state, ["c", "d"]))
    assert rejection(record_result, log.state, "a", {}, "bank").reason == ("RESULT_UNKNOWN_TABLE")


def test_result_rejections() -> None:
    log = round_in_progress()
    at_b = seated_at(log, "b", 100)
    at_a = seated_at(log, "a", 100)
    first, second, *_ = at_b
    cases: list[tuple[str, dict[str, int], str, tuple[str, ...]]] = [
        ("PLAYER_UNKNOWN", at_b | {"p99": 5}, "bank", ()),
        ("PLAYER_NOT_AT_TABLE", at_b | dict.fromkeys(list(at_a)[:1], 5), "bank", ()),
        ("MISSING_NET_WORTH", {p: 1 for p in at_b if p != first}, "bank", ()),
        ("BAD_END_REASON", at_b, "timeout", ()),
        ("BAD_FORFEIT", at_b, "forfeit", ()),
        ("BAD_FORFEIT", at_b, "bank", (first,)),
        ("BAD_FORFEIT", at_b, "forfeit", (first, first)),
        ("BAD_FORFEIT", at_b, "forfeit", (second, next(iter(at_a)))),
    ]
    for reason, net_worths, end, forfeited in cases:
        refused = rejection(record_result, log.state, "b", net_worths, end, forfeited)
        assert (refused.reason, refused.kind) == (reason, Kind.INVALID_ARGUMENT)


TESTED_ELSEWHERE = {
    "TOURNAMENT_NOT_FOUND",
    "ROUND_NOT_FINISHED",
    "TOURNAMENT_OVER",
    "ROUND_NOT_STARTED",
    "TABLES_ALREADY_ASSIGNED",
    "BAD_TABLE_ASSIGNMENT",
    "DUPLICATE_TABLE_ID",
    "RESULT_UNKNOWN_TABLE",
    "RESULT_ALREADY_RECORDED",
    "PLAYER_NOT_AT_TABLE",
    "MISSING_NET_WORTH",
    "BAD_END_REASON",
    "BAD_FORFEIT",
}


def test_every_rejection_reason_of_the_module_is_tested() -> None:
    source = inspect.getsource(tournament)
    raised = set(re.findall(r'Rejected\(\s*"([A-Z_]+)"', source))

    assert raised == {reason for reason, _ in CREATE_REJECTIONS} | TESTED_ELSEWHERE


def test_an_unknown_event_is_an_error_not_ignored() -> None:
    with pytest.raises(ValueError, match="TournamentRenamed"):
        evolve(created().state, ("TournamentRenamed", {"name": "x"}))
