"""The one title loader (services/rules/board/loader.py): every file of a title's folder is
checked, each error names its file, line and entry; a title is built from its folder alone, so
a second, made-up title loads and plays on the same code."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import MappingProxyType

import pytest

from services.rules import board
from services.rules.board import BoardDataError, load_title, load_title_from
from services.rules.board.loader import TITLES_DIR
from services.rules.board.title import DEFAULT_PROFILE, UNLIMITED, Zone
from services.rules.domain import trains
from services.rules.domain.state import Corporation, GameState, Player
from services.rules.domain.stock_round import certificate_limit


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "1889"
    shutil.copytree(TITLES_DIR / "1889", target)
    return target


def _line(path: Path, header: str, occurrence: int = 1) -> int:
    """The line number of the `occurrence`-th line that starts with `header`."""
    found = [
        n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(header)
    ]
    return found[occurrence - 1]


# (file, old text, new text, the line the error points at (its start, which occurrence),
#  what the error says after "file:line ")
BAD_FILES = [
    ("board.toml", '["437"]', '["438x"]', ("[ability.MF]", 1), "[ability.MF]: unknown tile '438x'"),
    (
        "map.toml",
        'name = "Saijou"',
        'nmae = "Saijou"',
        ("[hex.F3]", 1),
        "[hex.F3]: unknown key 'nmae'",
    ),
    (
        "tiles.toml",
        'track = ["0-C", "3-C"]',
        'track = ["0-C", "7-C"]',
        ("[tile.57]", 1),
        "[tile.57]: track '7-C': edge 7 is not 0-5",
    ),
    (
        "corporations.toml",
        'home = "K8"',
        'home = "K10"',
        ("[corporation.AR]", 1),
        "[corporation.AR]: home 'K10' is not on the map",
    ),
    ("economy.toml", "bank = 7000", "bank = 0", ("bank =", 1), ": bank must be at least 1, not 0"),
    (
        "economy.toml",
        "[players.3]\nstarting_capital = 420",
        "[players.3]\nstarting_capital = -1",
        ("[players.3]", 1),
        "[players.3]: starting_capital must be at least 0, not -1",
    ),
    (
        "economy.toml",
        "lay_when_sold = true",
        'lay_when_sold = "yes"',
        ("[[privates]]", 3),
        "[[privates]] #3: lay_when_sold must be true or false",
    ),
    (
        "economy.toml",
        '"10o 20o 30o 40y"',
        '"10o 20o 30x 40y"',
        ("[market]", 1),
        "[market]: bad market space '30x' in row '10o 20o 30x 40y'",
    ),
    (
        "economy.toml",
        'rusts_on = "4"',
        'rusts_on = "9"',
        ("[[trains]]", 1),
        "[[trains]] #1: rusts_on '9' is not a phase",
    ),
    (
        "economy.toml",
        "count = 2\n",
        "count = 2\nwheels = 8\n",
        ("[[trains]]", 5),
        "[[trains]] #5: unknown key 'wheels'",
    ),
    (
        "economy.toml",
        "train_limit = 4",
        "train_limit = 0",
        ("[[phases]]", 1),
        "[[phases]] #1: train_limit must be at least 1, not 0",
    ),
    (
        "economy.toml",
        'phase = "5"\nrevenue = 50',
        'phase = "7"\nrevenue = 50',
        ("[private_revenue_from_phase.UTF]", 1),
        "[private_revenue_from_phase.UTF]: phase '7' is not a phase",
    ),
    (
        "profiles.toml",
        "closed_auction_lowest_bidder_acts = true",
        "closed_auction_lowest_bidder_acts = 1",
        ('[profile."18xx.games"]', 1),
        '[profile."18xx.games"]: closed_auction_lowest_bidder_acts must be true or false',
    ),
    (
        "profiles.toml",
        "bankrupt_cash_to_bank = true",
        "bankrupt_cash_to_bamk = true",
        ('[profile."18xx.games"]', 1),
        "[profile.\"18xx.games\"]: unknown key 'bankrupt_cash_to_bamk'",
    ),
    (
        "profiles.toml",
        "[profile.rulebook]\n",
        "[profile.rulebook]\nbankrupt_cash_to_bank = true\n",
        ("[profile.rulebook]", 1),
        "[profile.rulebook]: the rulebook profile turns a switch on",
    ),
    (
        "profiles.toml",
        'turn_steps = "18xx.games"',
        'turn_steps = "18xx"',
        ('[profile."18xx.games"]', 1),
        '[profile."18xx.games"]: turn_steps must be one of rulebook, 18xx.games',
    ),
]


@pytest.mark.parametrize(
    ("file", "old", "new", "at", "expected"),
    BAD_FILES,
    ids=[f"{case[0]}:{case[4].split(':')[0]}" for case in BAD_FILES],
)
def test_each_file_of_a_title_is_checked_with_its_line_in_the_error(
    tmp_path: Path, file: str, old: str, new: str, at: tuple[str, int], expected: str
) -> None:
    directory = _copy(tmp_path)
    path = directory / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(BoardDataError) as error:
        load_title_from(directory)
    line = _line(path, *at)
    separator = "" if expected.startswith(":") else " "
    assert str(error.value) == f"{file}:{line}{separator}{expected}"


def test_the_title_files_are_all_those_of_the_folder() -> None:
    """Each file is named in one error case above: the loader reads nothing unchecked."""
    assert {case[0] for case in BAD_FILES} == {p.name for p in (TITLES_DIR / "1889").iterdir()}


def test_a_title_is_loaded_once_per_process_and_read_only() -> None:
    title = load_title("1889")
    assert load_title("1889") is title
    assert isinstance(title.hexes, MappingProxyType)
    assert isinstance(title.profiles, MappingProxyType)
    with pytest.raises(TypeError):
        title.corporations["XX"] = title.corporations["AR"]  # type: ignore[index]


@pytest.mark.parametrize("name", ["1890", "../titles/1889", "", "1889/"])
def test_only_a_shipped_title_is_found_by_name(name: str) -> None:
    with pytest.raises(board.UnknownTitle):
        load_title(name)


# ---- a second title, made up: three map hexes and an off-board, other trains and phases ----

MINI = {
    "board.toml": """
