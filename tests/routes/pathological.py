"""A position no route search finishes quickly: the 1889 map fully tiled, one corporation with a
token in every city, and ten D-trains (the most a graph may carry).

Tiles are laid colour by colour, yellow to brown (what the supply holds), each hex taking the
tile and rotation whose exits meet the most track of its neighbours; the lays are physical
(`apply_lay` checks the upgrade, not the rules), which is all a route search needs. The search
that follows enumerates only a few thousand routes: it is assigning ten trains to disjoint
routes among them that takes seconds (6 D-trains about 5 s on a 2-core machine, 10 far more).
"""

from __future__ import annotations

from functools import cache

from services.routes import wire
from services.routes.engine.graph import TrackGraph, Train
from services.rules.board import (
    Position,
    Rejected,
    apply_lay,
    apply_token,
    initial_position,
    load_title,
    track_graph,
)
from services.rules.board.geometry import neighbour, opposite
from services.rules.board.title import Tile
from shikoku.internal.v1 import routes_pb2
from tests.board.build import board

CORPORATION = "IR"
D = Train("D", None)


def _exits(position: Position, hex_: str) -> int:
    tile, rotation = position.content(hex_)
    return tile.exits_at(rotation)


def _fit(position: Position, hex_: str, tile: Tile, rotation: int) -> tuple[int, int]:
    """Exits that meet a neighbour's track count 3, exits onto the map 1; then more paths."""
    exits = tile.exits_at(rotation)
    score = 0
    for edge in range(6):
        if exits >> edge & 1:
            other = neighbour(hex_, edge)
            if other is not None and other in position.title.hexes:
                score += 3 if _exits(position, other) >> opposite(edge) & 1 else 1
    return score, len(tile.paths)


@cache
def full_board() -> Position:
    title = load_title("1889")
    position = initial_position(title)
    lays: list[tuple[str, str, int]] = []
    for _colour in ("yellow", "green", "brown"):
        for hex_ in sorted(title.hexes):
            best: tuple[tuple[int, int], Position, tuple[str, str, int]] | None = None
            for name, tile in title.tiles.items():
                if position.supply.get(name, 0) < 1:
                    continue
                for rotation in range(6):
                    try:
                        laid = apply_lay(position, hex_, name, rotation)
                    except Rejected:
                        continue
                    score = _fit(position, hex_, tile, rotation)
                    if best is None or score > best[0]:
                        best = (score, laid, (hex_, name, rotation))
            if best is not None:
                position = best[1]
                lays.append(best[2])
    tokens = []
    for hex_ in sorted(title.hexes):
        if not position.content(hex_)[0].city_indices():
            continue
        try:
            position = apply_token(position, CORPORATION, hex_)
        except Rejected:  # no open spot
            continue
        tokens.append((CORPORATION, hex_))
    return board(lays, tokens)


def pathological_graph(trains: int = 10) -> TrackGraph:
    return track_graph(full_board(), CORPORATION, "D", (D,) * trains)


def pathological_message(trains: int = 10) -> routes_pb2.TrackGraph:
    return wire.graph_to_proto(pathological_graph(trains))
