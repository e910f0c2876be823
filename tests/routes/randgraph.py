"""Random small track graphs for property tests and hand-checks.

Hexes sit on a grid in the doubled-row form (a column holds only odd or only even rows), with
edges 0-5 clockwise from the bottom. Each hex gets a few revenue centres and a few paths between
its edges and centres; paths that share an edge make junctions.
"""

from __future__ import annotations

import random

from services.routes.engine.graph import Node, NodeKind, Segment, TrackGraph, Train

STEPS = ((0, 2), (-1, 1), (-1, -1), (0, -2), (1, -1), (1, 1))
TRAIN_POOL = (Train("2", 2), Train("3", 3), Train("4", 4), Train("D", None))


def hex_name(col: int, row: int) -> str:
    return f"{chr(ord('A') + col)}{row}"


def side_id(col: int, row: int, edge: int, on_board: set[tuple[int, int]]) -> tuple[str, str]:
    """The id and hex of the side node at `edge` of hex (col, row)."""
    dc, dr = STEPS[edge]
    here = hex_name(col, row)
    if (col + dc, row + dr) in on_board:
        a, b = sorted((here, hex_name(col + dc, row + dr)))
        return f"{a}|{b}", a
    return f"{here}/{edge}", here


def random_graph(rng: random.Random, *, max_cols: int = 3, max_rows: int = 3) -> TrackGraph:
    cols = rng.randint(min(2, max_cols), max_cols)
    cells = [
        (c, c % 2 + 2 * k)
        for c in range(cols)
        for k in range(rng.randint(min(2, max_rows), max_rows))
    ]
    on_board = set(cells)
    # Borders with track on them; the two hexes each bring a path to it.
    active: dict[tuple[int, int], list[int]] = {cell: [] for cell in cells}
    for col, row in cells:
        for edge, (dc, dr) in enumerate(STEPS):
            there = (col + dc, row + dr)
            if there in on_board:
                if there > (col, row) and rng.random() < 0.7:
                    active[(col, row)].append(edge)
                    active[there].append((edge + 3) % 6)
            elif rng.random() < 0.05:
                active[(col, row)].append(edge)  # track running off the map: a dead end
    nodes: dict[str, Node] = {}
    segments: list[Segment] = []
    for col, row in cells:
        name = hex_name(col, row)
        n_centres = rng.choices((0, 1, 2), weights=(30, 60, 10))[0]
        centres = [name if i == 0 else f"{name}.{i}" for i in range(n_centres)]
        for cid in centres:
            nodes[cid] = _random_centre(rng, cid, name)
        edges = sorted(active[(col, row)])
        ends: list[int | str] = [*edges, *centres]
        pairs: list[tuple[int | str, int | str]] = []
        for edge in edges:
            if centres and rng.random() < 0.6:
                pairs.append((edge, rng.choice(centres)))
            elif len(ends) > 1:
                pairs.append((edge, rng.choice([e for e in ends if e != edge])))
        for _ in range(rng.choice((0, 0, 1, 1, 2))):
            if len(ends) > 1:
                a, b = rng.sample(ends, 2)
                pairs.append((a, b))  # often a second path to an edge: a junction
        for i, pair in enumerate(pairs):
            ids: list[str] = []
            for end in pair:
                if isinstance(end, int):
                    sid, shex = side_id(col, row, end, on_board)
                    nodes.setdefault(sid, Node(sid, NodeKind.SIDE, shex))
                    ids.append(sid)
                else:
                    ids.append(end)
            segments.append(Segment(f"{name}:{i}", name, ids[0], ids[1]))
    _add_tokens(rng, nodes)
    trains = tuple(rng.choice(TRAIN_POOL) for _ in range(rng.randint(1, 3)))
    return TrackGraph(tuple(nodes.values()), tuple(segments), trains)


def _random_centre(rng: random.Random, cid: str, hex_: str) -> Node:
    kind = rng.choices((NodeKind.CITY, NodeKind.TOWN, NodeKind.OFFBOARD), weights=(55, 25, 20))[0]
    if kind is NodeKind.OFFBOARD:
        value = rng.choice((20, 30, 40))
        return Node(cid, kind, hex_, value, {"D": value * 2})
    if kind is NodeKind.TOWN:
        return Node(cid, kind, hex_, rng.choice((0, 10, 20)))
    return Node(cid, kind, hex_, rng.choice((20, 30, 40, 60)), blocked=rng.random() < 0.15)


def _add_tokens(rng: random.Random, nodes: dict[str, Node]) -> None:
    spots = [n for n in nodes.values() if n.kind is NodeKind.CITY and not n.blocked]
    if not spots:
        spots = [n for n in nodes.values() if n.kind is NodeKind.TOWN]
    for node in rng.sample(spots, min(len(spots), rng.choice((1, 1, 2, 3)))):
        nodes[node.id] = Node(
            node.id, node.kind, node.hex, node.revenue, node.revenue_by_train, token=True
        )
