"""The public TitleService: a title's static data (map, tiles, market, charters, trains,
phases) as the rules play by it, for clients that draw games.

The answer is built once per title from the same loaded data the rules use
(services/rules/board for the board, services/rules/domain for the economy), so a client's
drawing can never disagree with what the rules accept.
"""

from __future__ import annotations

from functools import cache

from infra.grpc_server import Context
from infra.rejection import Kind, Rejected, quoted
from services.rules.board import geometry
from services.rules.board.loader import TITLES_DIR
from services.rules.board.loader import load_title as load_board
from services.rules.board.title import STOP, StopKind, Tile, is_edge
from services.rules.domain.market import Zone, load_market
from services.rules.domain.title import load_title as load_economy
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


def known_titles() -> frozenset[str]:
    """The titles shipped with the rules: the folders of services/rules/titles/."""
    return frozenset(path.name for path in TITLES_DIR.iterdir() if (path / "board.toml").is_file())


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
    board = load_board(name)
    economy = load_economy(name)
    market = load_market(name)
    hexes = []
    for coordinate in sorted(board.hexes, key=_hex_order):
        printed = board.hexes[coordinate]
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
                count=board.counts.get(tile.name, 0),
                beginner_extra=board.beginner_extra.get(tile.name, 0),
                ability_only=tile.ability_only,
            )
            for tile in board.tiles.values()
        ],
        market=[
            title_pb2.MarketRow(
                spaces=[
                    title_pb2.MarketSpace(price=space.price, par=space.par, zone=_ZONES[space.zone])
                    for space in row
                ]
            )
            for row in market.rows
        ],
        corporations=[
            title_pb2.CorporationCharter(
                id=corporation.id,
                name=corporation.name,
                home=corporation.home,
                home_city=corporation.home_city,
                token_costs=list(corporation.token_costs),
            )
            for corporation in board.corporations.values()
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
            for company in economy.privates
        ],
        trains=[
            title_pb2.TrainType(
                name=train.name,
                stops=train.stops,
                price=train.price,
                count=train.count,
                rusts_on=train.rusts_on,
            )
            for train in economy.trains
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
            for phase in economy.phases
        ],
        upgrade_order=list(board.upgrade_order),
        fixed_colours=sorted(board.fixed_colours),
    )


class TitleServicer(title_pb2_grpc.TitleServiceServicer):
    def __init__(self) -> None:
        self._known = known_titles()

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
