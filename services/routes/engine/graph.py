"""The track graph that one corporation's trains may run on: the routes service's whole input.

It knows nothing of 1889. The rules service builds it from a board position (see
`services.rules.board`), and the solver only reads it.

Nodes are revenue centres (cities, towns, off-boards) and hex sides. A segment is one piece of
track drawn on one hex, joining two nodes. A route is a walk node-segment-node-…-node that:

- starts and ends at revenue centres and visits at least two of them;
- counts every centre it visits (at most the train's `stops`; `None` means no limit);
- includes at least one centre with the corporation's token (`Node.token`);
- visits no node twice (a centre is counted once; a hex side is crossed once);
- passes *through* a hex side only by crossing it: the segment before and the segment after
  a side node lie on different hexes (coming back on another path of the same tile at a
  shared edge is reversing at a junction);
- passes through no blocked city and no off-board (they may only start or end a route).

Across all of a corporation's trains in one run, no segment and no hex side is used twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class NodeKind(StrEnum):
    CITY = "city"
    TOWN = "town"
    OFFBOARD = "offboard"
    SIDE = "side"


@dataclass(frozen=True, slots=True)
class Node:
    """A revenue centre or a hex side.

    `id` is stable and readable: a centre is named by its hex (`"K8"`; a second centre on one
    hex would be `"K8.1"`), a side by the two hexes it separates, sorted (`"K6|K8"`), or, at
    the map edge, by its hex and edge number (`"K8/3"`).
    """

    id: str
    kind: NodeKind
    hex: str
    revenue: int = 0
    #: Values that replace `revenue` for particular trains, by train name (off-boards for "D").
    revenue_by_train: Mapping[str, int] = field(default_factory=dict)
    #: The operating corporation has a station token here.
    token: bool = False
    #: Every station spot is taken by other corporations: a route may end here, not pass.
    blocked: bool = False

    @property
    def is_centre(self) -> bool:
        return self.kind is not NodeKind.SIDE

    @property
    def is_terminal(self) -> bool:
        """A route may visit this node only as its first or last stop."""
        return self.blocked or self.kind is NodeKind.OFFBOARD

    def value_for(self, train: str) -> int:
        return self.revenue_by_train.get(train, self.revenue)


@dataclass(frozen=True, slots=True)
class Segment:
    """One track path drawn on one hex, between two nodes (`a` and `b`, either direction)."""

    id: str
    hex: str
    a: str
    b: str


@dataclass(frozen=True, slots=True)
class Train:
    """A train to run. `stops` is how many revenue centres it counts; `None` counts all."""

    name: str
    stops: int | None


@dataclass(frozen=True, slots=True)
class TrackGraph:
    nodes: tuple[Node, ...]
    segments: tuple[Segment, ...]
    trains: tuple[Train, ...]


@dataclass(frozen=True, slots=True)
class Route:
    """One train's route: `nodes` from start to end (sides included) and the segments between."""

    train: int  # index into TrackGraph.trains
    nodes: tuple[str, ...]
    segments: tuple[str, ...]
    revenue: int


@dataclass(frozen=True, slots=True)
class Solution:
    routes: tuple[Route, ...]
    revenue: int
    #: False when the search stopped early (deadline) and a better assignment may exist.
    proven: bool
    #: How many candidate routes the search considered (for benchmarks).
    candidates: int


def route_hexes(graph: TrackGraph, route: Route) -> tuple[str, ...]:
    """The hexes a route visits, in order (the 18xx.games `hexes` form)."""
    hex_of_segment = {segment.id: segment.hex for segment in graph.segments}
    hexes: list[str] = []
    for segment in route.segments:
        hex_id = hex_of_segment[segment]
        if not hexes or hexes[-1] != hex_id:
            hexes.append(hex_id)
    return tuple(hexes)
