"""A small builder for hand-made track graphs.

Hexes are plain names ("A", "B", …). A centre on hex "A" is named "A" (a second one "A.1"); the
side between hexes "A" and "B" is "A|B". `link("A", "B")` lays track from the centre on A across
side A|B to the centre on B: one segment on each hex.
"""

from __future__ import annotations

from services.routes.engine.graph import Node, NodeKind, Segment, TrackGraph, Train

TWO = Train("2", 2)
THREE = Train("3", 3)
FOUR = Train("4", 4)
D = Train("D", None)


class Board:
    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.segments: list[Segment] = []

    def city(
        self, id_: str, revenue: int = 20, *, token: bool = False, blocked: bool = False
    ) -> str:
        hex_ = id_.split(".")[0]
        self.nodes[id_] = Node(id_, NodeKind.CITY, hex_, revenue, token=token, blocked=blocked)
        return id_

    def town(self, id_: str, revenue: int = 10) -> str:
        self.nodes[id_] = Node(id_, NodeKind.TOWN, id_.split(".")[0], revenue)
        return id_

    def offboard(self, id_: str, revenue: int, d_revenue: int) -> str:
        self.nodes[id_] = Node(id_, NodeKind.OFFBOARD, id_, revenue, {"D": d_revenue})
        return id_

    def side(self, hex_a: str, hex_b: str) -> str:
        a, b = sorted((hex_a, hex_b))
        id_ = f"{a}|{b}"
        self.nodes.setdefault(id_, Node(id_, NodeKind.SIDE, a))
        return id_

    def track(self, hex_: str, a: str, b: str) -> str:
        """A segment on `hex_` between nodes `a` and `b`; returns its id."""
        id_ = f"{hex_}:{sum(s.hex == hex_ for s in self.segments)}"
        self.segments.append(Segment(id_, hex_, a, b))
        return id_

    def link(self, a: str, b: str) -> str:
        """Track from the centre `a` to the centre `b` on the neighbouring hex; returns the side."""
        hex_a, hex_b = self.nodes[a].hex, self.nodes[b].hex
        side = self.side(hex_a, hex_b)
        self.track(hex_a, a, side)
        self.track(hex_b, side, b)
        return side

    def graph(self, *trains: Train) -> TrackGraph:
        return TrackGraph(tuple(self.nodes.values()), tuple(self.segments), trains)
