"""Plays a whole game of random legal actions through the SDK and prints the result.

    python -m examples.random_bot 127.0.0.1:50051 4

Creates a table of N seats, takes them all, starts it, then asks for the legal actions and plays
one at random (the choice and its parameters come from shikoku_sdk.random_player) until the game
is over.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from shikoku_sdk import Client, game_pb2, state_document
from shikoku_sdk.random_player import choose, command_for


def seat_table(client: Client, players: int) -> tuple[str, dict[int, Client]]:
    """Creates a table of `players` seats, takes them all and starts it: the game id, and a
    client acting for each seat (over `client`'s channel)."""
    created = client.create_table(players, display_name=f"random bots ({players})")
    table_id = created.table.table_id
    seats: dict[int, Client] = {}
    for n in range(1, players + 1):
        joined = client.join_table(table_id, f"bot {n}")
        seats[joined.seat] = client.with_credential(joined.seat_token)
    game_id = client.with_credential(created.host_token).start_table(table_id).game_id
    return game_id, seats


Answered = Callable[[game_pb2.SubmitCommandResponse, float], None]


def play(
    game_id: str,
    seats: dict[int, Client],
    rng: random.Random,
    limit: int = 5000,
    on_answer: Answered | None = None,
) -> game_pb2.GameState:
    """Plays random legal actions for `seats` until none is left; returns the final state.
    `on_answer` is told each acknowledged command's answer and how long it took (seconds)."""
    reader = next(iter(seats.values()))  # reads as a seat: spectators may see the game late

    def best_routes(corporation: str) -> list[game_pb2.RouteRun]:
        solution = reader.best_routes(game_id, corporation)
        return [game_pb2.RouteRun(train=r.train, hexes=r.hexes) for r in solution.routes]

    for _ in range(limit):
        actions = [a for a in reader.legal_actions(game_id).actions if a.seat in seats]
        if not actions:
            return reader.state(game_id)
        action = choose(actions, rng)
        command = command_for(action, rng, best_routes)
        begin = time.perf_counter()
        answer = seats[action.seat].act(game_id, command)
        if on_answer is not None:
            on_answer(answer, time.perf_counter() - begin)
    raise RuntimeError(f"game {game_id} did not end within {limit} actions")


def play_random_game(
    address: str, players: int, seed: int = 0, api_key: str | None = None
) -> game_pb2.GameState:
    """A whole game of `players` random bots at a new table; returns the final state."""
    with Client(address, api_key=api_key) as client:
        game_id, seats = seat_table(client, players)
        return play(game_id, seats, random.Random(seed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("address", nargs="?", default="127.0.0.1:50051", help="the gateway")
    parser.add_argument("players", nargs="?", type=int, default=3, help="2 to 6")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--api-key", help="the application's API key (default: $SHIKOKU_API_KEY)")
    args = parser.parse_args()
    final = play_random_game(args.address, args.players, args.seed, args.api_key)
    result = state_document(final)["result"]
    print(f"game {final.game_id} over after {final.version} events: {result['reason']}")
    for entry in sorted(result["net_worths"], key=lambda e: -e["net_worth"]):
        print(f"  seat {int(entry['seat'])}: {int(entry['net_worth'])}")


if __name__ == "__main__":
    main()
