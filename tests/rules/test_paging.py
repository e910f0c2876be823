"""Pages of legal actions: every action once, in order, and never two versions mixed."""

from __future__ import annotations

import pytest

from kernel.rejection import Rejected
from services.rules.shell.paging import MAX_PAGE_SIZE, page_of

ITEMS = list(range(7))


def all_pages(page_size: int, version: int = 5) -> list[list[int]]:
    pages, token = [], ""
    while True:
        page, token = page_of(ITEMS, version, page_size, token)
        pages.append(list(page))
        if not token:
            return pages


def test_pages_cover_every_item_once_in_order() -> None:
    assert all_pages(3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert all_pages(7) == [ITEMS]
    assert all_pages(0) == [ITEMS]  # 0: everything at once
    assert page_of([], 1, 3, "") == ([], "")


def reason(page_size: int, token: str, version: int = 5) -> str:
    with pytest.raises(Rejected) as refused:
        page_of(ITEMS, version, page_size, token)
    return refused.value.reason


def test_bad_sizes_and_tokens_are_refused() -> None:
    assert reason(-1, "") == "INVALID_PAGE"
    assert reason(MAX_PAGE_SIZE + 1, "") == "INVALID_PAGE"
    assert reason(2, "garbage") == "INVALID_PAGE"
    assert reason(2, "5.x") == "INVALID_PAGE"


def test_a_token_of_another_version_is_stale() -> None:
    _page, token = page_of(ITEMS, 5, 2, "")
    assert reason(2, token, version=6) == "STALE_PAGE_TOKEN"