layout = "flat"
upgrade_order = ["white", "yellow", "green"]
fixed_colours = ["red"]
""",
    "map.toml": """
[hex.A2]
name = "Alpha"
cities = [{ revenue = 0, spots = 1 }]

[hex.B3]

[hex.A4]
name = "Beta"
cities = [{ revenue = 0, spots = 1 }]
cost = 40
terrain = ["hill"]

[hex.C2]
colour = "red"
offboards = [{ revenue = { dim = 20, bright = 50 } }]
track = ["1-O"]
""",
    "tiles.toml": """
[tile.Y1]
colour = "yellow"
count = 2
cities = [{ revenue = 10, spots = 1 }]
track = ["0-C", "5-C"]

[tile.Y2]
colour = "yellow"
count = 3
track = ["2-4"]

[tile.G1]
colour = "green"
count = 1
cities = [{ revenue = 30, spots = 2 }]
track = ["0-C", "5-C"]
""",
    "corporations.toml": """
[corporation.NA]
name = "Northern Alpha"
home = "A2"
tokens = [0, 20]
""",
    "economy.toml": """
bank = 1000
min_players = 2
max_players = 3

[players.2]
starting_capital = 300
certificate_limit = 9
[players.3]
starting_capital = 200
certificate_limit = 7

[market]
rows = ["40y 50p 60 70", "30o 40y 50"]

[[trains]]
name = "1+1"
stops = 2
price = 50
count = 4
rusts_on = "late"

[[trains]]
name = "Express"
stops = 0
price = 400
count = -1

[[phases]]
name = "early"
on_train = "1+1"
tiles = ["yellow"]
train_limit = 3
offboard = "dim"
operating_rounds = 1

[[phases]]
name = "late"
on_train = "Express"
tiles = ["yellow", "green"]
train_limit = 1
offboard = "bright"
operating_rounds = 2
""",
}


def test_a_second_made_up_title_loads_and_plays_without_code_changes(tmp_path: Path) -> None:
    directory = tmp_path / "mini"
    directory.mkdir()
    for file, text in MINI.items():
        (directory / file).write_text(text)
    title = load_title_from(directory)

    assert title.name == "mini"
    assert set(title.hexes) == {"A2", "A4", "B3", "C2"}
    assert [(p.name, p.on_train, p.offboard) for p in title.phases] == [
        ("early", "1+1", "dim"),
        ("late", "Express", "bright"),
    ]
    assert [(t.name, t.count) for t in title.trains] == [("1+1", 4), ("Express", UNLIMITED)]
    assert title.market.par_positions() == {50: (0, 1)}
    assert title.market.space((1, 0)).zone is Zone.ORANGE
    assert title.privates == ()
    assert list(title.profiles) == [DEFAULT_PROFILE]
    assert title.by_player_count[3].certificate_limit == 7

    # The board rules play on it: in its first phase the only legal lays are its yellow city
    # tile on the home city (no track leads anywhere else yet); green comes with the phase its
    # second train starts.
    position = board.apply_token(board.initial_position(title), "NA", "A2")
    actor = board.Actor("NA", cash=100)
    early = board.legal_lays(position, board.Situation(phase="early"), actor)
    assert {(option.hex, option.tile) for option in early} == {("A2", "Y1")}
    on_home = board.apply_lay(position, "A2", "Y1", 0)
    late = board.legal_lays(on_home, board.Situation(phase="late"), actor)
    assert ("A2", "G1") in {(option.hex, option.tile) for option in late}
    assert {option.cost for option in late if option.hex == "A4"} == {40}  # its hill

    # The rules domain reads the title the game holds, never one looked up by name (no title
    # "mini" is shipped).
    state = GameState(
        title="mini",
        players=(Player(seat=1, name="Ann"), Player(seat=2, name="Ben")),
        corporations=(Corporation("NA"),),
        phase="early",
        depot=MappingProxyType({"1+1": 4, "Express": UNLIMITED}),
        board=position,
    )
    assert state.title_model is title
    assert trains.phase(state).train_limit == 3
    assert trains.depot_trains(state) == ["1+1"]
    assert state.rules.name == DEFAULT_PROFILE
    with pytest.raises(board.UnknownTitle):
        load_title("mini")
    assert certificate_limit(state) == 9
