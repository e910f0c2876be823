"""The one total order on walks that every tie-break uses.

A walk is compared by its alternating sequence `node, segment, node, …, node` (ids, or their
indices in sorted-id order, which compare the same way), a shorter sequence first when it is a
prefix of the other. An undirected route is written in the direction whose sequence is smaller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T", int, str)


def walk_key(nodes: Sequence[T], segments: Sequence[T]) -> tuple[T, ...]:
    key: list[T] = [nodes[0]]
    for seg, node in zip(segments, nodes[1:], strict=True):
        key.append(seg)
        key.append(node)
    return tuple(key)


def canonical(nodes: Sequence[T], segments: Sequence[T]) -> tuple[tuple[T, ...], tuple[T, ...]]:
    """The walk in the direction with the smaller `walk_key`."""
    forward = (tuple(nodes), tuple(segments))
    backward = (tuple(reversed(nodes)), tuple(reversed(segments)))
    if walk_key(*backward) < walk_key(*forward):
        return backward
    return forward
