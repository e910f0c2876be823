"""Turning a submitted route (node ids, a hex sequence, or per-connection hex sequences) into the
walks through the graph that it may mean.

A reader does not judge legality (that is `rules.check_walk`); it only finds the candidate walks.
It first looks for *plain* walks (no node visited twice, every hex side crossed); any legal route
is one of those. Only when there is none does it look again allowing revisits and reversals, so
that the rules check can say precisely what is wrong.

The hex sequence of a walk lists, in order, the hex of every revenue centre (`Node.hex`) and every
segment (`Segment.hex`) on it, hex sides ignored, with repeats of the same hex next to each other
merged: a walk from K4 through J5 to I4 reads `K4, J5, I4`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from services.routes.engine.index import GraphIndex
from services.routes.engine.rules import Reason, Violation

#: A walk by indices: the nodes, and the segments between them.
IndexWalk = tuple[tuple[int, ...], tuple[int, ...]]

MAX_READINGS = 512
MAX_STEPS = 200_000


@dataclass(slots=True)
class _Budget:
    steps: int = MAX_STEPS

    def spend(self) -> bool:
        self.steps -= 1
        return self.steps >= 0


def _collapse(hexes: Sequence[str]) -> tuple[str, ...]:
    out: list[str] = []
    for h in hexes:
        if not out or out[-1] != h:
            out.append(h)
    return tuple(out)


class _HexMatcher:
    """Depth-first search for walks whose hex sequence is exactly `hexes`."""

    def __init__(
        self, index: GraphIndex, hexes: tuple[str, ...], *, plain: bool, through_centres: bool
    ) -> None:
        self.index = index
        self.hexes = hexes
        self.plain = plain
        self.through_centres = through_centres
        self.budget = _Budget()
        self.found: list[IndexWalk] = []
        #: The furthest position in `hexes` any partial walk reached (for error messages).
        self.furthest = 0

    def _advance(self, pos: int, hex_: str) -> int:
        if self.hexes[pos] == hex_:
            return pos
        if pos + 1 < len(self.hexes) and self.hexes[pos + 1] == hex_:
            return pos + 1
        return -1

    def run(self, start: int) -> None:
        if self.index.nodes[start].hex != self.hexes[0]:
            return
        self._dfs(start, 0, [start], [], {start}, set())

    def _dfs(
        self,
        node: int,
        pos: int,
        nodes: list[int],
        segs: list[int],
        seen_nodes: set[int],
        seen_segs: set[int],
    ) -> None:
        index = self.index
        self.furthest = max(self.furthest, pos)
        if segs and index.is_centre[node]:
            if pos == len(self.hexes) - 1:
                self.found.append((tuple(nodes), tuple(segs)))
            if not self.through_centres:
                return
        for link in index.links[node]:
            if len(self.found) >= MAX_READINGS or not self.budget.spend():
                return
            if link.segment in seen_segs:
                continue
            if self.plain:
                if link.other in seen_nodes:
                    continue
                if segs and not index.is_centre[node] and index.segments[segs[-1]].hex == link.hex:
                    continue
            p = self._advance(pos, link.hex)
            if p < 0:
                continue
            if index.is_centre[link.other]:
                p = self._advance(p, index.nodes[link.other].hex)
                if p < 0:
                    continue
            nodes.append(link.other)
            segs.append(link.segment)
            seen_segs.add(link.segment)
            fresh = link.other not in seen_nodes
            seen_nodes.add(link.other)
            self._dfs(link.other, p, nodes, segs, seen_nodes, seen_segs)
            if fresh:
                seen_nodes.discard(link.other)
            seen_segs.discard(link.segment)
            nodes.pop()
            segs.pop()


def _centres_on(index: GraphIndex, hex_: str) -> list[int]:
    return [i for i, n in enumerate(index.nodes) if index.is_centre[i] and n.hex == hex_]


def _unknown_hex(index: GraphIndex, train: int, hexes: Sequence[str]) -> Violation | None:
    for h in hexes:
        if h not in index.hexes:
            return Violation(Reason.UNKNOWN_HEX, train, hex=h)
    return None


def read_hexes(index: GraphIndex, train: int, hexes: Sequence[str]) -> list[IndexWalk] | Violation:
    """Walks from a revenue centre to a revenue centre whose hex sequence is `hexes`."""
    if not hexes:
        return Violation(Reason.TOO_FEW_STOPS, train, detail="no hexes")
    if (bad := _unknown_hex(index, train, hexes)) is not None:
        return bad
    seq = _collapse(hexes)
    starts = _centres_on(index, seq[0])
    if not starts:
        return Violation(Reason.ENDS_AT_SIDE, train, hex=seq[0], detail="no revenue centre there")
    furthest = 0
    for plain in (True, False):
        matcher = _HexMatcher(index, seq, plain=plain, through_centres=True)
        for s in starts:
            matcher.run(s)
        if matcher.found:
            return matcher.found
        furthest = max(furthest, matcher.furthest)
    return _no_walk(index, train, seq, furthest)


def _no_walk(index: GraphIndex, train: int, seq: tuple[str, ...], furthest: int) -> Violation:
    if len(seq) == 1:
        return Violation(Reason.TOO_FEW_STOPS, train, hex=seq[0], detail="one hex")
    if furthest + 1 < len(seq):
        return Violation(
            Reason.NOT_CONNECTED,
            train,
            hex=seq[furthest + 1],
            detail=f"no track from {seq[furthest]} to {seq[furthest + 1]}",
        )
    return Violation(
        Reason.ENDS_AT_SIDE, train, hex=seq[-1], detail="the route does not end at a centre"
    )


def read_connections(
    index: GraphIndex, train: int, connections: Sequence[Sequence[str]]
) -> list[IndexWalk] | Violation:
    """Walks made of one centre-to-centre piece per hex sequence in `connections`, in order.

    Each piece may be written in either direction; consecutive pieces share a revenue centre.
    """
    if not connections or any(not c for c in connections):
        return Violation(Reason.TOO_FEW_STOPS, train, detail="no connections")
    for conn in connections:
        if (bad := _unknown_hex(index, train, conn)) is not None:
            return bad
    pieces = [_collapse(c) for c in connections]
    error: Violation | None = None
    for plain in (True, False):
        found: list[IndexWalk] = []
        error = _chain(index, train, pieces, plain, found)
        if found:
            return found
    assert error is not None
    return error


def _chain(
    index: GraphIndex,
    train: int,
    pieces: list[tuple[str, ...]],
    plain: bool,
    found: list[IndexWalk],
) -> Violation:
    """Depth-first over the pieces; appends complete walks to `found`, returns the error to
    report if none is found (the first piece that could not be read)."""
    worst = [-1]
    error: list[Violation] = []

    memo: dict[tuple[int | None, int], list[IndexWalk]] = {}

    def piece_walks(at: int | None, j: int) -> list[IndexWalk]:
        walks = memo.get((at, j))
        if walks is None:
            walks = memo[(at, j)] = []
            piece = pieces[j]
            orientations = [piece] if piece == piece[::-1] else [piece, piece[::-1]]
            for seq in orientations:
                matcher = _HexMatcher(index, seq, plain=plain, through_centres=False)
                for s in [at] if at is not None else _centres_on(index, seq[0]):
                    matcher.run(s)
                walks.extend(matcher.found)
        return walks

    def go(j: int, nodes: tuple[int, ...], segs: tuple[int, ...]) -> None:
        if len(found) >= MAX_READINGS:
            return
        if j == len(pieces):
            found.append((nodes, segs))
            return
        at = nodes[-1] if nodes else None
        walks = piece_walks(at, j)
        if not walks and j > worst[0]:
            worst[0] = j
            error.clear()
            error.append(_piece_error(index, train, pieces[j], at))
        for w_nodes, w_segs in walks:
            if plain and set(w_nodes[1:]) & set(nodes):
                continue
            go(j + 1, nodes + w_nodes[1:] if nodes else w_nodes, segs + w_segs)

    go(0, (), ())
    if error:
        return error[0]
    return Violation(
        Reason.CENTRE_REVISITED if plain else Reason.NOT_CONNECTED,
        train,
        detail="the connections do not form one route",
    )


def _piece_error(
    index: GraphIndex, train: int, piece: tuple[str, ...], at: int | None
) -> Violation:
    if at is not None:
        here = index.nodes[at]
        if here.hex not in (piece[0], piece[-1]):
            return Violation(
                Reason.NOT_CONNECTED,
                train,
                node=here.id,
                hex=here.hex,
                detail=f"connection {'-'.join(piece)} does not continue from {here.id}",
            )
    return Violation(
        Reason.NOT_CONNECTED,
        train,
        hex=piece[0],
        detail=f"no track between revenue centres along {'-'.join(piece)}",
    )


def read_nodes(
    index: GraphIndex, train: int, node_ids: Sequence[str]
) -> list[IndexWalk] | Violation:
    """Walks through exactly these nodes.

    With hex sides among `node_ids`, the list is the whole walk and consecutive nodes must share
    a segment. With revenue centres only, consecutive centres may be joined by any track through
    hex sides.
    """
    if not node_ids:
        return Violation(Reason.TOO_FEW_STOPS, train, detail="no nodes")
    for node_id in node_ids:
        if node_id not in index.node_index:
            return Violation(Reason.UNKNOWN_NODE, train, node=node_id)
    ids = [index.node_index[n] for n in node_ids]
    gaps_for = _centre_gaps if all(index.is_centre[i] for i in ids) else _direct_gaps
    gaps: list[list[IndexWalk]] = []
    for u, v in pairwise(ids):
        options = gaps_for(index, u, v)
        if not options:
            node = index.nodes[v]
            return Violation(
                Reason.NOT_CONNECTED,
                train,
                node=node.id,
                hex=node.hex,
                detail=f"no track from {index.nodes[u].id} to {node.id}",
            )
        gaps.append(options)
    found: list[IndexWalk] = []

    def go(j: int, nodes: tuple[int, ...], segs: tuple[int, ...]) -> None:
        if len(found) >= MAX_READINGS:
            return
        if j == len(gaps):
            found.append((nodes, segs))
            return
        for g_nodes, g_segs in gaps[j]:
            go(j + 1, nodes + g_nodes[1:], segs + g_segs)

    go(0, (ids[0],), ())
    return found


def _direct_gaps(index: GraphIndex, u: int, v: int) -> list[IndexWalk]:
    return [((u, v), (link.segment,)) for link in index.links[u] if link.other == v]


def _centre_gaps(index: GraphIndex, u: int, v: int) -> list[IndexWalk]:
    """Walks from centre `u` to centre `v` through hex sides only (plain ones if any exist)."""
    for plain in (True, False):
        found: list[IndexWalk] = []
        _side_walks(index, v, plain, [u], [], found, _Budget())
        if found:
            return found
    return []


def _side_walks(
    index: GraphIndex,
    target: int,
    plain: bool,
    nodes: list[int],
    segs: list[int],
    found: list[IndexWalk],
    budget: _Budget,
) -> None:
    for link in index.links[nodes[-1]]:
        if len(found) >= MAX_READINGS or not budget.spend():
            return
        if link.segment in segs or (link.other in nodes and link.other != target):
            continue
        if plain and segs and index.segments[segs[-1]].hex == link.hex:
            continue
        if link.other == target:
            found.append(((*nodes, target), (*segs, link.segment)))
        elif not index.is_centre[link.other]:
            nodes.append(link.other)
            segs.append(link.segment)
            _side_walks(index, target, plain, nodes, segs, found, budget)
            nodes.pop()
            segs.pop()
