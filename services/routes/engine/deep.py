"""The best route of one train without listing every route: a search from route ends.

For one train on a large board (a D-train may have millions of legal routes) the solver does not
enumerate. A route is grown from one end, a connection (`candidates.connections_from`) at a
time. What the rest of a route can still earn from its current end `e` depends only on:

- the part of the track still reachable from `e` (the *component*: nodes not yet used, reached
  through segments from `e`; a connection from `e` can only run inside it),
- which terminal centres (blocked cities, off-boards, which a route only ends at) are used,
- whether the route already has a token, and how many centres the train may still count.

So the best completion is memoised on those (`_Search.best`). Each state is bounded before it is
searched, by the *block bound* of its component: a simple path leaving `e` visits the blocks
(biconnected components) of the track along one path of the block-cut tree, never coming back
to a block it left; so it earns at most the values of the blocks on the best such path, plus
one terminal where it ends. The same bound on the *turn graph* (`_Search.turn_bound`: centres
and segments as nodes, two segments joined at a hex side only where they lie in different
hexes, as a walk passes a hex side from one hex into the other) is far tighter on a mesh of
junction tiles, where a walk on the plain track graph could turn back into the hex it came
from; it is the bound of a D-train.
For a train counting `k` centres the `k` best values bound it too.
Each bound only relaxes the rules (the block bound the crossing rule, the turn bound a hex side
passed twice where both hexes have two paths there), so it never falls below the best
completion: the search stays exact.

The memo holds exact values, or "at most v" where a search was cut off by what was needed.
A state's component and turn bound are kept by the state (`step`, `state_turn_bound`), so that
walks reaching it with different track behind them compute neither again.

The route returned is the first in the solver's tie-break order among the best ones: walks are
tried in `order.walk_key` order (start node, then segment, node, ... by index; a walk before its
extensions), each pruned unless its best completion reaches the optimum. The first walk found
is the route in its smaller direction, since its reverse is one of the walks tried.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from services.routes.engine.candidates import Connection, DeadlineExceeded, connections_from
from services.routes.engine.deadline import Deadline
from services.routes.engine.graph import Train
from services.routes.engine.index import GraphIndex

#: A state's best completion is not known to reach anything: no token can be reached.
NONE = -(1 << 40)
#: `left` for a train that counts every centre.
ANY = -1
#: The memo is cleared when it grows past this many states (it is only a cache).
MEMO_LIMIT = 400_000
#: The most states searched from one end that a new state there is compared with.
DOMINANCE_LIMIT = 4_096


_K = TypeVar("_K")
_V = TypeVar("_V")


def _remember(memo: dict[_K, _V], key: _K, value: _V) -> None:
    """`memo[key] = value`, the memo emptied first once it holds MEMO_LIMIT entries."""
    if len(memo) > MEMO_LIMIT:
        memo.clear()
    memo[key] = value


class _Search:
    def __init__(self, index: GraphIndex, train: Train, deadline: Deadline | None) -> None:
        self.index = index
        self.train = train
        self.deadline = deadline
        n = len(index.nodes)
        self.centres = [i for i in range(n) if index.is_centre[i]]
        self.value = [
            index.nodes[i].value_for(train.name) if index.is_centre[i] else 0 for i in range(n)
        ]
        self.terminal = [index.is_centre[i] and index.nodes[i].is_terminal for i in range(n)]
        self.terminals = sum(1 << i for i in range(n) if self.terminal[i])
        self.tokens = sum(1 << c for c in self.centres if index.nodes[c].token)
        # Track as a graph on nodes, terminals apart: a path passes no terminal.
        self.adjacent: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.ends_at: list[list[int]] = [[] for _ in range(n)]
        for v in range(n):
            for link in index.links[v]:
                if self.terminal[link.other]:
                    self.ends_at[v].append(link.other)
                elif not self.terminal[v]:
                    self.adjacent[v].append((link.other, link.segment))
        self.skeleton = _skeleton(self.adjacent, self.ends_at, index.is_centre)
        self.block_links = _through(self.skeleton)
        self._turns(index)
        #: The skeleton for `component`: per node, (far node's bit, bits of the chain's hex
        #: sides and far node, bits of its segments).
        self.flood = [
            [(1 << w, inner | 1 << w, segs) for w, _, inner, segs in chains]
            for chains in self.skeleton
        ]
        #: Per centre, the connections leaving it, each with its nodes and its segments as bits.
        self.conns: dict[int, list[tuple[Connection, int, int]]] = {}
        for c in self.centres:
            found = []
            for conn in connections_from(index, c):
                mask = 0
                for v in conn.nodes:
                    mask |= 1 << v
                found.append((conn, mask, sum(1 << seg for seg in conn.segments)))
            self.conns[c] = found
        # The optimum is sought trying the most valuable next centre first (better totals found
        # sooner prune more); the tie-break walk keeps the order of `walk_key`.
        self.by_value = {
            c: sorted(found, key=lambda cm: -self.value[cm[0].far])
            for c, found in self.conns.items()
        }
        self.between_centres = sum(
            1 << i
            for i, seg in enumerate(index.segments)
            if index.is_centre[index.node_index[seg.a]] and index.is_centre[index.node_index[seg.b]]
        )
        self.memo: dict[tuple[int, int, int, bool, int, int], tuple[int, bool]] = {}
        self.states = 0
        self.by_track: dict[tuple[int, int, bool, int, int], tuple[int, bool]] = {}
        #: `step`'s components, by the component left, the connection taken and `cut`.
        self.steps: dict[tuple[int, int, int, int], int] = {}
        #: `state_turn_bound`'s bounds.
        self.turn_bounds: dict[tuple[int, int, int, int], int] = {}
        #: Per first step of a route (start, rank of its connection), at most what the route
        #: earns after it on the whole track: a bound for every later search beside other
        #: trains' track.
        self.first_steps: dict[tuple[int, int], int] = {}
        self.dominated = 0
        self.by_end: dict[int, list[tuple[int, int, bool, int, int, int]]] = {
            v: [] for v in range(n)
        }

    def _turns(self, index: GraphIndex) -> None:
        """The track as a graph on centres and segments (the *turn graph*): a segment meets a
        centre it ends at, and another segment at a hex side when the two lie in different
        hexes, as a walk passes a hex side from one hex into the other. A walk is a path in
        it (it passes a hex side twice only where both hexes have two paths there)."""
        n = len(index.nodes)
        terminal = self.terminal
        adjacent: list[list[tuple[int, int]]] = [[] for _ in range(n + len(index.segments))]
        ends_at: list[list[int]] = [[] for _ in range(len(adjacent))]
        #: Per node, the bits of the turn graph's segment nodes ending at it.
        self.turn_touch = [0] * n
        edges = 0

        def join(a: int, b: int) -> None:
            nonlocal edges
            adjacent[a].append((b, edges))
            adjacent[b].append((a, edges))
            edges += 1

        for v in range(n):
            if terminal[v]:
                continue
            links = index.links[v]
            inner = [link for link in links if not terminal[link.other]]
            for link in inner:
                self.turn_touch[v] |= 1 << (n + link.segment)
            if index.is_centre[v]:
                for link in inner:
                    join(v, n + link.segment)
                ends_at[v].extend(link.other for link in links if terminal[link.other])
                continue
            for i, a in enumerate(inner):
                for b in inner[i + 1 :]:
                    if a.hex != b.hex:
                        join(n + a.segment, n + b.segment)
                for link in links:
                    if terminal[link.other] and link.hex != a.hex:
                        ends_at[n + a.segment].append(link.other)
        is_centre = [v < n and index.is_centre[v] for v in range(len(adjacent))]
        self.turn_ends = ends_at
        self.turn_links = _through(_skeleton(adjacent, ends_at, is_centre))

    def turn_bound(self, e: int, gone: int, cut: int) -> int:
        """The block bound (as in `bound`) on the turn graph."""
        rest = gone & ~(1 << e)
        off = rest | cut << len(self.index.nodes)
        touch = self.turn_touch
        while rest:
            low = rest & -rest
            off |= touch[low.bit_length() - 1]
            rest ^= low
        bonus = _best_terminal(self.turn_ends, self.value, gone & self.terminals)
        return _block_tree_bound(_blocks(self.turn_links, e, off), self.value, bonus, e)

    def state_turn_bound(self, e: int, comp: int, gone: int, cut: int) -> int:
        """`turn_bound`, kept by the state (`e`, its component `comp`, the terminals gone and
        the cut segments between centres): the turn graph's track from `e` lies inside `comp`
        and meets the track gone only where `comp` does, so a state searched again (for a
        higher `need`, or with another token) is not bounded again."""
        key = (e, comp, gone & self.terminals, cut & self.between_centres)
        found = self.turn_bounds.get(key)
        if found is None:
            found = self.turn_bound(e, gone, cut)
            _remember(self.turn_bounds, key, found)
        return found

    # -- bounds ------------------------------------------------------------------------------

    def component(self, e: int, gone: int, cut: int = 0) -> int:
        """The nodes reachable from `e` (itself included) through nodes not in `gone` and
        segments not in `cut` (hex sides no walk between centres can pass left out)."""
        flood = self.flood
        comp = 1 << e
        stack = [e]
        while stack:
            for wbit, through, segs in flood[stack.pop()]:
                if through & gone or segs & cut:
                    continue
                if not comp & wbit:
                    stack.append(wbit.bit_length() - 1)
                comp |= through
        return comp

    def bound(self, e: int, comp: int, gone: int, left: int, cut: int = 0) -> int:
        """At most what a path leaving `e` earns inside `comp` (and at one terminal not gone),
        `e` itself not counted; with `left` centres at most (`ANY`: no limit)."""
        value = self.value
        bonus = _best_terminal(self.ends_at, value, gone & self.terminals)
        if left != ANY:
            values = []
            rest = comp & ~(1 << e)
            while rest:
                low = rest & -rest
                v = low.bit_length() - 1
                rest ^= low
                if value[v]:
                    values.append(value[v])
            values.append(max((bonus(u) for u in _bits(comp)), default=0))
            values.sort(reverse=True)
            top = sum(values[:left])
        blocks = _blocks(self.block_links, e, gone & ~(1 << e), cut)
        block_bound = _block_tree_bound(blocks, value, bonus, e)
        if left != ANY and top < block_bound:
            return top
        return block_bound

    # -- the search --------------------------------------------------------------------------

    def tick(self) -> None:
        self.states += 1
        if self.states & 63 == 0 and self.deadline is not None and self.deadline.passed():
            raise DeadlineExceeded

    def step(self, comp: int, conn: Connection, gone: int, cut: int) -> int:
        """The component of a walk's end after it takes `conn` (its track then `gone`), from the
        component `comp` of the end it left: a function of `comp`, `conn` and `cut` alone (the
        new end's component lies inside `comp`, and `comp` meets the old track only at
        `conn.start`), so walks reaching one state by different paths flood it once."""
        key = (comp, conn.start, conn.rank, cut)
        found = self.steps.get(key)
        if found is None:
            found = self.component(conn.far, gone & ~(1 << conn.far), cut)
            _remember(self.steps, key, found)
        return found

    def best(
        self,
        e: int,
        gone: int,
        token: bool,
        left: int,
        need: int,
        cut: int = 0,
        via: tuple[int, Connection] | None = None,
    ) -> tuple[int, bool]:
        """As `_best`, first looked up by the track used itself: walks through the same nodes
        in another order end in the same state without computing what they leave. `via`: the
        component of the end the walk came from and the connection it took to `e`."""
        key = (e, gone, token, left, cut)
        known = self.by_track.get(key)
        if known is not None and (known[1] or known[0] <= need):
            return known
        comp = None if via is None else self.step(via[0], via[1], gone, cut)
        found = self._best(e, gone, token, left, need, cut, comp)
        _remember(self.by_track, key, found)
        return found

    def _best(
        self,
        e: int,
        gone: int,
        token: bool,
        left: int,
        need: int,
        cut: int = 0,
        comp: int | None = None,
    ) -> tuple[int, bool]:
        """The best the route ending at `e` (in `gone`, as is all its track) earns from here on:
        `(value, True)`, exact, if it is more than `need`; else `(v, False)` with v <= `need`
        and nothing more than v possible. Segments of `cut` (other trains' track, whose hex
        sides are in `gone`) are not used. `comp`: the component of `e`, if known."""
        if comp is None:
            comp = self.component(e, gone & ~(1 << e), cut)
        # A cut segment leaves no trace in `comp` only where it joins two centres.
        key = (e, comp, gone & self.terminals, token, left, cut & self.between_centres)
        known = self.memo.get(key)
        if known is not None and (known[1] or known[0] <= need):
            return known
        # A state whose track is a subset of a state already searched from the same end earns
        # no more than it.
        terminals_gone = key[2]
        cut_key = key[5]
        for other, o_terms, o_token, o_left, o_cut, o_value in self.by_end[e]:
            if (
                o_value <= need
                and o_left == left
                and not comp & ~other
                and not o_terms & ~terminals_gone
                and (o_token or not token)
                and not o_cut & ~cut_key
            ):
                self.dominated += 1
                return (o_value, False)
        self.tick()
        if not token and not comp & self.tokens:
            found = (NONE, True)
            self.memo[key] = found
            return found
        if left == 0:
            found = (0 if token else NONE, True)
            self.memo[key] = found
            return found
        upper = self.state_turn_bound(e, comp, gone, cut)
        if upper > need and left != ANY:
            upper = min(upper, self.bound(e, comp, gone, left, cut))
        if upper <= need:
            found = (upper, False)
            self.memo[key] = found
            return found
        best = 0 if token else NONE
        ceiling = best  # the most a search cut short below `need` may still hold
        value = self.value
        tokens = self.tokens
        further = ANY if left == ANY else left - 1
        for conn, mask, segs in self.by_value[e]:
            if mask & gone or segs & cut:
                continue
            far = conn.far
            v = value[far]
            has = token or bool(tokens >> far & 1)
            if has and v > best:
                best = v
            if self.terminal[far] or further == 0:
                continue
            sub, exact = self.best(
                far, gone | mask, has, further, max(best, need) - v, cut, (comp, conn)
            )
            if exact:
                if sub + v > best:
                    best = sub + v
            elif sub + v > ceiling:
                ceiling = sub + v
        found = (best, True) if best > need else (max(best, ceiling), False)
        if len(self.memo) > MEMO_LIMIT:
            self.memo.clear()
            for lst in self.by_end.values():
                lst.clear()
        self.memo[key] = found
        searched = self.by_end[e]
        if len(searched) >= DOMINANCE_LIMIT:
            # Each lookup scans the list: keep it short, the latest states (the likeliest to
            # dominate the next ones) kept.
            del searched[: DOMINANCE_LIMIT // 2]
        searched.append((comp, terminals_gone, token, left, cut_key, found[0]))
        return found

    def optimum(self, at_least: int, gone: int = 0, cut: int = 0) -> int:
        """The best revenue of a route (0: none earns anything) if it is more than `at_least`,
        else `at_least`; the route uses no node of `gone` (hex sides) and no segment of
        `cut` (the track of other trains)."""
        best = max(at_least, 0)
        stops = self.train.stops
        starts = sorted(self.centres, key=lambda c: -self.value[c])
        for s in starts:
            if stops is not None and stops < 2:
                break
            left = ANY if stops is None else stops - 2
            token = bool(self.tokens >> s & 1)
            comp: int | None = None
            for conn, mask, segs in self.by_value[s]:
                if mask & gone or segs & cut:
                    continue
                far = conn.far
                v = self.value[s] + self.value[far]
                has = token or bool(self.tokens >> far & 1)
                if has and v > best:
                    best = v
                if self.terminal[far] or left == 0:
                    continue
                first = (s, conn.rank)
                known = self.first_steps.get(first)
                if known is not None and known + v <= best:
                    continue
                if comp is None:
                    comp = self.component(s, gone & ~(1 << s), cut)
                sub, exact = self.best(
                    far, gone | mask | 1 << s, has, left, best - v, cut, (comp, conn)
                )
                if not gone and not cut and (known is None or sub < known):
                    self.first_steps[first] = sub
                if exact and sub + v > best:
                    best = sub + v
        return best

    def first(
        self, target: int, gone: int = 0, cut: int = 0
    ) -> list[tuple[int, Connection]] | None:
        """The first walk in `walk_key` order earning `target` (there must be none earning
        more), avoiding `gone` and `cut`: its start and connections."""
        stops = self.train.stops
        if target <= 0 or (stops is not None and stops < 2):
            return None
        for s in self.centres:
            left = ANY if stops is None else stops - 1
            found = self._first_from(
                s, gone | 1 << s, self.value[s], bool(self.tokens >> s & 1), left, target, [], cut
            )
            if found is not None:
                return [(s, conn) for conn in found]
        return None

    def _first_from(
        self,
        e: int,
        gone: int,
        earned: int,
        token: bool,
        left: int,
        target: int,
        path: list[Connection],
        cut: int,
    ) -> list[Connection] | None:
        if path and token and earned == target:
            return list(path)
        if earned > target or left == 0 or (path and self.terminal[e]):
            return None
        if path:
            sub, exact = self.best(e, gone, token, left, target - earned - 1, cut)
            if not exact or earned + sub < target:
                return None
        further = ANY if left == ANY else left - 1
        for conn, mask, segs in self.conns[e]:
            if mask & gone or segs & cut:
                continue
            far = conn.far
            path.append(conn)
            found = self._first_from(
                far,
                gone | mask,
                earned + self.value[far],
                token or bool(self.tokens >> far & 1),
                further,
                target,
                path,
                cut,
            )
            path.pop()
            if found is not None:
                return found
        return None


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _best_terminal(
    ends_at: Sequence[Sequence[int]], value: Sequence[int], terminals_gone: int
) -> Callable[[int], int]:
    """What a route ending next to node `u` earns at most at one terminal not gone."""

    def bonus(u: int) -> int:
        best = 0
        for t in ends_at[u]:
            if not terminals_gone >> t & 1 and value[t] > best:
                best = value[t]
        return best

    return bonus


def _block_tree_bound(
    blocks: list[list[int]], value: Sequence[int], bonus: Callable[[int], int], e: int
) -> int:
    """At most what a simple path leaving `e` (not counted) earns over these blocks: it never
    returns to a block it left, so it earns at most the blocks along one path of the block-cut
    tree, plus `bonus` where it ends. Nodes past `value` (a turn graph's segments) earn
    nothing."""
    n = len(value)
    of: dict[int, list[int]] = {}
    for b, block in enumerate(blocks):
        for v in block:
            of.setdefault(v, []).append(b)
    worth = [sum(value[v] for v in block if v < n) for block in blocks]
    memo: dict[tuple[int, int], int] = {}

    def leaving(v: int, came: int) -> int:
        """The most a path from `v` (not counted) earns in blocks other than `came`."""
        key = (v, came)
        found = memo.get(key)
        if found is not None:
            return found
        best = bonus(v)
        own = value[v] if v < n else 0
        for b in of.get(v, ()):
            if b == came:
                continue
            further = 0
            for u in blocks[b]:
                if u != v:
                    x = leaving(u, b) if len(of[u]) > 1 else bonus(u)
                    if x > further:
                        further = x
            total = worth[b] - own + further
            if total > best:
                best = total
        memo[key] = best
        return best

    return leaving(e, -1)


def _blocks(
    skeleton: Sequence[Sequence[_Chain]], root: int, gone: int, cut: int = 0
) -> list[list[int]]:
    """The blocks (biconnected components, bridges included) of the component of `root` in
    the skeleton (as `_through`) without the nodes of `gone` and the segments of `cut`; a
    lone root is a block of its own."""
    order: dict[int, int] = {root: 0}
    low: dict[int, int] = {root: 0}
    edges: list[tuple[int, int]] = []
    blocks: list[list[int]] = []
    stack: list[tuple[int, int, int]] = [(root, -1, 0)]
    while stack:
        u, via, i = stack[-1]
        links = skeleton[u]
        while i < len(links):
            w, seg, through, segs = links[i]
            i += 1
            if seg == via or through & gone or segs & cut:
                continue
            if w not in order:
                order[w] = low[w] = len(order)
                edges.append((u, w))
                stack[-1] = (u, via, i)
                stack.append((w, seg, 0))
                break
            if order[w] < order[u]:
                edges.append((u, w))
                if order[w] < low[u]:
                    low[u] = order[w]
        else:
            stack.pop()
            if stack:
                p = stack[-1][0]
                if low[u] < low[p]:
                    low[p] = low[u]
                if low[u] >= order[p]:
                    members = set()
                    while True:
                        a, b = edges.pop()
                        members.add(a)
                        members.add(b)
                        if (a, b) == (p, u):
                            break
                    blocks.append(list(members))
    if not blocks:
        blocks.append([root])
    return blocks


def _through(skeleton: Sequence[Sequence[_Chain]]) -> list[list[_Chain]]:
    """The skeleton with each chain's far node among the bits of its hex sides, so that one
    test tells whether a walk can still take it."""
    return [[(w, c, inner | 1 << w, segs) for w, c, inner, segs in chains] for chains in skeleton]


#: A chain of track between two skeleton nodes: (far node, chain id, bits of the hex sides
#: inside it, bits of its segments).
_Chain = tuple[int, int, int, int]


def _skeleton(
    adjacent: Sequence[Sequence[tuple[int, int]]],
    ends_at: Sequence[Sequence[int]],
    is_centre: Sequence[bool],
) -> list[list[_Chain]]:
    """The track between centres and junctions, with chains of plain hex sides as one link.

    A walk from a centre to a centre never passes a hex side with one way in or out, so those
    are left out (again and again, as leaving one out can strand the next); a hex side with
    two ways is on a chain. Per node, the chains leaving it; a chain back to its own start
    (no simple walk uses it) is left out. Hex sides next to a terminal stay nodes, since a
    walk may end there.
    """
    n = len(adjacent)
    degree = [len(adjacent[v]) + len(ends_at[v]) for v in range(n)]
    dead = [False] * n
    leaves = [v for v in range(n) if not is_centre[v] and degree[v] <= 1]
    while leaves:
        v = leaves.pop()
        if dead[v]:
            continue
        dead[v] = True
        for w, _ in adjacent[v]:
            if not dead[w]:
                degree[w] -= 1
                if not is_centre[w] and degree[w] <= 1:
                    leaves.append(w)
    key = [not dead[v] and (is_centre[v] or degree[v] != 2 or bool(ends_at[v])) for v in range(n)]
    ids: dict[int, int] = {}
    skeleton: list[list[_Chain]] = [[] for _ in range(n)]
    for a in range(n):
        if not key[a]:
            continue
        for w, seg in adjacent[a]:
            if dead[w]:
                continue
            inner, segs, prev, cur = 0, 1 << seg, seg, w
            while not key[cur]:
                inner |= 1 << cur
                w2, seg2 = next((x, s) for x, s in adjacent[cur] if s != prev and not dead[x])
                segs |= 1 << seg2
                prev, cur = seg2, w2
            if cur != a:
                skeleton[a].append((cur, ids.setdefault(segs, len(ids)), inner, segs))
    return skeleton


def best_route(
    index: GraphIndex, train: Train, deadline: Deadline | None, at_least: int = 0
) -> tuple[int, list[tuple[int, Connection]] | None, int]:
    """The best revenue of `train` alone, the first best walk (start, connections), and the
    number of search states visited. Raises `DeadlineExceeded`."""
    search = _Search(index, train, deadline)
    total = search.optimum(at_least)
    walk = search.first(total)
    if walk is None:
        total = 0
    return total, walk, search.states
