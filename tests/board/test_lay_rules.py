"""The lay and upgrade rules of 8.3 and the private companies of 15, case by case."""

from __future__ import annotations

from services.rules.board import (
    Actor,
    Lay,
    LayOption,
    Position,
    Rejection,
    Situation,
    apply_lay,
    check_lay,
    initial_position,
    legal_lays,
    load_title,
)
from tests.board.build import board

ALL_WITH_PLAYERS = frozenset({"TR", "MF", "ER", "SMR", "DR", "SIR"})


def _tiles_on(position: Position, situation: Situation, actor: Actor, hex_: str) -> set[str]:
    return {o.tile for o in legal_lays(position, situation, actor) if o.hex == hex_}


def _lay(position: Position, situation: Situation, actor: Actor, lay: Lay) -> LayOption | Rejection:
    return check_lay(position, situation, actor, lay)


def test_yellow_on_a_plain_hex_is_7_8_or_9() -> None:
    position = board(tokens=[("KO", "K4")])
    assert _tiles_on(position, Situation("2"), Actor("KO", 0), "J3") == {"7", "8", "9"}


def test_yellow_on_a_city_is_5_6_or_57_and_on_a_town_3_or_58() -> None:
    # IR's home, with no track yet: the home hex needs no connection.
    position = board()
    assert _tiles_on(position, Situation("2"), Actor("IR", 0), "E2") == {"5", "6", "57"}
    ko = board(tokens=[("KO", "K4")])
    assert _tiles_on(ko, Situation("2"), Actor("KO", 0), "J5") == {"3", "58"}


def test_kotohira_takes_438_then_439_then_492_and_pays_each_time() -> None:
    sr = Actor("SR", 1000)
    position = board(lays=[("I2", "6", 4)], tokens=[("SR", "I2")])
    assert _tiles_on(position, Situation("2"), sr, "I4") == {"438"}
    position = board(lays=[("I2", "6", 4), ("I4", "438", 3)], tokens=[("SR", "I2")])
    assert _tiles_on(position, Situation("3"), sr, "I4") == {"439"}
    assert _tiles_on(position, Situation("2"), sr, "I4") == set()
    position = board(
        lays=[("I2", "6", 4), ("I4", "438", 3), ("I4", "439", 1)], tokens=[("SR", "I2")]
    )
    assert _tiles_on(position, Situation("5"), sr, "I4") == {"492"}
    assert {o.cost for o in legal_lays(position, Situation("5"), sr) if o.hex == "I4"} == {80}


def test_takamatsu_takes_440_then_466_once_tr_is_not_with_a_player() -> None:
    ko = Actor("KO", 0)
    position = board(tokens=[("KO", "K4")])
    assert _tiles_on(position, Situation("3", ALL_WITH_PLAYERS), ko, "K4") == set()
    free = Situation("3", ALL_WITH_PLAYERS - {"TR"}, {"TR": "KO"})
    assert _tiles_on(position, free, ko, "K4") == {"440"}
    position = board(lays=[("K4", "440", 0)], tokens=[("KO", "K4")])
    assert _tiles_on(position, Situation("5"), ko, "K4") == {"466"}


def test_kouchi_takes_465_in_brown_phases() -> None:
    position = board(tokens=[("TR", "F9")])
    tr = Actor("TR", 80)
    assert _tiles_on(position, Situation("4"), tr, "F9") == set()
    options = [o for o in legal_lays(position, Situation("5"), tr) if o.hex == "F9"]
    assert {(o.tile, o.rotation, o.cost, o.upgrade) for o in options} == {("465", 2, 80, True)}


def test_ohzu_is_restricted_while_er_is_with_a_player() -> None:
    position = board(lays=[("B5", "9", 3)], tokens=[("UR", "B7")])
    ur = Actor("UR", 0)
    blocked = _lay(position, Situation("3", ALL_WITH_PLAYERS), ur, Lay("C4", "13", 2))
    assert isinstance(blocked, Rejection) and blocked.reason == "HEX_BLOCKED_BY_PRIVATE"
    sold = Situation("3", ALL_WITH_PLAYERS - {"ER"}, {"ER": "SR"})
    assert isinstance(_lay(position, sold, ur, Lay("C4", "13", 2)), LayOption)


def test_er_ability_upgrades_ohzu_without_connection() -> None:
    # ER has just been sold to SR, which has no track near Ohzu.
    position = board(tokens=[("SR", "I2")])
    sold = Situation("3", ALL_WITH_PLAYERS - {"ER"}, {"ER": "SR"})
    options = legal_lays(position, sold, Actor(None, 0, ability="ER"))
    assert {o.hex for o in options} == {"C4"}
    assert {o.tile for o in options} == {"12", "13", "14", "15", "205", "206"}
    with_player = legal_lays(position, Situation("3", ALL_WITH_PLAYERS), Actor(None, 0, "ER"))
    assert with_player == ()


