"""Per train type, the routes worth searching, ordered, with conflict bitsets.

A *type* is a (name, stops) pair: trains of one type run the same routes for the same revenue.

Before the search, cheap bounds shrink the pools. `UB(T)` is the best revenue of any route of
type `T`; `LB` is the total of a greedy assignment. A train's route in any optimal assignment
earns at least `LB - sum(UB of the other trains)`, so routes below that are dropped.

A pool orders its routes by revenue descending (enumeration order within one revenue). Position
`p` is bit `p` of the pool's bitsets: `containing` maps each connection (`Connection.uid`) to the
routes that use it, from which `blocked_by` finds every route sharing track with a given route.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from services.routes.engine.candidates import (
    FIELD_BITS,
    FIELD_MASK,
    Connection,
    DeadlineExceeded,
    RouteRecord,
    route_walk,
)
from services.routes.engine.deadline import Deadline
from services.routes.engine.order import walk_key


@dataclass(slots=True)
class Buckets:
    """The routes of one type grouped by revenue (in enumeration order within a revenue)."""

    by_revenue: dict[int, list[RouteRecord]]
    revenues: list[int]  # descending

    @property
    def top(self) -> int:
        return self.revenues[0] if self.revenues else 0


def bucket(
    routes: list[RouteRecord], value_class: int, stops: int | None, deadline: Deadline | None
) -> Buckets:
    shift = FIELD_BITS * value_class
    by_revenue: dict[int, list[RouteRecord]] = {}
    for i, rec in enumerate(routes):
        if i & 65535 == 65535 and deadline is not None and deadline.passed():
            raise DeadlineExceeded
        if stops is not None and rec[2] > stops:
            continue
        revenue = rec[1] >> shift & FIELD_MASK
        if revenue > 0:
            group = by_revenue.get(revenue)
            if group is None:
                by_revenue[revenue] = [rec]
            else:
                group.append(rec)
    return Buckets(by_revenue, sorted(by_revenue, reverse=True))


#: How many routes `greedy` looks at per train at most (it is only a first guess).
GREEDY_LOOKS = 50_000


def greedy(buckets: list[Buckets], order: list[int]) -> tuple[int, dict[int, RouteRecord]]:
    """Trains in `order` each take their best route that fits: a feasible assignment."""
    used = 0
    total = 0
    chosen: dict[int, RouteRecord] = {}
    for i in order:
        b = buckets[i]
        looks = GREEDY_LOOKS
        for revenue in b.revenues:
            group = b.by_revenue[revenue][:looks]
            rec = next((r for r in group if not used & r[0]), None)
            looks -= len(group)
            if rec is not None:
                used |= rec[0]
                total += revenue
                chosen[i] = rec
            if rec is not None or looks <= 0:
                break
    return total, chosen


def route_key(rec: RouteRecord) -> tuple[int, ...]:
    """`order.walk_key` of the route in its smaller direction."""
    key = walk_key(*route_walk(rec))
    backward = key[::-1]
    return backward if backward < key else key


class Conflicts:
    """Which connections share track (a segment or a hex side) with which."""

    def __init__(self, connections: dict[int, list[Connection]]) -> None:
        self._masks: dict[int, int] = {}
        for conns in connections.values():
            for conn in conns:
                self._masks[conn.uid] = conn.mask
        self._of: dict[int, tuple[int, ...]] = {}

    def of(self, uid: int) -> tuple[int, ...]:
        """The uids of connections sharing track with `uid`, itself included."""
        found = self._of.get(uid)
        if found is None:
            mask = self._masks[uid]
            found = self._of[uid] = tuple(u for u, m in self._masks.items() if m & mask)
        return found


@dataclass(slots=True)
class Pool:
    """One type's routes, by revenue descending."""

    revenues: list[int]
    records: list[RouteRecord]
    uids: list[tuple[int, ...]]
    #: Per revenue, descending: (revenue, bitset of its positions).
    levels: list[tuple[int, int]]
    #: Where each position's revenue level starts.
    level_start: list[int]
    #: All positions.
    full: int
    containing: dict[int, int]
    conflicts: Conflicts
    _blocked_by_uid: dict[int, int] = field(default_factory=dict)
    _keys: dict[int, tuple[int, ...]] = field(default_factory=dict)
    _best_without: dict[tuple[int, int], int] = field(default_factory=dict)

    def blocked_by(self, uids: tuple[int, ...]) -> int:
        """The positions of routes sharing track with a route made of connections `uids`."""
        out = 0
        cache = self._blocked_by_uid
        for u in uids:
            b = cache.get(u)
            if b is None:
                b = 0
                for d in self.conflicts.of(u):
                    b |= self.containing.get(d, 0)
                cache[u] = b
            out |= b
        return out

    def best_without(self, uid: int, count: int) -> int:
        """The revenue of the `count` best routes that share no track with connection `uid`."""
        key = (uid, count)
        best = self._best_without.get(key)
        if best is None:
            avail = self.full & ~self.blocked_by((uid,))
            best = 0
            while count and avail:
                low = avail & -avail
                best += self.revenues[low.bit_length() - 1]
                avail ^= low
                count -= 1
            self._best_without[key] = best
        return best

    def key(self, position: int) -> tuple[int, ...]:
        key = self._keys.get(position)
        if key is None:
            key = self._keys[position] = route_key(self.records[position])
        return key


def make_pool(
    buckets: Buckets, threshold: int, conflicts: Conflicts, deadline: Deadline | None
) -> Pool:
    """The routes of `buckets` earning at least `threshold`."""
    records: list[RouteRecord] = []
    revenues: list[int] = []
    levels: list[tuple[int, int]] = []
    level_start: list[int] = []
    for revenue in buckets.revenues:
        if revenue < threshold:
            break
        group = buckets.by_revenue[revenue]
        start = len(records)
        records.extend(group)
        revenues.extend([revenue] * len(group))
        level_start.extend([start] * len(group))
        levels.append((revenue, ((1 << len(group)) - 1) << start))
    uids: list[tuple[int, ...]] = []
    positions: dict[int, list[int]] = {}
    for p, rec in enumerate(records):
        if p & 4095 == 4095 and deadline is not None and deadline.passed():
            raise DeadlineExceeded
        route_uids: list[int] = []
        arm = rec[3]
        while arm is not None:
            route_uids.append(arm[0].uid)
            arm = arm[1]
        arm = rec[4]
        while arm is not None:
            route_uids.append(arm[0].uid)
            arm = arm[1]
        uids.append(tuple(route_uids))
        for u in route_uids:
            group_positions = positions.get(u)
            if group_positions is None:
                positions[u] = [p]
            else:
                group_positions.append(p)
    n = len(records)
    containing: dict[int, int] = {}
    for u, ps in positions.items():
        if deadline is not None and deadline.passed():
            raise DeadlineExceeded
        containing[u] = _bitset(ps, n)
    return Pool(revenues, records, uids, levels, level_start, (1 << n) - 1, containing, conflicts)


def _bitset(positions: list[int], n: int) -> int:
    raw = bytearray((n + 7) // 8)
    for p in positions:
        raw[p >> 3] |= 1 << (p & 7)
    return int.from_bytes(raw, "little")
