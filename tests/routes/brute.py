"""An exhaustive reference for the solver, written for obviousness rather than speed.

Every simple walk between two revenue centres is tried for every train through the single rules
module (`rules.check_walk`, `rules.check_disjoint`); then every combination of routes is tried.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.routes.engine.graph import TrackGraph
from services.routes.engine.index import build_index
from services.routes.engine.rules import Violation, Walk, check_disjoint, check_walk

#: Per train: (-revenue, key) of its route, or IDLE when it runs none (ranked after any route).
IDLE: tuple[int, tuple[str, ...]] = (1, ())


@dataclass(frozen=True)
class BruteResult:
    revenue: int
    #: The tie-break key of the chosen assignment (see `services.routes.engine.solver`).
    key: tuple[tuple[int, tuple[str, ...]], ...]


def interleave(nodes: tuple[str, ...], segments: tuple[str, ...]) -> tuple[str, ...]:
    out = [nodes[0]]
    for s, n in zip(segments, nodes[1:], strict=True):
        out += [s, n]
    return tuple(out)


def undirected_key(nodes: tuple[str, ...], segments: tuple[str, ...]) -> tuple[str, ...]:
    key = interleave(nodes, segments)
    return min(key, key[::-1])


class TooMany(Exception):
    pass


def simple_walks(
    graph: TrackGraph, limit: int | None = None
) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every walk without a repeated node from a centre to a centre, one per direction.

    Raises `TooMany` past `limit` walks."""
    adjacent: dict[str, list[tuple[str, str]]] = {n.id: [] for n in graph.nodes}
    for seg in graph.segments:
        adjacent[seg.a].append((seg.id, seg.b))
        adjacent[seg.b].append((seg.id, seg.a))
    centres = {n.id for n in graph.nodes if n.is_centre}
    walks: list[tuple[tuple[str, ...], tuple[str, ...]]] = []

    def extend(nodes: list[str], segs: list[str]) -> None:
        if segs and nodes[-1] in centres:
            walks.append((tuple(nodes), tuple(segs)))
            if limit is not None and len(walks) > limit:
                raise TooMany
        for seg_id, other in adjacent[nodes[-1]]:
            if other not in nodes:
                extend([*nodes, other], [*segs, seg_id])

    for c in sorted(centres):
        extend([c], [])
    return walks


def brute_force(
    graph: TrackGraph, walks: list[tuple[tuple[str, ...], tuple[str, ...]]] | None = None
) -> BruteResult:
    """The best assignment; `walks` (from `simple_walks`) may be given if already known."""
    index = build_index(graph)
    every = simple_walks(graph) if walks is None else walks
    # One direction of each walk: legality does not depend on the direction.
    walks = [(n, s) for n, s in every if interleave(n, s) <= interleave(n, s)[::-1]]
    legal_by_type: dict[tuple[str, int | None], list[tuple[int, tuple[str, ...], Walk]]] = {}
    per_train: list[list[tuple[int, tuple[str, ...], Walk]]] = []
    for t, train in enumerate(graph.trains):
        kind = (train.name, train.stops)
        if kind not in legal_by_type:
            options = []
            for nodes, segs in walks:
                verdict = check_walk(index, t, nodes, segs)
                if not isinstance(verdict, Violation) and verdict > 0:
                    options.append((verdict, undirected_key(nodes, segs), Walk(t, nodes, segs)))
            legal_by_type[kind] = options
        per_train.append(legal_by_type[kind])

    apart: dict[tuple[tuple[str, ...], tuple[str, ...]], bool] = {}

    def disjoint(a: tuple[str, ...], wa: Walk, b: tuple[str, ...], wb: Walk) -> bool:
        if (a, b) not in apart:
            apart[(a, b)] = check_disjoint(index, [wa, wb]) is None
        return apart[(a, b)]

    best: list[tuple[int, tuple[tuple[int, tuple[str, ...]], ...]]] = [(-1, ())]

    def go(
        t: int,
        chosen: list[tuple[tuple[str, ...], Walk]],
        revenue: int,
        key: list[tuple[int, tuple[str, ...]]],
    ) -> None:
        if t == len(per_train):
            # Higher revenue wins; among equals the smaller key.
            if revenue > best[0][0] or (revenue == best[0][0] and tuple(key) < best[0][1]):
                best[0] = (revenue, tuple(key))
            return
        go(t + 1, chosen, revenue, [*key, IDLE])
        for rev, rkey, walk in per_train[t]:
            if all(disjoint(ckey, cwalk, rkey, walk) for ckey, cwalk in chosen):
                go(t + 1, [*chosen, (rkey, walk)], revenue + rev, [*key, (-rev, rkey)])

    go(0, [], 0, [])
    return BruteResult(best[0][0], best[0][1])
