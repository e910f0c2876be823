"""A game's state document as plain Python values, and its result once the game has ended."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from shikoku.v1 import game_pb2


def state_document(state: game_pb2.GameState) -> dict[str, Any]:
    """The state document (players, corporations, market, board...) as plain Python values.
    Numbers come as floats, as JSON has them."""
    return json_format.MessageToDict(state.state)


@dataclass(frozen=True)
class GameResult:
    """How a game ended: `reason` ("bankrupt", "bank" or "ended") and each seat's final net
    worth in yen, by seat number."""

    reason: str
    net_worths: dict[int, int]

    def ranking(self) -> list[tuple[int, int]]:
        """(seat, net worth) pairs, richest first."""
        return sorted(self.net_worths.items(), key=lambda entry: (-entry[1], entry[0]))


def game_result(state: game_pb2.GameState) -> GameResult | None:
    """The result of the game `state` is a state of, or None while it goes on."""
    result = state_document(state).get("result")
    if not result:
        return None
    worths = {int(e["seat"]): int(e["net_worth"]) for e in result.get("net_worths", [])}
    return GameResult(str(result["reason"]), worths)
