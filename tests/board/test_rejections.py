"""One hand-made illegal lay or token per reason code, each next to the same move made legal
by changing only what the rule is about, so every case shows the rule is what refuses it."""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import services.rules.board
from kernel.reasons import REASON_CODES, ReasonCode
from services.rules.board import (
    Actor,
    Lay,
    LayOption,
    Position,
    Rejected,
    Rejection,
    Situation,
    TokenOption,
    apply_lay,
    apply_token,
    check_lay,
    check_token,
    initial_position,
    legal_lays,
    legal_tokens,
    load_title_from,
)
from services.rules.board.loader import TITLES_DIR
from tests.board.build import board

PLAYERS_HOLD_ALL = frozenset({"TR", "MF", "ER", "SMR", "DR", "SIR"})
PHASE_2 = Situation("2", PLAYERS_HOLD_ALL)
KO_RICH = Actor("KO", 1000)
#: KO at home on Takamatsu (K4), the usual start for these cases.
KO_HOME = board(tokens=[("KO", "K4")])
#: UR at home on Uwajima (B7), with track B7 → B5 → Yawatahama (B3) → Ohzu (C4).
UR_TO_C4 = board(lays=[("B5", "9", 3)], tokens=[("UR", "B7")])
AR_LOOP = board(
    lays=[("K8", "5", 2), ("K6", "9", 0), ("K6", "24", 0), ("J5", "3", 4)], tokens=[("AR", "K8")]
)


@dataclass(frozen=True)
class LayCase:
    reason: ReasonCode
    position: Position
    lay: Lay
    situation: Situation = PHASE_2
    actor: Actor = KO_RICH
    #: The same lay with the one thing changed that makes it legal (None: no such thing).
    legal: tuple[Position, Situation, Actor, Lay] | None = None


def _phase3(**holders: str) -> Situation:
    return Situation("3", PLAYERS_HOLD_ALL - set(holders), dict(holders))


LAY_CASES = [
    LayCase("HEX_NOT_ON_MAP", KO_HOME, Lay("K2", "8", 0)),
    LayCase("UNKNOWN_TILE", KO_HOME, Lay("J3", "99", 0)),
    LayCase("BAD_ROTATION", KO_HOME, Lay("J3", "8", 6)),
    LayCase(
        "ABILITY_NOT_AVAILABLE",
        KO_HOME,
        Lay("J5", "437", 0),
        actor=Actor(None, 0, ability="MF"),
        legal=(
            KO_HOME,
            Situation("2", PLAYERS_HOLD_ALL),
            Actor(None, 0, "MF"),
            Lay("J9", "437", 0),
        ),
    ),
    LayCase(
        "TILE_NEEDS_ABILITY",
        board(lays=[("K6", "8", 3)], tokens=[("KO", "K4")]),
        Lay("J5", "437", 2),
        legal=(KO_HOME, Situation("2", PLAYERS_HOLD_ALL), Actor("KO", 1000), Lay("J5", "58", 2)),
    ),
    LayCase(
        "HEX_BLOCKED_BY_PRIVATE",
        KO_HOME,
        Lay("K4", "440", 0),
        situation=_phase3(),
        legal=(KO_HOME, _phase3(TR="KO"), Actor("KO", 1000), Lay("K4", "440", 0)),
    ),
    LayCase("NOT_UPGRADEABLE", KO_HOME, Lay("B7", "15", 0), situation=_phase3()),
    LayCase("NOT_NEXT_COLOUR", KO_HOME, Lay("J3", "23", 0), situation=_phase3()),
    LayCase(
        "COLOUR_NOT_AVAILABLE",
        KO_HOME,
        Lay("K4", "440", 0),
        situation=Situation("2", frozenset(), {"TR": "KO"}),
        legal=(KO_HOME, _phase3(TR="KO"), Actor("KO", 1000), Lay("K4", "440", 0)),
    ),
    LayCase(
        "TILE_NOT_IN_SUPPLY",
        board(lays=[("K6", "7", 3), ("D3", "7", 0)], tokens=[("KO", "K4")]),
        Lay("J3", "7", 5),
        legal=(
            board(lays=[("K6", "7", 3)], tokens=[("KO", "K4")]),
            Situation("2", PLAYERS_HOLD_ALL),
            Actor("KO", 1000),
            Lay("J3", "7", 5),
        ),
    ),
    LayCase("LABEL_MISMATCH", board(tokens=[("SR", "I2")]), Lay("I4", "5", 0)),
    LayCase("CITY_TOWN_MISMATCH", KO_HOME, Lay("J5", "8", 1)),
    LayCase(
        "BREAKS_EXISTING_TRACK",
        UR_TO_C4,
        Lay("C4", "12", 3),
        situation=_phase3(ER="UR"),
        actor=Actor("UR", 1000),
        legal=(UR_TO_C4, _phase3(ER="UR"), Actor("UR", 1000), Lay("C4", "12", 0)),
    ),
    LayCase("TRACK_OFF_MAP", board(tokens=[("SR", "I2")]), Lay("H3", "9", 0)),
    LayCase(
        "TRACK_OFF_MAP",
        KO_HOME,
        Lay("J5", "58", 0),
        legal=(KO_HOME, Situation("2", PLAYERS_HOLD_ALL), Actor("KO", 1000), Lay("J5", "58", 2)),
    ),
    LayCase(
        "NOT_CONNECTED",
        KO_HOME,
        Lay("D3", "9", 1),
        legal=(
            board(tokens=[("UR", "B7")]),
            Situation("2", PLAYERS_HOLD_ALL),
            Actor("UR", 1000),
            Lay("B5", "9", 0),
        ),
    ),
    LayCase(
        "TERRAIN_COST_UNAFFORDABLE",
        KO_HOME,
        Lay("K6", "9", 0),
        actor=Actor("KO", 79),
        legal=(KO_HOME, Situation("2", PLAYERS_HOLD_ALL), Actor("KO", 80), Lay("K6", "9", 0)),
    ),
    LayCase("UNKNOWN_CORPORATION", KO_HOME, Lay("J3", "8", 0), actor=Actor("XX", 1000)),
    # AR at home on Kotohira (K8); K6 joins it to Takamatsu (K4) and to J5, joined to K4 too.
    # Tile 42 adds K6's K4-J5 side, which a trail round the loop reaches (8.3) but the site's
    # track walk does not (its switch, for the 18xx.games rules profile).
    LayCase(
        "NO_NEW_TRACK_WALKED",
        AR_LOOP,
        Lay("K6", "42", 3),
        situation=Situation("5", PLAYERS_HOLD_ALL, upgrade_must_use_new_track_or_change_city=True),
        actor=Actor("AR", 1000),
        legal=(AR_LOOP, Situation("5", PLAYERS_HOLD_ALL), Actor("AR", 1000), Lay("K6", "42", 3)),
    ),
]


