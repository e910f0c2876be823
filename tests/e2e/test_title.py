"""TitleService.GetTitle through the gateway of the real system: the printed map, tiles, market
and charters of 1889 as the facts sheet gives them (/work/shared/rules/1889-facts.md), open to
any caller with an API key."""

from __future__ import annotations

from collections import Counter

import grpc
import pytest

from shikoku.v1 import title_pb2, title_pb2_grpc
from shikoku_sdk.channel import keyed_channel
from tests.e2e.api import System, expect_error

pytestmark = pytest.mark.e2e

CITY = title_pb2.REVENUE_CENTRE_KIND_CITY
TOWN = title_pb2.REVENUE_CENTRE_KIND_TOWN
OFFBOARD = title_pb2.REVENUE_CENTRE_KIND_OFFBOARD


def ends(drawing: title_pb2.TrackDrawing) -> set[frozenset[str]]:
    """Each path as a set of ends: an edge as its number, a stop as C/T/O."""
    letter = {CITY: "C", TOWN: "T", OFFBOARD: "O"}

    def name(end: title_pb2.TrackEnd) -> str:
        if end.WhichOneof("end") == "edge":
            return str(end.edge)
        return letter[drawing.stops[end.stop].kind]

    return {frozenset((name(path.a), name(path.b))) for path in drawing.paths}


@pytest.fixture
def titles(system: System) -> title_pb2_grpc.TitleServiceStub:
    return title_pb2_grpc.TitleServiceStub(system.channel())


def test_the_map_is_the_printed_board(titles: title_pb2_grpc.TitleServiceStub) -> None:
    title = titles.GetTitle(title_pb2.GetTitleRequest(), timeout=10)
    assert title.name == "1889"
    assert title.layout == "flat"
    hexes = {h.coordinate: h for h in title.hexes}
    assert len(hexes) == len(title.hexes)
    k4 = hexes["K4"]
    assert (k4.name, k4.column, k4.row, k4.private_company) == ("Takamatsu", 10, 4, "TR")
    assert k4.printed.colour == "yellow"
    assert k4.printed.label == "T"
    assert [(s.kind, s.revenue, s.spots) for s in k4.printed.stops] == [(CITY, 30, 1)]
    assert ends(k4.printed) == {frozenset(("0", "C")), frozenset(("1", "C")), frozenset(("2", "C"))}
    assert hexes["I6"].printed.cost == 80
    assert list(hexes["I6"].printed.terrain) == ["mountain", "water"]
    assert hexes["G10"].port
    assert ends(hexes["J7"].printed) == {frozenset(("1", "5"))}
    imabari = hexes["F1"].printed
    assert imabari.colour == "red"
    assert dict(imabari.stops[0].revenue_by_level) == {"low": 30, "high": 60}
    assert dict(imabari.stops[0].revenue_by_train) == {"D": 100}
    # Columns, then rows: the order a client may draw them in.
    assert [h.coordinate for h in title.hexes][:3] == ["A8", "A10", "B3"]


def test_tiles_market_and_charters(titles: title_pb2_grpc.TitleServiceStub) -> None:
    title = titles.GetTitle(title_pb2.GetTitleRequest(title="1889"), timeout=10)
    tiles = {t.name: t for t in title.tiles}
    assert ends(tiles["57"].drawing) == {frozenset(("0", "C")), frozenset(("3", "C"))}
    assert ends(tiles["23"].drawing) == {frozenset(("0", "3")), frozenset(("0", "4"))}
    assert (tiles["8"].count, tiles["8"].beginner_extra) == (5, 1)
    assert tiles["437"].ability_only
    assert [(s.revenue, s.spots) for s in tiles["492"].drawing.stops] == [(80, 3)]
    assert Counter(t.drawing.colour for t in title.tiles) == {
        "yellow": 10,
        "green": 18,
        "brown": 12,
    }
    assert [len(row.spaces) for row in title.market] == [15, 15, 12, 10, 8, 7, 6, 5, 4, 4, 4]
    pars = sorted(s.price for row in title.market for s in row.spaces if s.par)
    assert pars == [65, 70, 75, 80, 90, 100]
    assert title.market[10].spaces[0].zone == title_pb2.MARKET_ZONE_ORANGE
    assert title.market[0].spaces[14].price == 350
    corporations = {c.id: c for c in title.corporations}
    assert (corporations["TR"].home, list(corporations["TR"].token_costs)) == ("F9", [0, 40, 40])
    assert [p.id for p in title.privates] == ["TR", "MF", "ER", "SMR", "DR", "SIR", "UTF"]
    assert [t.name for t in title.trains] == ["2", "3", "4", "5", "6", "D"]
    assert [(p.name, p.offboard) for p in title.phases][-1] == ("D", "high")
    assert list(title.upgrade_order) == ["white", "yellow", "green", "brown"]


def test_any_key_holder_may_read_it_and_an_unknown_title_is_not_found(system: System) -> None:
    anonymous = title_pb2_grpc.TitleServiceStub(grpc.insecure_channel(system.gateway))
    expect_error(
        lambda: anonymous.GetTitle(title_pb2.GetTitleRequest(), timeout=10),
        grpc.StatusCode.UNAUTHENTICATED,
        "MISSING_API_KEY",
    )
    keyed = title_pb2_grpc.TitleServiceStub(keyed_channel(system.gateway, system.api_key))
    expect_error(
        lambda: keyed.GetTitle(title_pb2.GetTitleRequest(title="../1889"), timeout=10),
        grpc.StatusCode.NOT_FOUND,
        "UNKNOWN_TITLE",
    )
