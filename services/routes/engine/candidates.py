"""Enumerating every legal route once, in a compact encoding for the solver.

The graph is first reduced to *connections*: walks from one revenue centre to the next through
hex sides only, obeying the crossing rule. A route is then a chain of connections between distinct
centres whose track (segments and sides, as one int bitset) does not overlap.

Each undirected route is produced exactly once. Its *anchor* is its token centre of lowest index;
the search from anchor `t` never enters a lower-indexed token centre. A route through `t` is
written as two arms leaving `t` (the second possibly empty); when both are non-empty the first
connection of the second arm must rank after the first connection of the first arm.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.routes.engine.deadline import Deadline
from services.routes.engine.index import GraphIndex

#: Width of one revenue field in a packed revenue (see `value_classes`).
FIELD_BITS = 32
FIELD_MASK = (1 << FIELD_BITS) - 1


@dataclass(frozen=True, slots=True)
class Connection:
    start: int
    far: int
    #: Bits of the segments and hex sides it uses.
    mask: int
    #: The nodes after `start` (sides, then `far`) and the segments between.
    nodes: tuple[int, ...]
    segments: tuple[int, ...]
    #: Its position among the connections leaving `start`.
    rank: int
    #: The same for both directions of one piece of track (set by `connection_table`).
    uid: int = -1


class DeadlineExceeded(Exception):
    pass


class _BudgetExceeded(Exception):
    pass


def connections_from(index: GraphIndex, start: int) -> list[Connection]:
    """Every connection leaving centre `start`, in depth-first order over `GraphIndex.links`."""
    n_segments = len(index.segments)
    is_centre = index.is_centre
    found: list[tuple[tuple[int, ...], tuple[int, ...], int]] = []

    def dfs(node: int, last_hex: str | None, nodes: list[int], segs: list[int], mask: int) -> None:
        for link in index.links[node]:
            if last_hex is not None and link.hex == last_hex:
                continue
            other = link.other
            if other == start or other in nodes:
                continue
            bit = 1 << link.segment
            if mask & bit:
                continue
            if is_centre[other]:
                found.append(((*nodes, other), (*segs, link.segment), mask | bit))
            else:
                nodes.append(other)
                segs.append(link.segment)
                dfs(other, link.hex, nodes, segs, mask | bit | (1 << (n_segments + other)))
                nodes.pop()
                segs.pop()

    dfs(start, None, [], [], 0)
    return [
        Connection(start, nodes[-1], mask, nodes, segs, rank)
        for rank, (nodes, segs, mask) in enumerate(found)
    ]


def connection_table(
    index: GraphIndex, tokens: list[int], max_stops: int | None
) -> dict[int, list[Connection]]:
    """The connections of every centre a route from a token may continue from (with at most
    `max_stops` centres); the two directions of one connection share a `uid`."""
    table: dict[int, list[Connection]] = {}
    frontier = list(tokens)
    depth = 0
    # A route with k centres through a token only continues from centres k - 2 steps away.
    while frontier and (max_stops is None or depth <= max_stops - 2):
        following: list[int] = []
        for c in frontier:
            if c not in table:
                table[c] = connections_from(index, c)
                following.extend(
                    conn.far for conn in table[c] if not index.nodes[conn.far].is_terminal
                )
        frontier = following
        depth += 1
    uids: dict[tuple[int, ...], int] = {}
    for c in sorted(table):
        numbered = []
        for conn in table[c]:
            key = min(conn.segments, conn.segments[::-1])
            uid = uids.setdefault(key, len(uids))
            numbered.append(
                Connection(
                    conn.start, conn.far, conn.mask, conn.nodes, conn.segments, conn.rank, uid
                )
            )
        table[c] = numbered
    return table


#: An arm of a route as a linked list, last connection first: `(connection, rest)` or `None`.
Arm = tuple[Connection, "Arm"] | None

#: A route: (track bitset, packed revenues, number of centres, first arm, second arm).
RouteRecord = tuple[int, int, int, Arm, Arm]


def arm_connections(arm: Arm) -> list[Connection]:
    """The connections of an arm in order from the anchor."""
    out: list[Connection] = []
    while arm is not None:
        out.append(arm[0])
        arm = arm[1]
    out.reverse()
    return out


@dataclass(slots=True)
class Enumeration:
    """All routes found, as `RouteRecord`s.

    The route runs from the end of its second arm back to the anchor and out along its first
    arm. The packed revenues hold the route's revenue for value class `k` in bits
    `FIELD_BITS*k …` (see `value_classes`).
    """

    routes: list[RouteRecord]
    #: Per value class, the train names it covers.
    classes: list[tuple[str, ...]]
    complete: bool
    connections: dict[int, list[Connection]]
    #: Stopped after `budget` routes (`complete` is then False).
    exhausted: bool = False


def value_classes(index: GraphIndex) -> tuple[list[tuple[str, ...]], dict[int, int]]:
    """Group train names that value every centre the same; pack each centre's values."""
    names = sorted({t.name for t in index.graph.trains})
    centres = [i for i, c in enumerate(index.is_centre) if c]
    by_values: dict[tuple[int, ...], list[str]] = {}
    for name in names:
        values = tuple(index.nodes[c].value_for(name) for c in centres)
        by_values.setdefault(values, []).append(name)
    classes = [tuple(v) for v in by_values.values()]
    packed: dict[int, int] = {}
    for c in centres:
        total = 0
        for k, cls in enumerate(classes):
            value = index.nodes[c].value_for(cls[0])
            if not 0 <= value < (1 << (FIELD_BITS - 8)):
                raise ValueError(f"revenue {value} at {index.nodes[c].id} out of range")
            total |= value << (FIELD_BITS * k)
        packed[c] = total
    return classes, packed


