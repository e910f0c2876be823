"""The SDK's heuristic player against the real system: a whole 3-player game over gRPC (the
title from TitleService, the state from GetState, routes from RoutesService.Optimize)."""

from __future__ import annotations

import pytest

from shikoku_sdk import game_result
from shikoku_sdk.bot import play_random_game
from tests.e2e.api import System

pytestmark = pytest.mark.e2e


def test_the_heuristic_player_plays_a_whole_game(system: System) -> None:
    final = play_random_game(
        system.gateway, 3, seed=3, api_key=system.api_key, strategy="heuristic"
    )
    result = game_result(final)
    assert not final.acting_seats and result is not None
    assert result.reason == "bank"
    assert sorted(result.net_worths) == [1, 2, 3]