@pytest.mark.parametrize("case", LAY_CASES, ids=[c.reason for c in LAY_CASES])
def test_illegal_lay(case: LayCase) -> None:
    result = check_lay(case.position, case.situation, case.actor, case.lay)
    assert isinstance(result, Rejection), result
    assert result.reason == case.reason
    if case.reason != "UNKNOWN_CORPORATION":
        assert case.lay.hex in result.message
        assert result.details["hex"] == case.lay.hex
    assert "rulebook" in result.message or case.reason in _SELF_EVIDENT
    listed = legal_lays(case.position, case.situation, case.actor)
    assert (case.lay.hex, case.lay.tile, case.lay.rotation) not in {
        (o.hex, o.tile, o.rotation) for o in listed
    }
    if case.legal is not None:
        position, situation, actor, lay = case.legal
        assert isinstance(check_lay(position, situation, actor, lay), LayOption)


_SELF_EVIDENT = {
    "HEX_NOT_ON_MAP",
    "UNKNOWN_TILE",
    "BAD_ROTATION",
    "UNKNOWN_CORPORATION",
    "NOT_UPGRADEABLE",
    "NOT_NEXT_COLOUR",
    "LABEL_MISMATCH",
    "CITY_TOWN_MISMATCH",
    "BREAKS_EXISTING_TRACK",
}


def test_tokens_not_preserved(tmp_path: Path) -> None:
    # No 1889 upgrade has fewer spots than the tile it replaces: a copy of the title whose
    # brown city tile 448 has a single spot shows the rule.
    shutil.copytree(TITLES_DIR / "1889", tmp_path / "1889")
    tiles = tmp_path / "1889" / "tiles.toml"
    text = tiles.read_text()
    tiles.write_text(
        text.replace(
            '[tile.448]\ncolour = "brown"\ncount = 4\ncities = [{ revenue = 40, spots = 2 }]',
            '[tile.448]\ncolour = "brown"\ncount = 4\ncities = [{ revenue = 40, spots = 1 }]',
        )
    )
    title = load_title_from(tmp_path / "1889")
    position = apply_lay(initial_position(title), "I2", "57", 1)
    position = apply_lay(position, "I2", "15", 4)
    position = apply_token(apply_token(position, "SR", "I2"), "AR", "I2")
    result = check_lay(position, Situation("5"), Actor("SR", 1000), Lay("I2", "448", 4))
    assert isinstance(result, Rejection)
    assert result.reason == "TOKENS_NOT_PRESERVED"
    assert "I2" in result.message
    with pytest.raises(Rejected) as raised:
        apply_lay(position, "I2", "448", 4)
    assert raised.value.rejection.reason == "TOKENS_NOT_PRESERVED"
    one_token = apply_token(
        apply_lay(apply_lay(initial_position(title), "I2", "57", 1), "I2", "15", 4), "SR", "I2"
    )
    accepted = check_lay(one_token, Situation("5"), Actor("SR", 1000), Lay("I2", "448", 4))
    assert isinstance(accepted, LayOption)


def _board_reasons() -> set[str]:
    """Every reason of the catalogue the board's code names."""
    return {
        node.value
        for path in Path(services.rules.board.__file__).parent.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value in REASON_CODES
    }


