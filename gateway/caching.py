"""Bounded in-process caches of the gateway."""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(cache: OrderedDict[K, V], key: K, value: V, limit: int) -> V:
    """Keeps `value` in `cache`, forgetting the oldest entries beyond `limit`."""
    cache[key] = value
    while len(cache) > limit:
        cache.popitem(last=False)
    return value
