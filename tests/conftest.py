"""Shared fixtures. Redis is always real: REDIS_URL if set, else a testcontainers Redis when a
Docker daemon answers, else the embedded redis-server binary on a free loopback port."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest
import redis.asyncio

from shikoku_dev.redis_cluster import EmbeddedRedisCluster
from shikoku_dev.redis_server import EmbeddedRedis
from tests.io_guard import io_guard


def _docker_answers() -> bool:
    try:
        import docker  # type: ignore[import-untyped]

        docker.from_env(timeout=2).ping()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    if url := os.environ.get("REDIS_URL"):
        yield url
    elif _docker_answers():
        from testcontainers.redis import RedisContainer

        with RedisContainer("redis:7") as container:
            host = container.get_container_host_ip()
            port = container.get_exposed_port(6379)
            yield f"redis://{host}:{port}/0"
    else:
        with EmbeddedRedis() as server:
            yield server.url


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[redis.asyncio.Redis]:
    client = redis.asyncio.Redis.from_url(redis_url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[EmbeddedRedisCluster]:
    """One local Redis Cluster (3 masters, no replicas) for the whole session, started when a
    test first asks for it (tests/test_eventstore.py, tests/reliability/cluster/)."""
    with EmbeddedRedisCluster(masters=3) as cluster:
        yield cluster


# Markers by cost (pyproject.toml): `pure` is given here, by what a test uses; `e2e`, `slow` and
# `io` are written on the modules (`pytestmark`). `make fast` runs `pure and not slow`, `make unit`
# `not e2e and not slow`, `make test` everything.

# The folders of the pure cores' tests (the rules domain and board, the routes engine, the lobby
# domain, the site's export format): `make fast` collects just these (tests/test_markers.py holds
# the Makefile to this list).
PURE_FOLDERS = frozenset({"board", "routes", "rules", "lobby", "sitelog", "crosscheck"})

# Fixtures that reach Redis, a socket or a process. pytest lists every fixture a test needs,
# however indirectly, so any fixture standing on one of these counts too.
IO_FIXTURES = frozenset(
    {
        "redis_url",
        "redis_client",
        "redis_cluster",
        "cluster_redis",
        "cluster",
        "system",
        "cluster_system",
        "client",
        "web_api",
        "web_system",
        "grpc_client",
        "browser",
        "page",
    }
)

_TESTS = Path(__file__).resolve().parent


def is_pure(item: pytest.Item) -> bool:
    """In a pure folder, marked neither `e2e` nor `io`, and asking for no fixture of I/O."""
    path = Path(str(item.path)).resolve()
    if not path.is_relative_to(_TESTS) or path.relative_to(_TESTS).parts[0] not in PURE_FOLDERS:
        return False
    if any(item.get_closest_marker(name) for name in ("e2e", "io")):
        return False
    return not IO_FIXTURES.intersection(getattr(item, "fixturenames", ()))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_pure(item):
            item.add_marker(pytest.mark.pure)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with io_guard(item) if item.get_closest_marker("pure") else nullcontext():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with io_guard(item) if item.get_closest_marker("pure") else nullcontext():
        return (yield)
