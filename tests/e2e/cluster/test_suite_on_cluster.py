"""The end-to-end tests that matter most for hosts, run again on the scaled form (see
conftest.py): a representative subset, since the whole suite twice would double `make test`.

Chosen: the walking skeleton and undo (the write path and its events), SDK bot games for 3, 4
and 6 players through two gateways, retried commands and lobby calls (request ids), watching
with resume, listings (the summaries projection), access rules, the two-round tournament,
a clock running out (the lobby's lease-held keeper), API keys, and an 18xx.games import. Rate
limits run on the cluster in test_rate_limits_on_cluster.py.
"""

from __future__ import annotations

import pytest
import redis

from shikoku_sdk.bot import play_random_game
from tests.e2e.api import System, sync_redis
from tests.e2e.test_access import (
    test_a_closed_table_shows_itself_to_its_seats,
    test_a_seat_acts_for_itself_in_turn,
    test_api_keys,
    test_the_host_administers_and_seats_mind_their_own,
    test_tournaments_are_run_by_their_host,
    world,
)
from tests.e2e.test_sdk import (
    test_a_lobby_call_whose_answer_was_lost_is_retried_safely,
    test_a_retried_command_is_applied_once,
    test_a_watch_that_loses_its_connection_resumes_without_gaps_or_repeats,
    test_acting_out_of_turn_is_a_shikoku_error_and_writes_nothing,
    test_the_random_player_plays_whole_games,
)
from tests.e2e.test_site_games import test_shared_game_replays_through_the_gateway
from tests.e2e.test_tournament import (
    test_a_clock_running_out,
    test_a_two_round_tournament,
)
from tests.e2e.test_walking_skeleton import (
    test_gateway_answers_health_and_reflection,
    test_tables_are_listed_with_their_games_summaries,
    test_the_slice,
    test_undo_through_the_gateway,
)
from tests.e2e.test_watching import test_watchers_that_hang_up_and_resume_see_the_whole_game

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

__all__ = [
    "test_a_clock_running_out",
    "test_a_closed_table_shows_itself_to_its_seats",
    "test_a_lobby_call_whose_answer_was_lost_is_retried_safely",
    "test_a_retried_command_is_applied_once",
    "test_a_seat_acts_for_itself_in_turn",
    "test_a_two_round_tournament",
    "test_a_watch_that_loses_its_connection_resumes_without_gaps_or_repeats",
    "test_acting_out_of_turn_is_a_shikoku_error_and_writes_nothing",
    "test_api_keys",
    "test_gateway_answers_health_and_reflection",
    "test_shared_game_replays_through_the_gateway",
    "test_tables_are_listed_with_their_games_summaries",
    "test_the_host_administers_and_seats_mind_their_own",
    "test_the_random_player_plays_whole_games",
    "test_the_slice",
    "test_tournaments_are_run_by_their_host",
    "test_undo_through_the_gateway",
    "test_watchers_that_hang_up_and_resume_see_the_whole_game",
    "world",
]


def test_a_bot_game_on_the_cluster_spreads_games_over_the_masters(system: System) -> None:
    """The SDK's random player (`python -m shikoku_sdk.bot`'s game) plays whole games on
    `shikoku run --cluster`, and the games' streams are spread over more than one master (each
    game on the slot of its id). A game's master is a draw of its id: up to 10 games, so that
    all on one master (3^-9) is no flake."""
    client = sync_redis(system.redis_url)
    assert isinstance(client, redis.RedisCluster)
    holding: list[str] = []
    for seed in range(10):
        final = play_random_game(system.gateway, 3, seed=seed, api_key=system.api_key)
        assert not final.acting_seats and final.version > 0
        holding = [
            node.name
            for node in client.get_primaries()
            if client.keys("game:*:events", target_nodes=node)
        ]
        if len(holding) > 1:
            break
    client.close()
    assert len(holding) > 1, holding
