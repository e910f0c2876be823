"""A table's rules profile: recorded when the table is created, refused if the title has none
of that name."""

from __future__ import annotations

import pytest

from kernel.rejection import Rejected
from services.lobby.domain import tables
from services.rules.board import load_title


def created(rules_profile: str) -> tables.Table:
    return tables.fold(
        tables.create("t-1", 3, "", False, False, "hash", rules_profile=rules_profile)
    )


@pytest.mark.parametrize(
    ("asked", "kept"), [("", "rulebook"), ("rulebook", "rulebook"), ("18xx.games", "18xx.games")]
)
def test_a_table_keeps_its_rules_profile(asked: str, kept: str) -> None:
    assert created(asked).rules_profile == kept


def test_a_table_created_before_profiles_plays_the_rulebook() -> None:
    (kind, payload), *_ = tables.create("t-1", 3, "", False, False, "hash")
    del payload["rules_profile"]
    assert tables.fold([(kind, payload)]).rules_profile == "rulebook"


def test_an_unknown_rules_profile_is_refused_when_the_table_is_created() -> None:
    with pytest.raises(Rejected) as refused:
        created("house rules")
    assert refused.value.reason == "UNKNOWN_RULES_PROFILE"
    assert refused.value.details == {"field": "options.rules_profile"}


def test_the_lobby_offers_exactly_the_titles_profiles() -> None:
    assert set(tables.RULES_PROFILES) == set(load_title("1889").profiles)
    assert tables.DEFAULT_RULES_PROFILE == "rulebook"
