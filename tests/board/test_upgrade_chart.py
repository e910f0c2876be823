"""The upgrade chart computed from the tile drawings against the rulebook's chart (16)."""

from __future__ import annotations

from services.rules.board import Title, load_title, upgrade_chart

#: Rulebook 16, "Legal Upgrades", row by row as printed. The second row printed "23" is tile
#: 24 (its upgrades are 24's). Printed hexes are named by their coordinates: Kotohira for
#: "City hex (station spot)", an example of each plain, single-circle city, town and port
#: hex, Takamatsu for the "special red-icon hex" and Kouchi for the "special green hex".
PRINTED_CHART: dict[str, set[str]] = {
    "I4": {"438"},
    "D3": {"7", "8", "9"},
    "E2": {"5", "6", "57"},
    "J5": {"3", "58"},
    "B11": {"437"},
    "3": set(),
    "5": {"12", "14", "15", "205", "206"},
    "6": {"12", "13", "14", "15", "205", "206"},
    "7": {"26", "27", "28", "29"},
    "8": {"16", "19", "23", "24", "28", "29"},
    "9": {"19", "20", "23", "24", "26", "27"},
    "57": {"14", "15"},
    "58": set(),
    "437": set(),
    "438": {"439"},
    "K4": {"440"},
    "12": {"448", "611"},
    "13": {"611"},
    "14": {"611"},
    "15": {"448", "611"},
    "16": set(),
    "19": {"45", "46"},
    "20": {"47"},
    "23": {"41", "45", "47"},
    "24": {"42", "46", "47"},
    "25": {"40", "45", "46"},
    "26": {"42", "45"},
    "27": {"41", "46"},
    "28": {"46"},
    "29": {"45"},
    "205": {"448", "611"},
    "206": {"448", "611"},
    "439": {"492"},
    "440": {"466"},
    "F9": {"465"},
    "39": set(),
    "40": set(),
    "41": set(),
    "42": set(),
    "45": set(),
    "46": set(),
    "47": set(),
    "448": set(),
    "465": set(),
    "466": set(),
    "492": set(),
    "611": set(),
}

#: Where the drawings allow more than the printed chart, and why the drawings are kept:
#: - a port hex is also a town hex: 3 and 58 go there by the ordinary rules (game 314,
#:   action 349, lays 58 on the port Nangoku, G10); 437 needs the MF ability (board.toml);
#: - 8 → 25: with the printed chart nothing could ever become 25 (nor then 40), though both
#:   are in the manifest; 25's two gentle curves each keep 8's;
#: - 28 → 39 and 29 → 39: likewise nothing could become 39; 39's curves contain 28's and
#:   29's (28 turned twice, 29 as drawn);
#: - 57 → 205 and 57 → 206: both keep 57's straight city track; game 314, action 454, lays
#:   206 over 57 on Nahari (G12).
DRAWINGS_ALLOW_MORE = {
    "B11": {"3", "58"},
    "8": {"25"},
    "28": {"39"},
    "29": {"39"},
    "57": {"205", "206"},
}


def test_computed_chart_is_the_printed_chart_with_the_known_differences() -> None:
    computed = upgrade_chart(load_title("1889"))
    for old, printed in PRINTED_CHART.items():
        expected = printed | DRAWINGS_ALLOW_MORE.get(old, set())
        assert computed[old] == expected, old


#: Printed hexes the chart has no row for: Ohzu's yellow city with one track edge takes
#: every green single-city tile (game 314, action 151, lays 13 there).
NOT_IN_THE_PRINTED_CHART = {"C4": {"12", "13", "14", "15", "205", "206"}}


def test_every_tile_and_printed_hex_is_covered() -> None:
    title = load_title("1889")
    computed = upgrade_chart(title)
    assert set(title.tiles) <= set(PRINTED_CHART)
    for coordinate in NOT_IN_THE_PRINTED_CHART:
        assert computed[coordinate] == NOT_IN_THE_PRINTED_CHART[coordinate]
    # Every other printed hex upgrades like the chart's example of its kind.
    examples = [c for c in PRINTED_CHART if c in title.hexes]
    for coordinate, hex_ in title.hexes.items():
        if coordinate in NOT_IN_THE_PRINTED_CHART or coordinate in examples:
            continue
        if hex_.printed.colour in title.fixed_colours:
            assert computed[coordinate] == frozenset(), coordinate
            continue
        same_kind = [e for e in examples if _kind(title, e) == _kind(title, coordinate)]
        assert same_kind, coordinate
        assert computed[coordinate] == computed[same_kind[0]], coordinate


def test_every_tile_can_reach_the_board() -> None:
    title = load_title("1889")
    computed = upgrade_chart(title)
    reachable = set().union(*computed.values())
    assert reachable == set(title.tiles)


def _kind(title: Title, coordinate: str) -> tuple[object, ...]:
    hex_ = title.hexes[coordinate]
    tile = hex_.printed
    stops = tuple(sorted(s.kind for s in tile.stops))
    return (tile.colour, stops, tile.label, tile.paths, hex_.port)
