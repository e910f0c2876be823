"""The solver pool's settings, and its stopping, on a real pool of worker processes."""

from __future__ import annotations

import asyncio
import time

import pytest

from services.routes.shell.pool import PoolSettings, SolverPool, usable_cpus
from tests.routes.pathological import pathological_message

pytestmark = pytest.mark.io  # real pools of worker processes


def test_the_pool_has_a_worker_per_cpu_and_twice_as_many_waiting_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SHIKOKU_ROUTES_WORKERS", raising=False)
    monkeypatch.delenv("SHIKOKU_ROUTES_QUEUE", raising=False)
    cpus = usable_cpus()
    assert PoolSettings.from_env() == PoolSettings(cpus, 2 * cpus)
    monkeypatch.setenv("SHIKOKU_ROUTES_WORKERS", "3")
    assert PoolSettings.from_env() == PoolSettings(3, 6)
    monkeypatch.setenv("SHIKOKU_ROUTES_QUEUE", "0")
    assert PoolSettings.from_env() == PoolSettings(3, 0)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SHIKOKU_ROUTES_WORKERS", "0"),
        ("SHIKOKU_ROUTES_WORKERS", "two"),
        ("SHIKOKU_ROUTES_QUEUE", "-1"),
        ("SHIKOKU_ROUTES_QUEUE", "1.5"),
    ],
)
def test_a_bad_setting_stops_the_service_with_a_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        PoolSettings.from_env()
    assert name in str(stopped.value) and repr(value) in str(stopped.value)


async def test_closing_the_pool_ends_a_search_that_has_no_deadline() -> None:
    """A search with no deadline of its own (an internal caller without one) would run for
    minutes; closing the pool makes it answer with the best it has, and the pool ends."""
    pool = SolverPool(PoolSettings(workers=1, queue=0))
    await pool.start()
    search = asyncio.create_task(pool.solve(pathological_message(), None))
    while pool.admitted == 0:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.5)
    assert not search.done()
    closing = time.monotonic()
    await pool.close()
    answer = await asyncio.wait_for(search, 5)
    assert time.monotonic() - closing < 3.0
    assert not answer.proven and answer.routes