def test_every_lay_reason_has_a_case() -> None:
    token_only = {
        "NO_SUCH_CITY",
        "HOME_TOKEN_FIRST",
        "TOKEN_LIMIT",
        "TOKEN_ALREADY_IN_HEX",
        "CITY_FULL",
        "SPOT_RESERVED",
        "TOKEN_COST_UNAFFORDABLE",
    }
    covered = {c.reason for c in LAY_CASES} | {"TOKENS_NOT_PRESERVED"}
    covered |= {c.reason for c in TOKEN_CASES}
    assert covered | token_only == _board_reasons()
    assert {c.reason for c in TOKEN_CASES} >= token_only


@dataclass(frozen=True)
class TokenCase:
    reason: ReasonCode
    position: Position
    actor: Actor
    hex: str
    legal: tuple[Position, Actor, str] | None = field(default=None)


#: KO at home, with track K4 → K6 → K8 (Tokushima, AR's home, a 6 with one spot).
KO_TO_K8 = board(lays=[("K6", "9", 0), ("K8", "6", 1)], tokens=[("KO", "K4")])
#: KO at home, with track K4 → J3 → I4 (Kotohira, a 438 with one open spot).
KO_TO_I4 = board(lays=[("J3", "8", 5), ("I4", "438", 2)], tokens=[("KO", "K4")])

TOKEN_CASES = [
    TokenCase("UNKNOWN_CORPORATION", KO_HOME, Actor("XX", 100), "K4"),
    TokenCase("HEX_NOT_ON_MAP", KO_HOME, Actor("KO", 100), "A2"),
    TokenCase("NO_SUCH_CITY", KO_HOME, Actor("KO", 100), "J5"),
    TokenCase(
        "HOME_TOKEN_FIRST",
        board(),
        Actor("AR", 100),
        "E2",
        legal=(board(), Actor("AR", 100), "K8"),
    ),
    TokenCase(
        "TOKEN_LIMIT",
        board(lays=[("C8", "9", 0), ("C10", "57", 0)], tokens=[("KU", "C10"), ("UR", "B7")]),
        Actor("KU", 1000),
        "B7",
        legal=(
            board(lays=[("C8", "9", 0), ("C10", "57", 0)], tokens=[("UR", "C10"), ("KU", "B7")]),
            Actor("UR", 1000),
            "B7",
        ),
    ),
    TokenCase(
        "TOKEN_ALREADY_IN_HEX",
        board(lays=[("I2", "57", 0), ("I2", "15", 0)], tokens=[("SR", "I2")]),
        Actor("SR", 1000),
        "I2",
    ),
    TokenCase(
        "CITY_FULL",
        board(lays=[("J3", "8", 3), ("I2", "6", 4)], tokens=[("KO", "K4"), ("SR", "I2")]),
        Actor("KO", 1000),
        "I2",
    ),
    TokenCase(
        "SPOT_RESERVED",
        KO_TO_K8,
        Actor("KO", 1000),
        "K8",
        legal=(
            board(lays=[("K6", "9", 0), ("K8", "6", 1), ("K8", "15", 1)], tokens=[("KO", "K4")]),
            Actor("KO", 1000),
            "K8",
        ),
    ),
    TokenCase(
        "NOT_CONNECTED",
        KO_TO_I4,
        Actor("KO", 1000),
        "G4",
        legal=(KO_TO_I4, Actor("KO", 1000), "I4"),
    ),
    TokenCase(
        "TOKEN_COST_UNAFFORDABLE",
        KO_TO_I4,
        Actor("KO", 39),
        "I4",
        legal=(KO_TO_I4, Actor("KO", 40), "I4"),
    ),
]


@pytest.mark.parametrize("case", TOKEN_CASES, ids=[c.reason for c in TOKEN_CASES])
def test_illegal_token(case: TokenCase) -> None:
    result = check_token(case.position, case.actor, case.hex)
    assert isinstance(result, Rejection), result
    assert result.reason == case.reason
    if case.reason not in {"UNKNOWN_CORPORATION"}:
        assert case.hex in result.message
    assert (case.hex, 0) not in {(o.hex, o.city) for o in legal_tokens(case.position, case.actor)}
    if case.legal is not None:
        position, actor, hex_ = case.legal
        assert isinstance(check_token(position, actor, hex_), TokenOption)


def test_apply_refuses_what_cannot_happen() -> None:
    with pytest.raises(Rejected) as off_map:
        apply_lay(KO_HOME, "K2", "8", 0)
    assert off_map.value.rejection.reason == "HEX_NOT_ON_MAP"
    with pytest.raises(Rejected) as broken:
        apply_lay(KO_HOME, "K4", "466", 3)
    assert broken.value.rejection.reason == "NOT_NEXT_COLOUR"
    with pytest.raises(Rejected) as full:
        apply_token(KO_HOME, "SR", "K4")
    assert full.value.rejection.reason == "CITY_FULL"
