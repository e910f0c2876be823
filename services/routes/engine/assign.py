"""Branch and bound over train assignments, on the bitsets of `pools.Pool`.

The trains are taken in their given order; each tries its pool's routes, then running no route.
A node's state is, per type, the bitset of positions no longer available (sharing track with a
chosen route, or excluded so that trains of one type do not try the same routes in permuted
order). The bound for the trains still to choose is exact per train: the best available route
of each, ignoring conflicts among themselves (for `k` trains of one type, its `k` best).

Two passes, so that the (costly) tie-break keys are computed for few routes:

1. `optimum` finds the maximum total. Positions are in pool order (revenue descending); the
   best is replaced only on a strict improvement.
2. `first_optimal` walks the assignments in tie-break order (per train in the given order:
   revenue descending, then `Pool.key` ascending, then no route) and stops at the first whose
   total is the optimum. Within one revenue it keys only the routes whose bound still reaches
   the optimum.
"""

from __future__ import annotations

from services.routes.engine.candidates import DeadlineExceeded
from services.routes.engine.deadline import Deadline
from services.routes.engine.pools import Pool

IDLE = -1


class _Base:
    def __init__(self, pools: list[Pool], train_type: list[int], deadline: Deadline | None) -> None:
        self.pools = pools
        self.train_type = train_type
        self.deadline = deadline
        self.m = len(train_type)
        # For each level i: (type, how many trains of it) among trains i, i+1, …
        self.later: list[list[tuple[int, int]]] = []
        for i in range(self.m + 1):
            counts: dict[int, int] = {}
            for t in train_type[i:]:
                counts[t] = counts.get(t, 0) + 1
            self.later.append(sorted(counts.items()))
        self.twin_later = [
            any(t == train_type[i] for t, _ in self.later[i + 1]) for i in range(self.m)
        ]
        self.choice = [IDLE] * self.m
        self.ticks = 0

    def _tick(self) -> None:
        self.ticks += 1
        if self.deadline is not None and self.ticks & 255 == 0 and self.deadline.passed():
            raise DeadlineExceeded

    def _rest(self, i: int, blocked: list[int], skip: int = -1) -> int:
        """Bound on what trains i, i+1, … (except those of type `skip`) can still earn."""
        total = 0
        for t, count in self.later[i]:
            if t != skip:
                pool = self.pools[t]
                total += _best(pool, pool.full & ~blocked[t], count)
        return total

    def _rest_beside(self, i: int, p: int) -> int:
        """A cheaper, looser bound than `_rest` of the child: per later type, its best routes
        beside one connection of route p, whichever connection leaves least."""
        uids = self.pools[self.train_type[i]].uids[p]
        total = 0
        for other, count in self.later[i + 1]:
            pool = self.pools[other]
            total += min(pool.best_without(u, count) for u in uids)
        return total

    def _child(self, i: int, p: int, blocked: list[int]) -> list[int]:
        """The state after train i takes position p (its own type's order not yet applied)."""
        t = self.train_type[i]
        child = list(blocked)
        uids = self.pools[t].uids[p]
        for other, _ in self.later[i + 1]:
            child[other] |= self.pools[other].blocked_by(uids)
        return child

    def _idle_child(self, i: int, blocked: list[int]) -> list[int]:
        """Running no route: later trains of the same type run none either."""
        if not self.twin_later[i]:
            return blocked
        child = list(blocked)
        t = self.train_type[i]
        child[t] = self.pools[t].full
        return child


def _best(pool: Pool, avail: int, count: int) -> int:
    """The revenue of the `count` best routes among positions `avail`."""
    total = 0
    while count and avail:
        low = avail & -avail
        total += pool.revenues[low.bit_length() - 1]
        avail ^= low
        count -= 1
    return total


class Optimum(_Base):
    """Pass 1: the maximum total (at least `at_least`, a known feasible total)."""

    def __init__(
        self, pools: list[Pool], train_type: list[int], deadline: Deadline | None, at_least: int
    ) -> None:
        super().__init__(pools, train_type, deadline)
        self.best_total = at_least - 1
        self.best: list[int] | None = None

    def run(self, blocked: list[int] | None = None) -> None:
        """Search; `blocked`: per type, the positions barred from the start."""
        self._go(0, list(blocked) if blocked is not None else [0] * len(self.pools), 0)

    def _go(self, i: int, blocked: list[int], total: int) -> None:
        if i == self.m:
            if total > self.best_total:
                self.best_total = total
                self.best = list(self.choice)
            return
        t = self.train_type[i]
        pool = self.pools[t]
        twins = next((count for lt, count in self.later[i + 1] if lt == t), 0)
        rest = self._rest(i + 1, blocked, skip=t)
        avail = pool.full & ~blocked[t]
        while avail:
            self._tick()
            low = avail & -avail
            avail ^= low
            p = low.bit_length() - 1
            revenue = pool.revenues[p]
            # Later trains of this type take routes ranked after this one.
            if total + revenue + rest + _best(pool, avail, twins) <= self.best_total:
                break
            if total + revenue + self._rest_beside(i, p) <= self.best_total:
                continue
            child = self._child(i, p, blocked)
            if self.twin_later[i]:
                child[t] |= (low << 1) - 1
            if total + revenue + self._rest(i + 1, child) <= self.best_total:
                continue
            self.choice[i] = p
            self._go(i + 1, child, total + revenue)
        child = self._idle_child(i, blocked)
        if total + self._rest(i + 1, child) > self.best_total:
            self.choice[i] = IDLE
            self._go(i + 1, child, total)


class FirstOptimal(_Base):
    """Pass 2: the first assignment in tie-break order whose total is `target`."""

    def __init__(
        self, pools: list[Pool], train_type: list[int], deadline: Deadline | None, target: int
    ) -> None:
        super().__init__(pools, train_type, deadline)
        self.target = target
        #: Per type, the (revenue, key) of the route the previous train of that type took.
        self.floor: list[tuple[int, tuple[int, ...]] | None] = [None] * len(pools)

    def run(self) -> list[int] | None:
        if self._go(0, [0] * len(self.pools), 0):
            return self.choice
        return None

    def _go(self, i: int, blocked: list[int], total: int) -> bool:
        if i == self.m:
            return total == self.target
        need = self.target - total
        t = self.train_type[i]
        pool = self.pools[t]
        rest = self._rest(i + 1, blocked)
        avail = pool.full & ~blocked[t]
        floor = self.floor[t]
        for revenue, level_bits in pool.levels:
            if revenue + rest < need:
                break
            here = avail & level_bits
            viable: list[tuple[tuple[int, ...], int, list[int]]] = []
            while here:
                self._tick()
                low = here & -here
                here ^= low
                p = low.bit_length() - 1
                child = self._child(i, p, blocked)
                if self.twin_later[i]:
                    child[t] |= (1 << pool.level_start[p]) - 1  # higher revenues
                if revenue + self._rest(i + 1, child) < need:
                    continue
                key = pool.key(p)
                if floor is not None and floor[0] == revenue and key <= floor[1]:
                    continue
                viable.append((key, p, child))
            viable.sort(key=lambda v: v[0])
            for key, p, child in viable:
                self.choice[i] = p
                self.floor[t] = (revenue, key)
                if self._go(i + 1, child, total + revenue):
                    return True
            self.floor[t] = floor
        child = self._idle_child(i, blocked)
        if self._rest(i + 1, child) >= need:
            self.choice[i] = IDLE
            if self._go(i + 1, child, total):
                return True
        return False
