"""A generated block of a hand-written document: what lies between its two marker lines is made
anew, the rest kept."""

from __future__ import annotations


def with_block(document: str, begin: str, end: str, block: str, name: str) -> str:
    """`document` with `block` between the lines `begin` and `end` (`name` names the document
    when they are missing)."""
    before, found_begin, rest = document.partition(begin)
    _old, found_end, after = rest.partition(end)
    if not found_begin or not found_end:
        raise ValueError(f"{name}: the markers {begin!r} and {end!r} are missing")
    return f"{before}{begin}\n{block}\n{end}{after}"