def enumerate_routes(
    index: GraphIndex,
    max_stops: int | None,
    deadline: Deadline | None,
    *,
    avoid: int = 0,
    budget: int | None = None,
    prefer: str | None = None,
) -> Enumeration:
    """Every legal route with at most `max_stops` centres (`None`: any number) that shares no
    track with the bitset `avoid`; or the first `budget` of them.

    With `prefer` (a train name), each step tries the centres worth most to that train first,
    so that a budget cuts off the less promising routes.
    """
    classes, packed = value_classes(index)
    centres = [i for i, c in enumerate(index.is_centre) if c]
    tokens = [c for c in centres if index.nodes[c].token]
    conns = connection_table(index, tokens, max_stops)
    if avoid:
        conns = {c: [x for x in lst if not x.mask & avoid] for c, lst in conns.items()}
    if prefer is not None:
        k = next(k for k, cls in enumerate(classes) if prefer in cls)
        worth = {c: packed[c] >> (FIELD_BITS * k) & FIELD_MASK for c in centres}
        conns = {c: sorted(lst, key=lambda x: -worth[x.far]) for c, lst in conns.items()}
    terminal = {c: index.nodes[c].is_terminal for c in centres}
    limit = max_stops if max_stops is not None else len(centres)
    routes: list[RouteRecord] = []
    append = routes.append
    ticks = 0
    # The first check is on the first step, so an expired deadline is noticed at once.
    check_at = 1

    def check() -> None:
        nonlocal check_at
        if budget is not None and ticks > budget:
            raise _BudgetExceeded
        if deadline is not None and deadline.passed():
            raise DeadlineExceeded
        check_at = ticks + 1024
        if budget is not None:
            check_at = min(check_at, budget + 1)

    def second_arm(
        cur: int,
        banned: int,
        used: int,
        value: int,
        count: int,
        arm1: Arm,
        arm2: Arm,
        min_rank: int,
    ) -> None:
        nonlocal ticks
        for conn in conns[cur]:
            far = conn.far
            if conn.rank < min_rank or banned >> far & 1 or used & conn.mask:
                continue
            ticks += 1
            if ticks >= check_at:
                check()
            arm = (conn, arm2)
            v = value + packed[far]
            m = used | conn.mask
            append((m, v, count + 1, arm1, arm))
            if count + 1 < limit and not terminal[far]:
                second_arm(far, banned | 1 << far, m, v, count + 1, arm1, arm, 0)

    def first_arm(
        anchor: int,
        cur: int,
        banned: int,
        used: int,
        value: int,
        count: int,
        arm1: Arm,
        first_rank: int,
    ) -> None:
        nonlocal ticks
        for conn in conns[cur]:
            far = conn.far
            if banned >> far & 1 or used & conn.mask:
                continue
            ticks += 1
            if ticks >= check_at:
                check()
            arm = (conn, arm1)
            rank = conn.rank if arm1 is None else first_rank
            v = value + packed[far]
            m = used | conn.mask
            b = banned | 1 << far
            append((m, v, count + 1, arm, None))
            if count + 1 < limit:
                if not terminal[anchor]:
                    second_arm(anchor, b, m, v, count + 1, arm, None, rank + 1)
                if not terminal[far]:
                    first_arm(anchor, far, b, m, v, count + 1, arm, rank)

    complete = exhausted = False
    try:
        lower_tokens = 0
        for t in tokens:
            first_arm(t, t, lower_tokens | 1 << t, 0, packed[t], 1, None, 0)
            lower_tokens |= 1 << t
        complete = True
    except DeadlineExceeded:
        pass
    except _BudgetExceeded:
        exhausted = True
    return Enumeration(routes, classes, complete, conns, exhausted)


def revenue_of(rec: RouteRecord, value_class: int) -> int:
    return rec[1] >> (FIELD_BITS * value_class) & FIELD_MASK


def route_walk(rec: RouteRecord) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The walk of a route: from the end of its second arm back to the anchor, then along its
    first arm."""
    start_arm = arm_connections(rec[3])
    anchor = start_arm[0].start
    nodes: list[int] = [anchor]
    segs: list[int] = []
    for conn in start_arm:
        nodes.extend(conn.nodes)
        segs.extend(conn.segments)
    back_nodes: list[int] = []
    back_segs: list[int] = []
    for conn in arm_connections(rec[4]):
        back_nodes.extend(conn.nodes)
        back_segs.extend(conn.segments)
    back_nodes.reverse()
    back_segs.reverse()
    return (*back_nodes, *nodes), (*back_segs, *segs)
