"""The 1889 board data as loaded, the geometry, and the loader's errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from services.rules.board import BoardDataError, geometry, load_title, load_title_from
from services.rules.board.layout import layout_of
from services.rules.board.loader import TITLES_DIR
from services.rules.board.title import StopKind

#: Facts sheet, "Track tiles": how many of each.
TILE_COUNTS = {
    "3": 2, "5": 2, "6": 2, "7": 2, "8": 5, "9": 5, "57": 2, "58": 3, "437": 1, "438": 1,
    "12": 1, "13": 1, "14": 1, "15": 3, "205": 1, "206": 1, "16": 1, "19": 1, "20": 1,
    "23": 2, "24": 2, "25": 1, "26": 1, "27": 1, "28": 1, "29": 1, "439": 1, "440": 1,
    "39": 1, "40": 1, "41": 1, "42": 1, "45": 1, "46": 1, "47": 1, "448": 4, "611": 2,
    "465": 1, "466": 1, "492": 1,
}  # fmt: skip


def test_the_printed_board() -> None:
    title = load_title("1889")
    assert len(title.hexes) == 52
    cities = {c for c, h in title.hexes.items() if h.printed.city_indices()}
    assert cities == {
        "F3", "G4", "H7", "A10", "J11", "G12", "E2", "I2", "K8", "C10", "I4", "C4", "K4",
        "F9", "B7",
    }  # fmt: skip
    ports = {c for c, h in title.hexes.items() if h.port}
    assert ports == {"B11", "G10", "I12", "J9"}
    offboards = {
        c
        for c, h in title.hexes.items()
        if any(s.kind is StopKind.OFFBOARD for s in h.printed.stops)
    }
    assert offboards == {"F1", "J1", "L7"}
    imabari = title.hexes["F1"].printed.stops[0]
    assert imabari.revenue_by_level == {"low": 30, "high": 60}
    assert imabari.revenue_by_train == {"D": 100}
    assert {c: h.private for c, h in title.hexes.items() if h.private} == {"K4": "TR", "C4": "ER"}
    assert {c: h.printed.label for c, h in title.hexes.items() if h.printed.label} == {
        "I4": "H",
        "K4": "T",
        "F9": "K",
    }
    mountains = {c for c, h in title.hexes.items() if h.printed.terrain == {"mountain"}}
    assert len(mountains) == 14
    assert title.hexes["H5"].printed.terrain == {"water", "mountain"}
    assert title.hexes["F9"].printed.cost == 80


def test_the_manifest_and_the_charters() -> None:
    title = load_title("1889")
    assert dict(title.counts) == TILE_COUNTS
    assert dict(title.beginner_extra) == {"6": 2, "7": 1, "8": 1, "9": 1, "23": 1, "24": 1, "57": 1}
    tokens = {c.id: c.token_costs for c in title.corporations.values()}
    assert tokens == {
        "AR": (0, 40), "IR": (0, 40), "SR": (0, 40), "KO": (0, 40),
        "TR": (0, 40, 40), "KU": (0,), "UR": (0, 40, 40),
    }  # fmt: skip
    homes = {c.id: c.home for c in title.corporations.values()}
    assert homes == {
        "AR": "K8", "IR": "E2", "SR": "I2", "KO": "K4", "TR": "F9", "KU": "C10", "UR": "B7",
    }  # fmt: skip
    assert {name: sorted(p.tiles) for name, p in ((p.name, p) for p in title.phases)} == {
        "2": ["yellow"],
        "3": ["green", "yellow"],
        "4": ["green", "yellow"],
        "5": ["brown", "green", "yellow"],
        "6": ["brown", "green", "yellow"],
        "D": ["brown", "green", "yellow"],
    }


def test_neighbours_follow_the_facts_sheet() -> None:
    assert [geometry.neighbour("K8", edge) for edge in range(6)] == [
        "K10", "J9", "J7", "K6", "L7", "L9",
    ]  # fmt: skip
    assert geometry.neighbour("A8", 1) is None
    assert geometry.neighbour("B3", 3) == "B1"
    assert geometry.parse("AA12") == (26, 12)
    assert geometry.name(26, 12) == "AA12"
    assert geometry.parse("k8") is None and geometry.parse("K0") is None
    assert [geometry.rotate(edge, 4) for edge in range(6)] == [4, 5, 0, 1, 2, 3]


def test_where_new_track_may_end() -> None:
    layout = layout_of(load_title("1889"))
    open_edges = {
        c: {e for e in range(6) if mask >> e & 1} for c, mask in layout.open_edges.items()
    }
    assert open_edges["D3"] == {0, 1, 4, 5}  # D1 and C2 are off the map
    assert 0 not in open_edges["J5"]  # J7 is gray, with no track towards J5
    assert 2 in open_edges["C4"]  # Yawatahama's gray track comes to Ohzu
    assert open_edges["H3"] == {0, 1, 4, 5}
    assert layout.side_names[layout.side_ids[("K6", 0)]] == "K6|K8"
    assert layout.side_ids[("K6", 0)] == layout.side_ids[("K8", 3)]


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "1889"
    shutil.copytree(TITLES_DIR / "1889", target)
    return target


def _edit(directory: Path, file: str, old: str, new: str) -> None:
    path = directory / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("file", "old", "new", "expected"),
    [
        ("map.toml", "[hex.I10]\n", "[hex.I10]\n[hex.I10]\n", "map.toml: Cannot declare"),
        (
            "tiles.toml",
            'extra = { "6" = 2',
            'extra = { "66" = 2',
            "tiles.toml:{line} [beginner]: extra names unknown tile '66'",
        ),
        (
            "tiles.toml",
            'track = ["0-C", "3-C"]',
            'track = ["0-C", "7-C"]',
            "tiles.toml:{line} [tile.57]: track '7-C': edge 7 is not 0-5",
        ),
        (
            "tiles.toml",
            'track = ["0-C", "3-C"]',
            'track = ["0-C", "3-C1"]',
            "[tile.57]: track '3-C1': there is no city 'C1' on it",
        ),
        ("tiles.toml", 'colour = "yellow"\ncount = 5', 'colour = "yelow"\ncount = 5', "[tile.8]"),
        ("map.toml", "[hex.D3]", "[hex.D4]", "map.toml"),
        ("map.toml", 'name = "Saijou"', 'nmae = "Saijou"', "[hex.F3]: unknown key 'nmae'"),
        ("map.toml", "[hex.J7]", "[hex.J7x]", "[hex.J7x]: 'J7x' is not a coordinate"),
        (
            "map.toml",
            "revenue = { low = 30, high = 60 }",
            "revenue = { low = 30 }",
            "[hex.F1]: off-board revenue has no 'high' value",
        ),
        ("map.toml", "[hex.J1]\n", "[hex.X1]\n", "map.toml:{line} [hex.X1]: printed track leaves"),
        (
            "corporations.toml",
            'home = "K8"',
            'home = "K10"',
            "corporations.toml:{line} [corporation.AR]: home 'K10' is not on the map",
        ),
        ("corporations.toml", "tokens = [0]", "tokens = []", "[corporation.KU]: tokens must"),
        ("board.toml", 'tiles = ["437"]', 'tiles = ["438x"]', "[ability.MF]: unknown tile '438x'"),
        ("board.toml", 'layout = "flat"', 'layout = "pointy"', "board.toml: layout 'pointy'"),
        (
            "economy.toml",
            'on_train = "3"\ntiles = ["yellow", "green"]',
            'on_train = "3"\ntiles = ["yellow", "grene"]',
            "economy.toml:{line} [[phases]] #2: tile colour 'grene' is not in board.toml",
        ),
    ],
)
def test_loader_errors_name_the_file_and_entry(
    tmp_path: Path, file: str, old: str, new: str, expected: str
) -> None:
    directory = _copy(tmp_path)
    _edit(directory, file, old, new)
    with pytest.raises(BoardDataError) as error:
        load_title_from(directory)
    if "{line}" in expected:
        lines = (directory / file).read_text().splitlines()
        entry = expected[expected.index("[") : expected.index("]") + 1]
        if entry == "[[phases]":
            ordinal = int(expected.split("#")[1].split(":")[0])
            headers = [n for n, line in enumerate(lines, 1) if line == "[[phases]]"]
            expected = expected.format(line=headers[ordinal - 1])
        else:
            expected = expected.format(line=lines.index(entry) + 1)
    assert expected in str(error.value)


def test_a_copy_of_the_data_loads_as_another_title(tmp_path: Path) -> None:
    directory = tmp_path / "1889-copy"
    shutil.copytree(TITLES_DIR / "1889", directory)
    title = load_title_from(directory)
    assert title.name == "1889-copy"
    assert title is not load_title("1889")
    assert set(title.hexes) == set(load_title("1889").hexes)
