"""Route searches in a bounded pool of worker processes, so that none holds the event loop.

One Optimize on a late board with many D-trains searches for seconds; run on the event loop it
held every other call of the process (health checks, route checks) until it ended. Here each
search is sent to a `concurrent.futures.ProcessPoolExecutor` of `SHIKOKU_ROUTES_WORKERS`
processes (default: the CPUs this process may run on). At most `SHIKOKU_ROUTES_QUEUE` searches
(default twice the workers) wait for a free worker beyond those running; one more is refused
at once with RESOURCE_EXHAUSTED `SOLVER_BUSY` and a RetryInfo, never queued without bound. A
graph with nothing to search (no train, no token) is answered on the loop: it takes no time.

What crosses to a worker is small: the track graph as its serialized protobuf (a few KB; the
graph's dataclasses cost a millisecond or more each way to pickle) and the deadline's instant;
the answer comes back as a serialized `Solution`. The deadline is an instant on the monotonic
clock, which on Linux (CLOCK_MONOTONIC) is the machine's and so the same in every process; the
worker's search stops at it as it would in process. A search still waiting when its caller
gives up is dropped from the queue (or, if the executor had already handed it on, starts past
its deadline and answers at once).

Workers are forked by multiprocessing's fork server, which has imported the solver and the
service's modules once, so a worker starts in milliseconds (never forked from the service
itself, whose gRPC threads a fork would copy mid-flight). They run at the service's own priority:
the event loop is kept free by being another process, and a lower priority (nice 10 was tried)
let a busy machine starve searches past their deadlines, cutting bots' routes short.

A worker that dies (killed, out of memory) breaks the executor: the searches it held, and
those waiting, end with UNAVAILABLE `SOLVER_LOST` (retry), and a fresh pool takes its place.
Workers ignore SIGINT (a Ctrl-C reaches the whole process group): the service stops them. On
stopping, a flag they share makes every running search answer with the best it has at once,
and the pool is shut down. A worker whose service died (SIGKILL, no shutdown) exits at once: a
pipe the service holds open, and never writes, ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import timedelta
from multiprocessing.connection import Connection
from typing import Any

from infra.deadlines import MonotonicDeadline
from kernel.rejection import Kind, Rejected
from services.routes import wire
from services.routes.engine.solver import solve
from services.routes.shell import metrics
from shikoku.internal.v1 import routes_pb2 as pb

log = logging.getLogger(__name__)

#: What a refusal suggests waiting when no search in the pool has a deadline to go by.
DEFAULT_RETRY_SECONDS = 1.0
MIN_RETRY_SECONDS, MAX_RETRY_SECONDS = 0.1, 10.0
#: How long stopping waits for the workers to leave once told to.
CLOSE_SECONDS = 5.0


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class PoolSettings:
    #: Worker processes, each running one search at a time.
    workers: int
    #: Searches that may wait for a worker beyond those running.
    queue: int

    @classmethod
    def chosen(cls, workers: int | None, queue: int | None) -> PoolSettings:
        """The pool for the settings (services/routes/shell/settings.py): by default a worker
        per CPU this process may run on, and twice as many searches waiting."""
        workers = workers or usable_cpus()
        return cls(workers, 2 * workers if queue is None else queue)

    @property
    def capacity(self) -> int:
        return self.workers + self.queue


# The fork server imports the main module by its name, and each worker then runs it again as
# `__mp_main__`, as multiprocessing does in every process it starts; runpy warns that it was
# imported already, which does no harm to a module that only defines things, as servers' do.
warnings.filterwarnings(
    "ignore", r".* found in sys\.modules after import of package", RuntimeWarning, "runpy"
)


def _preload() -> list[str]:
    """What the fork server imports once, so that a worker starts in milliseconds: this module
    (the solver) and the process's main module, which every worker would import again."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    main = getattr(spec, "name", None) or ""
    # A package's `__main__` runs its program when imported (and multiprocessing leaves it be).
    return ["__main__", __name__, *([main] if main and not main.endswith("__main__") else [])]


def needs_search(graph: pb.TrackGraph) -> bool:
    """Whether there is anything to search: no train or no token means no route at all."""
    return bool(graph.trains) and any(node.token for node in graph.nodes)


