"""`shikoku routes POSITION.json`: the best routes of corporations at any board position.

A position file:

    {"phase": "D",
     "tiles": [{"hex": "K8", "tile": "15", "rotation": 1}, ...],
     "tokens": {"AR": ["K8", "F9"], ...},
     "trains": {"AR": ["D"], "KO": ["D", "D"], ...}}

Tiles are laid over the printed map in the order given (rotation as in the facts sheet and the
18xx.games logs); tokens name the hex of the city they stand in; trains are "2".."6" or "D".
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.routes.engine.graph import TrackGraph, Train, route_hexes
from services.routes.engine.solver import solve
from services.rules import board
from services.rules.board.upgrades import fits


class PositionError(ValueError):
    """The file does not describe a possible position; the message names the problem."""


@dataclass(frozen=True, slots=True)
class Position:
    phase: str
    board: board.Position
    trains: dict[str, tuple[str, ...]]


def read_position(raw: Any, title: str = "1889") -> Position:
    if not isinstance(raw, dict):
        raise PositionError("a position is a JSON object with phase, tiles, tokens and trains")
    rules = board.load_title(title)
    phases = [phase.name for phase in rules.phases]
    phase = str(raw.get("phase", ""))
    if phase not in phases:
        raise PositionError(f"phase {phase!r} is not one of {phases}")
    here = _with_tiles(board.initial_position(rules), raw.get("tiles", []))
    corporations = set(rules.corporations)
    for corporation, hexes in dict(raw.get("tokens", {})).items():
        if corporation not in corporations:
            raise PositionError(f"tokens: there is no corporation {corporation!r}")
        for hex_id in hexes:
            try:
                here = board.apply_token(here, corporation, str(hex_id))
            except board.Rejected as refused:
                raise PositionError(
                    f"tokens of {corporation}: {refused.rejection.message}"
                ) from None
    known_trains = {train.name for train in rules.trains}
    trains: dict[str, tuple[str, ...]] = {}
    for corporation, names in dict(raw.get("trains", {})).items():
        if corporation not in corporations:
            raise PositionError(f"trains: there is no corporation {corporation!r}")
        unknown = [name for name in names if str(name) not in known_trains]
        if unknown:
            raise PositionError(f"trains of {corporation}: no such train {unknown[0]!r}")
        trains[corporation] = tuple(str(name) for name in names)
    return Position(phase=phase, board=here, trains=trains)


def _with_tiles(start: board.Position, tiles: Any) -> board.Position:
    """The tiles as they lie now: each must be what some sequence of legal upgrades of the
    printed hex could have put there (8.3), and within the tile counts."""
    title = start.title
    placed = dict(start.tiles)
    supply = dict(start.supply)
    for number, entry in enumerate(tiles, start=1):
        try:
            hex_id, tile, rotation = str(entry["hex"]), str(entry["tile"]), int(entry["rotation"])
        except (KeyError, TypeError, ValueError) as error:
            raise PositionError(
                f"tiles[{number}]: needs hex, tile and rotation ({error})"
            ) from None
        where = f"tiles[{number}] ({hex_id})"
        if hex_id not in title.hexes:
            raise PositionError(f"{where}: {hex_id} is not on the map")
        if tile not in title.tiles:
            raise PositionError(f"{where}: there is no tile {tile}")
        if hex_id in placed:
            raise PositionError(f"{where}: two tiles on one hex")
        if not _reachable(title, title.hexes[hex_id].printed, title.tiles[tile], rotation % 6):
            raise PositionError(f"{where}: tile {tile} at rotation {rotation} cannot lie there")
        supply[tile] = supply.get(tile, 0) - 1
        if supply[tile] < 0:
            raise PositionError(f"{where}: more tiles {tile} than the game has")
        placed[hex_id] = board.PlacedTile(tile, rotation % 6)
    return board.Position(title=title, tiles=placed, tokens=start.tokens, supply=supply)


def _reachable(title: board.Title, printed: Any, target: Any, rotation: int) -> bool:
    """Whether upgrades lead from the printed hex to `target` at `rotation`."""
    frontier = [(printed, 0)]
    seen = set()
    while frontier:
        tile, turn = frontier.pop()
        for how in fits(title, tile, turn):
            if how.tile is target and how.rotation == rotation:
                return True
            if (how.tile.name, how.rotation) not in seen:
                seen.add((how.tile.name, how.rotation))
                frontier.append((how.tile, how.rotation))
    return False


def graph_for(position: Position, corporation: str) -> TrackGraph:
    rules = position.board.title
    trains = tuple(
        Train(name, rules.train(name).stops or None) for name in position.trains[corporation]
    )
    return board.track_graph(position.board, corporation, position.phase, trains)


def best_routes(position: Position, corporation: str) -> dict[str, Any]:
    graph = graph_for(position, corporation)
    start = time.perf_counter()
    solution = solve(graph)
    solve_ms = (time.perf_counter() - start) * 1000
    return {
        "corporation": corporation,
        "revenue": solution.revenue,
        "routes": [
            {
                "train": graph.trains[route.train].name,
                "hexes": list(route_hexes(graph, route)),
                "revenue": route.revenue,
            }
            for route in solution.routes
        ],
        "solve_ms": round(solve_ms, 2),
    }


def main(path: Path, corporation: str | None, every: bool, as_json: bool) -> int:
    try:
        position = read_position(json.loads(path.read_text()))
    except (OSError, json.JSONDecodeError, PositionError) as error:
        print(f"shikoku routes: {path}: {error}", file=sys.stderr)
        return 2
    if every:
        chosen = sorted(c for c, trains in position.trains.items() if trains)
    elif corporation:
        if corporation not in position.trains:
            print(f"shikoku routes: {corporation} has no trains in {path}", file=sys.stderr)
            return 2
        chosen = [corporation]
    else:
        print("shikoku routes: name a --corporation or ask for --all", file=sys.stderr)
        return 2
    for name in chosen:
        answer = best_routes(position, name)
        if as_json:
            print(json.dumps(answer))
            continue
        print(f"{name}: ¥{answer['revenue']} ({answer['solve_ms']} ms)")
        for route in answer["routes"]:
            print(f"  {route['train']}-train ¥{route['revenue']}: {' '.join(route['hexes'])}")
    return 0
