import sys

from shikoku_sdk import Client, RandomPlayer, game_result, seat_table

with Client(sys.argv[1]) as client:  # the gateway; the API key comes from $SHIKOKU_API_KEY
    table = seat_table(client, 3)  # a new table, every seat ours, started
    game = table.game_id
    for _ in range(5):  # five actions: the first one offered each time, with its defaults
        action = client.legal_actions(game).actions[0]
        answer = table.seats[action.seat].act(game, action)  # one command id, retried safely
        print(f"version {answer.version}:", ", ".join(event.type for event in answer.events))
    RandomPlayer(game, table.seats, seed=1).play()  # random players finish the game
    print(game_result(client.state(game)))