def test_mf_lays_the_port_tile_on_a_coastal_town_without_connection() -> None:
    position = board()
    mf = Actor(None, 0, ability="MF")
    options = legal_lays(position, Situation("2", ALL_WITH_PLAYERS), mf)
    assert {o.tile for o in options} == {"437"}
    assert {o.hex for o in options} == {"B11", "G10", "I12", "J9"}
    # Only rotations that keep the track on the map: Nakamura (B11) has neighbours across
    # edges 2, 3 and 4 only, and the port tile's track bends by two edges.
    assert {o.rotation for o in options if o.hex == "B11"} == {2}
    held_by_corporation = Situation("2", ALL_WITH_PLAYERS - {"MF"}, {"MF": "KO"})
    refused = _lay(position, held_by_corporation, mf, Lay("G10", "437", 0))
    assert isinstance(refused, Rejection) and refused.reason == "ABILITY_NOT_AVAILABLE"
    by_corporation = _lay(
        board(tokens=[("TR", "F9")]), Situation("2"), Actor("TR", 0), Lay("G10", "437", 0)
    )
    assert isinstance(by_corporation, Rejection)
    assert by_corporation.reason == "TILE_NEEDS_ABILITY"


def test_smr_frees_mountain_only_hexes_for_its_corporation() -> None:
    ur_home = board(tokens=[("UR", "B7")])
    with_smr = Situation("2", ALL_WITH_PLAYERS - {"SMR"}, {"SMR": "UR"})
    without = Situation("2", ALL_WITH_PLAYERS)
    lay = Lay("A8", "7", 4)  # mountain, joined to Uwajima
    assert _cost(ur_home, with_smr, Actor("UR", 0), lay) == 0
    assert _cost(ur_home, without, Actor("UR", 80), lay) == 80
    broke = _lay(ur_home, without, Actor("UR", 79), lay)
    assert isinstance(broke, Rejection) and broke.reason == "TERRAIN_COST_UNAFFORDABLE"
    # Another corporation holding SMR does not help UR.
    other = Situation("2", ALL_WITH_PLAYERS - {"SMR"}, {"SMR": "KO"})
    assert _cost(ur_home, other, Actor("UR", 80), lay) == 80
    # H5 is water and mountain; Kotohira's ¥80 is no mountain icon: both cost SR ¥80.
    sr = board(lays=[("I4", "438", 1)], tokens=[("SR", "I4")])
    sr_smr = Situation("3", ALL_WITH_PLAYERS - {"SMR"}, {"SMR": "SR"})
    assert _cost(sr, sr_smr, Actor("SR", 80), Lay("H5", "7", 4)) == 80
    assert _cost(sr, sr_smr, Actor("SR", 80), Lay("I4", "439", 1)) == 80


def test_river_is_paid_once_the_tile_covering_it_is_free_to_upgrade() -> None:
    ko = Actor("KO", 0)
    first = _lay(board(tokens=[("KO", "K4")]), Situation("2"), Actor("KO", 80), Lay("K6", "8", 3))
    assert isinstance(first, LayOption) and first.cost == 80
    upgraded = board(lays=[("K6", "8", 3)], tokens=[("KO", "K4")])
    assert _cost(upgraded, Situation("3"), ko, Lay("K6", "24", 3)) == 0


def test_an_upgrade_must_add_connected_track_not_just_touch_connected_track() -> None:
    # J3 carries KO's straight K4 → Marugame (I2) side; 23 adds one branch at a junction.
    position = board(lays=[("J3", "9", 2)], tokens=[("KO", "K4")])
    away = _lay(position, Situation("3"), Actor("KO", 0), Lay("J3", "23", 2))
    assert isinstance(away, Rejection) and away.reason == "NOT_CONNECTED"
    # Rotated so that the new branch leaves from the edge KO arrives by: connected.
    towards = _lay(position, Situation("3"), Actor("KO", 0), Lay("J3", "23", 5))
    assert isinstance(towards, LayOption)


def test_raising_a_connected_city_is_enough() -> None:
    # Marugame (I2) is full with SR's token, so KO's trail ends there and cannot follow new
    # track out of it; but the upgrade raises a city KO reaches.
    position = board(lays=[("J3", "9", 2), ("I2", "5", 5)], tokens=[("KO", "K4"), ("SR", "I2")])
    result = _lay(position, Situation("3"), Actor("KO", 0), Lay("I2", "12", 5))
    assert isinstance(result, LayOption)


def test_beginner_game_adds_tiles_and_lifts_the_private_restrictions() -> None:
    title = load_title("1889")
    plain, beginner = initial_position(title), initial_position(title, beginner=True)
    assert beginner.supply["6"] == plain.supply["6"] + 2
    assert beginner.supply["23"] == plain.supply["23"] + 1
    assert sum(beginner.supply.values()) == sum(plain.supply.values()) + 8
    position = board(tokens=[("KO", "K4")], beginner=True)
    situation = Situation("3", ALL_WITH_PLAYERS, beginner=True)
    assert isinstance(_lay(position, situation, Actor("KO", 0), Lay("K4", "440", 0)), LayOption)


def test_a_tile_back_from_an_upgrade_can_be_laid_again() -> None:
    position = board(
        lays=[("J3", "8", 3), ("K6", "8", 3), ("C8", "8", 0), ("D3", "8", 1), ("E8", "8", 5)]
    )
    assert position.supply["8"] == 0
    after = apply_lay(position, "J3", "23", 5)
    assert after.supply["8"] == 1 and after.supply["23"] == 1
    assert after.tiles["J3"].tile == "23"
    assert position.tiles["J3"].tile == "8"  # the old position is unchanged


def _cost(position: Position, situation: Situation, actor: Actor, lay: Lay) -> int:
    result = _lay(position, situation, actor, lay)
    assert isinstance(result, LayOption), result
    return result.cost
