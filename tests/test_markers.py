"""The markers by cost (pyproject.toml, tests/conftest.py) say what each test costs: the whole suite
collected in a pytest process of its own, its markers and fixtures read back, and the guard that
keeps `pure` tests pure tried on real sockets and processes."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from tests.conftest import IO_FIXTURES, PURE_FOLDERS
from tests.io_guard import PureTestDidIOError, io_guard, refusing_io

REPO = Path(__file__).resolve().parent.parent

# A plugin for the inner pytest: each collected test's id, markers and fixtures, as JSON.
DUMP = """
import json, os

def pytest_collection_finish(session):
    with open(os.environ["MARKERS_OUT"], "w") as out:
        json.dump([
            {"id": item.nodeid, "markers": sorted({m.name for m in item.iter_markers()}),
             "fixtures": sorted(getattr(item, "fixturenames", []))}
            for item in session.items
        ], out)
"""


@dataclass(frozen=True)
class Collected:
    id: str
    markers: frozenset[str]
    fixtures: frozenset[str]

    @property
    def folder(self) -> str:
        parts = self.id.split("::")[0].split("/")
        return parts[1] if len(parts) > 2 else ""

    @property
    def module(self) -> str:
        return self.id.split("::")[0]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Collected]]:
    where = tmp_path_factory.mktemp("markers")
    (where / "dump_markers.py").write_text(DUMP)
    out = where / "collected.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "dump_markers", "tests"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(where), "MARKERS_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    yield [
        Collected(t["id"], frozenset(t["markers"]), frozenset(t["fixtures"]))
        for t in json.loads(out.read_text())
    ]


def test_pure_tests_sit_in_a_pure_folder_and_ask_for_no_io(suite: list[Collected]) -> None:
    pure = [t for t in suite if "pure" in t.markers]
    assert len(pure) > 500  # the pure cores' tests, hundreds of them
    assert {t.folder for t in pure} == PURE_FOLDERS
    assert [t.id for t in pure if t.folder not in PURE_FOLDERS] == []
    assert [t.id for t in pure if t.fixtures & IO_FIXTURES] == []
    assert [t.id for t in pure if t.markers & {"e2e", "io"}] == []


def test_tests_that_reach_redis_or_processes_are_not_pure(suite: list[Collected]) -> None:
    in_pure_folders = [t for t in suite if t.folder in PURE_FOLDERS]
    redis = [t for t in in_pure_folders if "redis_url" in t.fixtures]
    assert redis, "tests/lobby and tests/rules have tests on Redis"
    assert [t.id for t in redis if "pure" in t.markers] == []
    pools = [t for t in suite if t.module == "tests/routes/test_solver_pool.py"]
    assert pools
    assert [t.id for t in pools if "pure" in t.markers] == []
    # Outside the pure folders nothing is pure, even what asks for no fixture at all.
    assert [t.id for t in suite if t.folder not in PURE_FOLDERS and "pure" in t.markers] == []


def test_the_in_memory_repository_tests_are_pure_unless_they_ask_for_redis(
    suite: list[Collected],
) -> None:
    """tests/*/test_repository_on_memory.py: the repositories on the event log in memory (the
    lobby's tables index stays in Redis, so the tests of listing ask for it)."""
    on_memory = [t for t in suite if t.module.endswith("_on_memory.py")]
    without_redis = [t for t in on_memory if "redis_url" not in t.fixtures]
    assert [t.id for t in without_redis if "pure" not in t.markers] == []
    assert [t.id for t in on_memory if "redis_url" in t.fixtures and "pure" in t.markers] == []


def test_what_starts_the_services_is_e2e(suite: list[Collected]) -> None:
    systems = {"system", "cluster_system", "web_system"}
    assert [t.id for t in suite if t.folder == "e2e" and "e2e" not in t.markers] == []
    assert [t.id for t in suite if t.fixtures & systems and "e2e" not in t.markers] == []
    assert [
        t.id
        for t in suite
        if t.folder in {"web", "browser"}
        and t.fixtures & {"web_api", "web_system"}
        and "e2e" not in t.markers
    ] == []


def test_clusters_failover_and_deployment_checks_are_slow(suite: list[Collected]) -> None:
    heavy = [
        t
        for t in suite
        if "/cluster/" in t.module
        or "cluster_system" in t.fixtures
        or t.folder == "deploy"  # Compose and Kubernetes validated, wheels built
        or t.id.endswith("::test_sixteen_writer_processes_leave_one_gapless_history")
        or t.id.endswith("::test_an_idle_projector_does_no_work_per_finished_game")
    ]
    assert len(heavy) > 20
    assert [t.id for t in heavy if "slow" not in t.markers] == []


def test_the_makefile_tiers_select_by_marker() -> None:
    makefile = (REPO / "Makefile").read_text()
    fast = re.search(r"^fast: .*\n((?:\t.*\n)+)", makefile, re.M)
    unit = re.search(r"^unit: .*\n((?:\t.*\n)+)", makefile, re.M)
    folders = re.search(r"^FAST_FOLDERS := \$\(addprefix tests/,(.*)\)$", makefile, re.M)
    assert fast and unit and folders
    assert '-m "pure and not slow"' in fast.group(1)
    assert set(folders.group(1).split()) == PURE_FOLDERS
    assert '-m "not e2e and not slow"' in unit.group(1)
    # everything: no marker, no path, on its workers
    assert re.search(
        r"^test: .*\n\t\$\(BIN\)/pytest -n \$\(TEST_WORKERS\) --dist loadfile\n", makefile, re.M
    )


# -- the guard -----------------------------------------------------------------------------------


def spawned() -> None:
    pass


def test_the_guard_refuses_sockets_processes_and_grpc_and_lets_them_be_after() -> None:
    with refusing_io("here") as attempts:
        listener = socket.socket()
        with pytest.raises(PureTestDidIOError, match="here bound a socket"):
            listener.bind(("127.0.0.1", 0))
        with pytest.raises(PureTestDidIOError, match="connected a socket"):
            socket.create_connection(("127.0.0.1", 9), timeout=1)
        with pytest.raises(PureTestDidIOError, match="started a process"):
            subprocess.run(["true"], check=True)
        with pytest.raises(PureTestDidIOError, match="started a process"):
            multiprocessing.get_context("spawn").Process(target=spawned).start()
        with pytest.raises(PureTestDidIOError, match="opened a gRPC channel"):
            grpc.insecure_channel("127.0.0.1:9")
        with pytest.raises(PureTestDidIOError, match="created a gRPC server"):
            grpc.aio.server()
        caught: list[BaseException] = []

        def in_a_thread() -> None:
            try:
                socket.create_connection(("127.0.0.1", 9), timeout=1)
            except BaseException as error:
                caught.append(error)

        started = threading.Thread(target=in_a_thread)
        started.start()
        started.join()
        assert [type(e) for e in caught] == [PureTestDidIOError]
    assert len(attempts) == 7
    listener.bind(("127.0.0.1", 0))  # all as it was
    listener.close()
    assert subprocess.run(["true"]).returncode == 0


def test_a_thread_already_running_is_left_alone() -> None:
    go, done = threading.Event(), threading.Event()
    bound: list[int] = []

    def bystander() -> None:
        go.wait()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            bound.append(s.getsockname()[1])
        done.set()

    thread = threading.Thread(target=bystander)
    thread.start()
    with refusing_io("here") as attempts:
        go.set()
        assert done.wait(10)
    thread.join()
    assert attempts == [] and len(bound) == 1


def test_a_pure_test_that_swallows_the_refusal_still_fails(request: pytest.FixtureRequest) -> None:
    # As code under test that retries or logs an error might: the test fails all the same.
    with (
        pytest.raises(pytest.fail.Exception, match="connected a socket"),
        io_guard(request.node),
        contextlib.suppress(Exception),
    ):
        socket.create_connection(("127.0.0.1", 9), timeout=1)
