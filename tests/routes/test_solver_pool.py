"""The solver pool's settings, and its stopping, on a real pool of worker processes."""

from __future__ import annotations

import asyncio
import time

import pytest

from infra.settings import SettingsError, load
from services.routes.shell.pool import PoolSettings, SolverPool, usable_cpus
from services.routes.shell.settings import RoutesSettings
from tests.routes.pathological import pathological_message

pytestmark = pytest.mark.io  # real pools of worker processes


def pool(environ: dict[str, str]) -> PoolSettings:
    return load(RoutesSettings, {"SHIKOKU_INTERNAL_TOKEN": "t", **environ}, "routes").pool


def test_the_pool_has_a_worker_per_cpu_and_twice_as_many_waiting_by_default() -> None:
    cpus = usable_cpus()
    assert pool({}) == PoolSettings(cpus, 2 * cpus)
    assert pool({"SHIKOKU_ROUTES_WORKERS": "3"}) == PoolSettings(3, 6)
    assert pool({"SHIKOKU_ROUTES_WORKERS": "3", "SHIKOKU_ROUTES_QUEUE": "0"}) == PoolSettings(3, 0)


@pytest.mark.parametrize(
    ("name", "value", "least"),
    [
        ("SHIKOKU_ROUTES_WORKERS", "0", 1),
        ("SHIKOKU_ROUTES_WORKERS", "two", 1),
        ("SHIKOKU_ROUTES_QUEUE", "-1", 0),
        ("SHIKOKU_ROUTES_QUEUE", "1.5", 0),
    ],
)
def test_a_bad_setting_is_refused_with_a_line_naming_it(name: str, value: str, least: int) -> None:
    with pytest.raises(SettingsError) as refused:
        pool({name: value})
    expected = f"{name}: expected a whole number, at least {least}, got {value!r}"
    assert refused.value.problems == [expected]


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