class SolverPool:
    def __init__(self, settings: PoolSettings) -> None:
        self.settings = settings
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(_preload())
        # Shared with every worker: set once, when the service stops.
        self._stopping: Any = self._context.RawValue(ctypes.c_bool, False)
        # Never written; its end here closes when this process ends, however it ends.
        self._alive, self._alive_here = self._context.Pipe(duplex=False)
        self._executor = self._new_executor()
        #: Searches taken and not yet ended, with their deadline's instant.
        self._admitted: dict[Future[bytes], float | None] = {}
        self._closed = False
        metrics.watch_pool(lambda: len(self._admitted), settings.capacity)

    def _new_executor(self) -> ProcessPoolExecutor:
        executor = ProcessPoolExecutor(
            self.settings.workers,
            mp_context=self._context,
            initializer=_start_worker,
            initargs=(self._stopping, self._alive),
        )
        # Each submission starts a worker until there are enough: all of them now, not while
        # searches wait.
        for _ in range(self.settings.workers):
            executor.submit(os.getpid)
        return executor

    async def start(self) -> None:
        """Returns once the pool answers (its workers are started)."""
        await asyncio.wrap_future(self._executor.submit(os.getpid))

    @property
    def admitted(self) -> int:
        """Searches running or waiting for a worker."""
        return len(self._admitted)

    async def solve(self, graph: pb.TrackGraph, deadline: MonotonicDeadline | None) -> pb.Solution:
        """The optimal assignment for `graph`, searched by a worker; a graph with nothing to
        search is answered here. Refuses (SOLVER_BUSY) when the queue is full."""
        if not needs_search(graph):
            return wire.solution_to_proto(solve(wire.graph_from_proto(graph), deadline))
        if self._closed:
            raise _lost("the routes service is stopping")
        if len(self._admitted) >= self.settings.capacity:
            metrics.REFUSED.labels("SOLVER_BUSY").inc()
            raise Rejected(
                "SOLVER_BUSY",
                f"all {self.settings.workers} route solvers are busy and "
                f"{self.settings.queue} searches wait; retry later",
                Kind.RESOURCE_EXHAUSTED,
                {"workers": self.settings.workers, "queue": self.settings.queue},
                retry_after=self._retry_after(),
            )
        at = None if deadline is None else deadline.at
        payload = graph.SerializeToString()
        executor = self._executor
        try:
            future = executor.submit(_search, payload, at)
        except BrokenProcessPool:
            executor = self._replace(executor)
            future = executor.submit(_search, payload, at)
        self._admit(future, at)
        taken = time.monotonic()
        try:
            answer = await asyncio.wrap_future(future)
        except BrokenProcessPool:
            self._replace(executor)
            metrics.REFUSED.labels("SOLVER_LOST").inc()
            raise _lost("the worker process searching these routes ended") from None
        finally:
            metrics.SEARCH_SECONDS.observe(time.monotonic() - taken)
        return pb.Solution.FromString(answer)

    def _admit(self, future: Future[bytes], at: float | None) -> None:
        self._admitted[future] = at
        loop = asyncio.get_running_loop()

        def ended(done: Future[bytes]) -> None:
            # RuntimeError: the loop is closed, and nothing waits any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._admitted.pop, done, None)

        future.add_done_callback(ended)

    def _retry_after(self) -> timedelta:
        """When a place is sure to be free: the nearest deadline of a search taken."""
        now = time.monotonic()
        ends = [at - now for at in self._admitted.values() if at is not None]
        seconds = min(ends) if ends else DEFAULT_RETRY_SECONDS
        return timedelta(seconds=min(max(seconds, MIN_RETRY_SECONDS), MAX_RETRY_SECONDS))

    def _replace(self, broken: ProcessPoolExecutor) -> ProcessPoolExecutor:
        """A fresh pool instead of `broken` (unless that was done already)."""
        if broken is self._executor and not self._closed:
            log.warning("a route solver process ended; starting a new pool")
            metrics.POOLS_REPLACED.inc()
            broken.shutdown(wait=False, cancel_futures=True)
            self._executor = self._new_executor()
        return self._executor

    async def close(self) -> None:
        """Running searches answer with what they have; the workers exit."""
        self._closed = True
        self._stopping.value = True
        executor = self._executor
        stopped = asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)
        try:
            await asyncio.wait_for(stopped, CLOSE_SECONDS)
        except TimeoutError:
            log.warning("route solver processes did not stop within %s s", CLOSE_SECONDS)


def _lost(message: str) -> Rejected:
    return Rejected(
        "SOLVER_LOST",
        f"{message}; retry",
        Kind.UNAVAILABLE,
        retry_after=timedelta(seconds=DEFAULT_RETRY_SECONDS),
    )


# In the worker processes.

_stop_flag: Any = None


def _start_worker(stopping: Any, alive: Connection) -> None:
    global _stop_flag
    _stop_flag = stopping
    # The service stops its workers itself when a Ctrl-C reaches the whole process group.
    # (SIGTERM stays fatal: it is how the executor ends the workers of a broken pool.)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_leave_with_the_service, args=(alive,), daemon=True).start()


def _leave_with_the_service(alive: Connection) -> None:
    """Exits once the service has (killed, it never shut its pool down): otherwise a worker
    would wait on its queue, or search, for ever, and the fork server with it (each worker
    holds the end of the pipe the fork server watches)."""
    with contextlib.suppress(EOFError, OSError):
        alive.recv_bytes()
    os._exit(0)


@dataclass(frozen=True, slots=True)
class WorkerDeadline:
    """The caller's instant, or sooner: when the service stops."""

    at: float | None

    def passed(self) -> bool:
        if _stop_flag is not None and _stop_flag.value:
            return True
        return self.at is not None and time.monotonic() > self.at


def _search(graph: bytes, at: float | None) -> bytes:
    message = pb.TrackGraph.FromString(graph)
    solution = solve(wire.graph_from_proto(message), WorkerDeadline(at))
    return wire.solution_to_proto(solution).SerializeToString()
