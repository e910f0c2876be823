"""The public TitleService: a title's static data (map, tiles, market, charters, trains,
phases) as the rules play by it, for clients that draw games.

The answer is built once per title from the same loaded `Title` the rules play by
(services/rules/board/loader.py), so a client's drawing can never disagree with what the
rules accept.
"""

from __future__ import annotations

from functools import cache

from infra.grpc_server import Context
from kernel.rejection import Kind, Rejected, quoted
from services.rules.board import geometry, load_title, title_names
from services.rules.board.title import STOP, StopKind, Tile, Zone, is_edge
from shikoku.v1 import title_pb2, title_pb2_grpc

DEFAULT_TITLE = "1889"

_KINDS = {
    StopKind.CITY: title_pb2.REVENUE_CENTRE_KIND_CITY,
    StopKind.TOWN: title_pb2.REVENUE_CENTRE_KIND_TOWN,
    StopKind.OFFBOARD: title_pb2.REVENUE_CENTRE_KIND_OFFBOARD,
}
_ZONES = {
    Zone.NORMAL: title_pb2.MARKET_ZONE_NORMAL,
    Zone.YELLOW: title_pb2.MARKET_ZONE_YELLOW,
    Zone.ORANGE: title_pb2.MARKET_ZONE_ORANGE,
}


def _end(end: int) -> title_pb2.TrackEnd:
    return title_pb2.TrackEnd(edge=end) if is_edge(end) else title_pb2.TrackEnd(stop=end - STOP)


def drawing_to_proto(tile: Tile) -> title_pb2.TrackDrawing:
    return title_pb2.TrackDrawing(
        colour=tile.colour,
        stops=[
            title_pb2.RevenueCentre(
                kind=_KINDS[stop.kind],
                revenue=stop.revenue,
                spots=stop.spots,
                revenue_by_level=dict(stop.revenue_by_level),
                revenue_by_train=dict(stop.revenue_by_train),
            )
            for stop in tile.stops
        ],
        paths=[title_pb2.TrackPath(a=_end(a), b=_end(b)) for a, b in tile.paths],
        label=tile.label or "",
        cost=tile.cost,
        terrain=sorted(tile.terrain),
    )


def _hex_order(coordinate: str) -> tuple[int, int]:
    parsed = geometry.parse(coordinate)
    assert parsed is not None  # the loader refuses any other key
    return parsed


@cache
def title_to_proto(name: str) -> title_pb2.Title:
    """The whole TitleService answer for a title (built once; callers must not change it)."""
    title = load_title(name)
    hexes = []
    for coordinate in sorted(title.hexes, key=_hex_order):
        printed = title.hexes[coordinate]
        column, row = _hex_order(coordinate)
        hexes.append(
            title_pb2.MapHex(
                coordinate=coordinate,
                column=column,
                row=row,
                name=printed.name,
                printed=drawing_to_proto(printed.printed),
                port=printed.port,
                private_company=printed.private or "",
            )
        )
    return title_pb2.Title(
        name=name,
        layout="flat",
        hexes=hexes,
        tiles=[
            title_pb2.TrackTile(
                name=tile.name,
                drawing=drawing_to_proto(tile),
                count=title.counts.get(tile.name, 0),
                beginner_extra=title.beginner_extra.get(tile.name, 0),
                ability_only=tile.ability_only,
            )
            for tile in title.tiles.values()
        ],
        market=[
            title_pb2.MarketRow(
                spaces=[
                    title_pb2.MarketSpace(price=space.price, par=space.par, zone=_ZONES[space.zone])
                    for space in row
                ]
            )
            for row in title.market.rows
        ],
        corporations=[
            title_pb2.CorporationCharter(
                id=corporation.id,
                name=corporation.name,
                home=corporation.home,
                home_city=corporation.home_city,
                token_costs=list(corporation.token_costs),
            )
            for corporation in title.corporations.values()
        ],
        privates=[
            title_pb2.PrivateCompanyCharter(
                id=company.id,
                letter=company.letter,
                name=company.name,
                face_value=company.face_value,
                revenue=company.revenue,
                min_players=company.min_players,
            )
            for company in title.privates
        ],
        trains=[
            title_pb2.TrainType(
                name=train.name,
                stops=train.stops,
                price=train.price,
                count=train.count,
                rusts_on=train.rusts_on,
            )
            for train in title.trains
        ],
        phases=[
            title_pb2.PhaseRules(
                name=phase.name,
                on_train=phase.on_train,
                tiles=list(phase.tiles),
                train_limit=phase.train_limit,
                offboard=phase.offboard,
                operating_rounds=phase.operating_rounds,
            )
            for phase in title.phases
        ],
        upgrade_order=list(title.upgrade_order),
        fixed_colours=sorted(title.fixed_colours),
    )


class TitleServicer(title_pb2_grpc.TitleServiceServicer):
    def __init__(self) -> None:
        self._known = title_names()

    async def GetTitle(
        self, request: title_pb2.GetTitleRequest, context: Context
    ) -> title_pb2.Title:
        name = request.title or DEFAULT_TITLE
        if name not in self._known:
            raise Rejected(
                "UNKNOWN_TITLE",
                f"there is no title {quoted(name)!r} (known: {', '.join(sorted(self._known))})",
                Kind.NOT_FOUND,
                {"field": "title", "title": quoted(name)},
            )
        return title_to_proto(name)
