"""One whole game of random players at a new table, from the command line.

    python -m shikoku_sdk.bot ADDRESS PLAYERS [--seed S] [--strategy random|heuristic]
        [--api-key KEY]

Creates a table of PLAYERS seats at the gateway ADDRESS, takes every seat, starts it, plays
random legal actions (`shikoku_sdk.random_player`, or with --strategy heuristic the SDK's
heuristic player, `shikoku_sdk.heuristic`) until the game has ended, prints the result
and exits 0. Exits 1 with the reason when the server refuses a call or cannot be reached, or
when the game does not end. The API key is --api-key, else $SHIKOKU_API_KEY.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from shikoku.v1 import game_pb2
from shikoku_sdk.client import Client
from shikoku_sdk.documents import game_result
from shikoku_sdk.errors import ShikokuError
from shikoku_sdk.heuristic import HeuristicPlayer
from shikoku_sdk.random_player import RandomPlayer
from shikoku_sdk.seat_player import ACTIONS_LIMIT
from shikoku_sdk.tables import seat_table


class GameDidNotEnd(RuntimeError):
    """The random players had nothing left to do, or ran out of actions, before the end."""


def play_random_game(
    address: str,
    players: int,
    seed: int = 0,
    api_key: str | None = None,
    limit: int = ACTIONS_LIMIT,
    strategy: str = "random",
) -> game_pb2.GameState:
    """A whole game of `players` random players at a new table; returns its final state.
    Raises GameDidNotEnd if it stops short of the end, ShikokuError if a call fails."""
    with Client(address, api_key=api_key) as client:
        table = seat_table(client, players, display_name=f"{strategy} players ({players})")
        kind = HeuristicPlayer if strategy == "heuristic" else RandomPlayer
        player = kind(table.game_id, table.seats, seed)
        try:
            player.play(limit)
        except RuntimeError as error:
            raise GameDidNotEnd(str(error)) from None
        final = player.final_state()
    if game_result(final) is None:
        raise GameDidNotEnd(f"game {final.game_id} stopped at version {final.version} unfinished")
    return final


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m shikoku_sdk.bot",
        description="Plays one whole game of random players at a new table.",
    )
    parser.add_argument("address", help="the gateway, e.g. 127.0.0.1:50051")
    parser.add_argument("players", type=int, choices=range(2, 7), metavar="PLAYERS", help="2-6")
    parser.add_argument("--seed", type=int, default=0, help="the same seed plays the same game")
    parser.add_argument(
        "--strategy",
        choices=("random", "heuristic"),
        default="random",
        help="the players' strategy (default: random)",
    )
    parser.add_argument("--api-key", help="the application's API key (default: $SHIKOKU_API_KEY)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command; the exit status (0: the game has ended)."""
    args = _arguments(argv)
    try:
        final = play_random_game(
            args.address, args.players, args.seed, args.api_key, strategy=args.strategy
        )
    except ShikokuError as error:
        unreachable = error.code.name in ("UNAVAILABLE", "DEADLINE_EXCEEDED") and not error.reason
        what = f"cannot reach the gateway at {args.address}" if unreachable else "refused"
        print(f"shikoku_sdk.bot: {what}: {error}", file=sys.stderr)
        return 1
    except GameDidNotEnd as error:
        print(f"shikoku_sdk.bot: the game did not end: {error}", file=sys.stderr)
        return 1
    result = game_result(final)
    assert result is not None  # play_random_game returns ended games only
    print(f"game {final.game_id} ended after {final.version} events: {result.reason}")
    for seat, worth in result.ranking():
        print(f"  seat {seat}: {worth}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
