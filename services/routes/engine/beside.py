"""One unlimited train (a D) beside trains of limited length, on a board too large to list the
D's routes.

The limited trains' routes are few (thousands on the synthetic mesh) and are enumerated into
the pools of `pools`; the D's are not. The D's route grows from one end as in `deep`, and a
walk so far (a *prefix*) is bounded by what it earned, the best completion of the D from its
end (`deep._Search.best`, memoised) and the best the other trains can still earn beside the
prefix: per type its `k` best routes sharing no track with the prefix, read from bitsets (a
route of the pool per bit, per segment and hex side the routes using it). Every route of the
others earns no more beside a longer prefix, and the D earns no more than its best completion,
so a prefix whose bound falls below the best total found is cut: the search stays exact.

At each prefix that is a route, the others' exact best beside it is the branch and bound of
`assign.Optimum` with the prefix's conflicts barred. Every D route reaching the best total is
kept; the tie-break is then `assign.FirstOptimal` over the others' pools and a pool of those
D routes, so the answer is the first optimal assignment in the solver's order.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.routes.engine import deep
from services.routes.engine.assign import IDLE, FirstOptimal, Optimum, _best
from services.routes.engine.candidates import (
    Arm,
    Connection,
    DeadlineExceeded,
    RouteRecord,
    enumerate_routes,
    value_classes,
)
from services.routes.engine.deadline import Deadline
from services.routes.engine.index import GraphIndex
from services.routes.engine.pools import Conflicts, bucket, make_pool

#: A D walk: its start and the connections from it.
DWalk = tuple[int, tuple[Connection, ...]]


@dataclass(frozen=True, slots=True)
class Assignment:
    chosen: dict[int, RouteRecord]
    total: int
    proven: bool
    #: Routes enumerated plus walks and states searched.
    searched: int


def applies(index: GraphIndex) -> bool:
    """Exactly one train counts every centre, and some others count a limited number."""
    stops = [t.stops for t in index.graph.trains]
    return stops.count(None) == 1 and len(stops) > 1


def solve(index: GraphIndex, deadline: Deadline | None, at_least: int) -> Assignment | None:
    """The first optimal assignment, or None if the deadline came first (`at_least`: a total
    known to be feasible)."""
    trains = index.graph.trains
    d = next(i for i, t in enumerate(trains) if t.stops is None)
    rest = [i for i in range(len(trains)) if i != d]
    try:
        return _Beside(index, d, rest, deadline).run(at_least)
    except DeadlineExceeded:
        return None


class _Beside:
    def __init__(
        self, index: GraphIndex, d: int, rest: list[int], deadline: Deadline | None
    ) -> None:
        self.index = index
        self.d = d
        self.rest = rest
        self.deadline = deadline
        trains = index.graph.trains
        self.enum = enumerate_routes(
            index, max(trains[i].stops or 0 for i in rest), deadline, prefer=None
        )
        if not self.enum.complete:
            raise DeadlineExceeded
        self.classes, self.packed = value_classes(index)
        value_class = {name: k for k, cls in enumerate(self.classes) for name in cls}
        self.train_class = [value_class[t.name] for t in trains]
        self.types: list[tuple[str, int | None]] = []
        self.rest_type: list[int] = []
        for i in rest:
            key = (trains[i].name, trains[i].stops)
            if key not in self.types:
                self.types.append(key)
            self.rest_type.append(self.types.index(key))
        self.type_class = [value_class[name] for name, _ in self.types]
        self.buckets = [
            bucket(self.enum.routes, self.type_class[t], s, deadline)
            for t, (_, s) in enumerate(self.types)
        ]
        conflicts = Conflicts(self.enum.connections)
        self.pools = [make_pool(b, 1, conflicts, deadline) for b in self.buckets]
        self.counts = [self.rest_type.count(t) for t in range(len(self.types))]
        self.n_segments = len(index.segments)
        # Per pool, per segment and per hex side, the positions of the routes using it.
        self.using_segment: list[dict[int, int]] = []
        self.using_side: list[dict[int, int]] = []
        seg_bits = (1 << self.n_segments) - 1
        for pool in self.pools:
            by_segment: dict[int, int] = {}
            by_side: dict[int, int] = {}
            for p, rec in enumerate(pool.records):
                for bit in deep._bits(rec[0] & seg_bits):
                    by_segment[bit] = by_segment.get(bit, 0) | 1 << p
                for bit in deep._bits(rec[0] >> self.n_segments):
                    by_side[bit] = by_side.get(bit, 0) | 1 << p
            self.using_segment.append(by_segment)
            self.using_side.append(by_side)
        self.search = deep._Search(index, trains[d], deadline)
        self.bars: dict[int, list[int]] = {}
        self.visits = 0
        self.best = -1
        self.kept: list[DWalk] = []
        self.idle_reaches = False
        self.path: list[Connection] = []

    # -- the others beside a prefix -------------------------------------------------------------

    def barred(self, conn: Connection) -> list[int]:
        """Per pool, the positions of the routes sharing track with `conn`."""
        found = self.bars.get(id(conn))
        if found is None:
            sides = [v for v in conn.nodes if not self.index.is_centre[v]]
            found = []
            for t in range(len(self.pools)):
                bits = 0
                for seg in conn.segments:
                    bits |= self.using_segment[t].get(seg, 0)
                for v in sides:
                    bits |= self.using_side[t].get(v, 0)
                found.append(bits)
            self.bars[id(conn)] = found
        return found

    def others_bound(self, blocked: list[int]) -> int:
        return sum(
            _best(pool, pool.full & ~blocked[t], self.counts[t])
            for t, pool in enumerate(self.pools)
        )

    def others_reach(self, blocked: list[int], need: int) -> int:
        """The others' best total beside `blocked` if at least `need`, else less than it."""
        optimum = Optimum(self.pools, self.rest_type, self.deadline, at_least=need)
        optimum.run(blocked)
        return optimum.best_total

    # -- the search ---------------------------------------------------------------------------

    def run(self, at_least: int) -> Assignment:
        self.best = at_least
        none = [0] * len(self.pools)
        idle = self.others_reach(none, self.best)
        if idle >= self.best:
            self.best, self.idle_reaches = idle, True
        s = self.search
        for start in sorted(s.centres, key=lambda c: -s.value[c]):
            everything = sum(s.value)
            self._walk(
                start,
                1 << start,
                s.value[start],
                bool(s.tokens >> start & 1),
                none,
                everything,
                s.component(start, 0),
            )
        return self._first_optimal()

    def _keep(self, total: int, start: int) -> None:
        if total > self.best:
            self.best = total
            self.kept.clear()
            self.idle_reaches = False
        self.kept.append((start, tuple(self.path)))

    def _walk(
        self,
        e: int,
        gone: int,
        earned: int,
        token: bool,
        blocked: list[int],
        upper: int,
        comp: int,
    ) -> None:
        """Extend the prefix ending at `e` (`comp`: the D's component there); `upper`: at most
        what a D route extending it earns."""
        s = self.search
        start = self.path[0].start if self.path else e
        for conn, mask, _ in s.by_value[e]:
            if mask & gone:
                continue
            self.visits += 1
            if self.visits & 255 == 0 and self.deadline is not None and self.deadline.passed():
                raise DeadlineExceeded
            far = conn.far
            have = earned + s.value[far]
            has = token or bool(s.tokens >> far & 1)
            bars = self.barred(conn)
            child = [b | x for b, x in zip(blocked, bars, strict=True)]
            others = self.others_bound(child)
            if upper + others < self.best:
                continue
            self.path.append(conn)
            if has and have > 0 and have + others >= self.best:
                reach = self.others_reach(child, self.best - have)
                if have + reach >= self.best:
                    self._keep(have + reach, start)
            if not s.terminal[far]:
                need = self.best - have - others - 1
                child_comp = s.step(comp, conn, gone | mask, 0)
                sub, exact = s.best(far, gone | mask, has, deep.ANY, need, 0, (comp, conn))
                if exact:
                    self._walk(far, gone | mask, have, has, child, have + sub, child_comp)
            self.path.pop()

    # -- the tie-break ------------------------------------------------------------------------

    def _first_optimal(self) -> Assignment:
        index = self.index
        n_segments = self.n_segments
        uid = 1 + max((c.uid for conns in self.enum.connections.values() for c in conns), default=0)
        own: dict[int, Connection] = {}
        records: list[RouteRecord] = []
        seen: set[tuple[int, ...]] = set()
        for start, conns in self.kept:
            segments = tuple(seg for c in conns for seg in c.segments)
            if min(segments, segments[::-1]) in seen:
                continue
            seen.add(min(segments, segments[::-1]))
            arm: Arm = None
            used = packed = 0
            packed = self.packed[start]
            for c in conns:
                kept = own.get(id(c))
                if kept is None:
                    sides = sum(1 << (n_segments + v) for v in c.nodes if not index.is_centre[v])
                    mask = sum(1 << seg for seg in c.segments) | sides
                    kept = own[id(c)] = Connection(
                        c.start, c.far, mask, c.nodes, c.segments, c.rank, uid
                    )
                    uid += 1
                arm = (kept, arm)
                used |= kept.mask
                packed += self.packed[c.far]
            records.append((used, packed, len(conns) + 1, arm, None))
        connections = dict(self.enum.connections)
        connections[-1] = list(own.values())
        conflicts = Conflicts(connections)
        trains = index.graph.trains
        pools = [make_pool(b, 1, conflicts, self.deadline) for b in self.buckets]
        d_bucket = bucket(records, self.train_class[self.d], None, self.deadline)
        pools.append(make_pool(d_bucket, 1, conflicts, self.deadline))
        train_type = [0] * len(trains)
        for i, t in zip(self.rest, self.rest_type, strict=True):
            train_type[i] = t
        train_type[self.d] = len(pools) - 1
        target = max(self.best, 0)
        choice = FirstOptimal(pools, train_type, self.deadline, target).run()
        assert choice is not None, "the optimum is reachable"
        chosen = {i: pools[train_type[i]].records[p] for i, p in enumerate(choice) if p != IDLE}
        searched = len(self.enum.routes) + self.visits + self.search.states
        return Assignment(chosen, target, True, searched)
