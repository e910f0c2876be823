"""Pages of a game's legal actions. A token names the version its listing describes and where
the next page starts, so a listing never mixes the actions of two versions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from kernel.rejection import Kind, Rejected

Item = TypeVar("Item")

MAX_PAGE_SIZE = 1000


def page_of(
    items: Sequence[Item], version: int, page_size: int, page_token: str
) -> tuple[Sequence[Item], str]:
    """The page of `items` (all of them at `version`) that the request asks for, and the token
    of the next page ("" after the last)."""
    if not 0 <= page_size <= MAX_PAGE_SIZE:
        raise Rejected(
            "INVALID_PAGE",
            f"page_size is 1 to {MAX_PAGE_SIZE}, or 0 for everything",
            Kind.INVALID_ARGUMENT,
            {"field": "page_size"},
        )
    start = _start(page_token, version)
    end = len(items) if page_size == 0 else min(start + page_size, len(items))
    return items[start:end], (f"{version}.{end}" if end < len(items) else "")


def _start(page_token: str, version: int) -> int:
    if not page_token:
        return 0
    token_version, _, offset = page_token.partition(".")
    if not (token_version.isdigit() and offset.isdigit()):
        raise Rejected(
            "INVALID_PAGE",
            "page_token comes from a previous page's next_page_token",
            Kind.INVALID_ARGUMENT,
            {"field": "page_token"},
        )
    if int(token_version) != version:
        raise Rejected(
            "STALE_PAGE_TOKEN",
            f"the game moved on from version {token_version} to {version}: list again",
            Kind.FAILED_PRECONDITION,
            {"version": version},
        )
    return int(offset)
