"""The board and track model: title data, positions, legal lays and tokens, connectivity, and
the track graph for the routes service. Pure functions over immutable values.

The engine's entry points:

    title = load_title("1889")
    position = initial_position(title, beginner=False)
    check_lay(position, situation, actor, Lay(hex, tile, rotation)) -> LayOption | Rejection
    legal_lays(position, situation, actor) -> tuple[LayOption, ...]
    each_legal_lay(...) -> Iterator[LayOption]; has_legal_lay(...) -> bool (stops at the first)
    apply_lay(position, hex, tile, rotation) -> Position
    check_token(position, actor, hex, city) -> TokenOption | Rejection
    legal_tokens(position, actor) -> tuple[TokenOption, ...]
    each_legal_token(position, actor) -> Iterator[TokenOption]
    apply_token(position, corporation, hex, city, spot=None) -> Position
    connectivity(position, corporation) -> Connectivity
    track_graph(position, corporation, phase, trains) -> services.routes.engine.graph.TrackGraph
    next_centres(position, corporation) -> {token city: the centres one connection away}
"""

from services.rules.board.connectivity import Connectivity, connectivity
from services.rules.board.context import Actor, Situation
from services.rules.board.errors import BoardDataError, Rejected, Rejection
from services.rules.board.lays import (
    Lay,
    LayOption,
    check_lay,
    each_legal_lay,
    has_legal_lay,
    legal_lays,
)
from services.rules.board.loader import UnknownTitle, load_title, load_title_from, title_names
from services.rules.board.position import (
    CityRef,
    PlacedTile,
    Position,
    apply_lay,
    apply_token,
    initial_position,
)
from services.rules.board.route_graph import centre_value, next_centres, track_graph
from services.rules.board.title import Title
from services.rules.board.tokens import TokenOption, check_token, each_legal_token, legal_tokens
from services.rules.board.upgrades import upgrade_chart

__all__ = [
    "Actor",
    "BoardDataError",
    "CityRef",
    "Connectivity",
    "Lay",
    "LayOption",
    "PlacedTile",
    "Position",
    "Rejected",
    "Rejection",
    "Situation",
    "Title",
    "TokenOption",
    "UnknownTitle",
    "apply_lay",
    "apply_token",
    "centre_value",
    "check_lay",
    "check_token",
    "connectivity",
    "each_legal_lay",
    "each_legal_token",
    "has_legal_lay",
    "initial_position",
    "legal_lays",
    "legal_tokens",
    "load_title",
    "load_title_from",
    "next_centres",
    "title_names",
    "track_graph",
    "upgrade_chart",
]
