"""Watches a game and prints the stock market and the board as the game goes.

    python -m examples.spectator 127.0.0.1:50051 GAME_ID [--token TOKEN]

Uses `Client.watch(include_state=True)`, which resumes by itself if the connection breaks, and
prints a compact view whenever the market, the board or the round changes; it stops at the end
of the game with the result.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from shikoku_sdk import Client, state_document


def market_line(document: dict[str, Any]) -> str:
    """Each corporation's share price ("-" until it is parred), e.g. "AR 80  IR -"."""
    prices = [
        f"{c['id']} {int(c['share_price']) if c.get('share_price') is not None else '-'}"
        for c in document.get("corporations", [])
    ]
    return "  ".join(prices)


def board_lines(document: dict[str, Any], width: int = 96) -> list[str]:
    """The tiles laid, by hex: "K8:57/2" is tile 57 at rotation 2 on hex K8."""
    tiles = document.get("board", {}).get("tiles", [])
    laid = " ".join(f"{t['hex']}:{t['tile']}/{int(t.get('rotation', 0))}" for t in tiles)
    return textwrap.wrap(laid, width) or ["(no tiles laid)"]


def round_line(document: dict[str, Any]) -> str:
    round_ = document.get("round") or {}
    kind = str(round_.get("type", "-")).replace("_", " ")
    number = f" {int(round_['number'])}" if round_.get("number") is not None else ""
    operating = f", {round_['operating']} operating" if round_.get("operating") else ""
    return f"{kind}{number}{operating}, phase {document.get('phase', '-')}"


def render(version: int, document: dict[str, Any]) -> str:
    tiles = len(document.get("board", {}).get("tiles", []))
    lines = [
        f"== version {version}: {round_line(document)}",
        f"   market: {market_line(document)}",
        f"   board ({tiles} tiles):",
        *(f"     {line}" for line in board_lines(document)),
    ]
    return "\n".join(lines)


def spectate(
    address: str,
    game_id: str,
    token: str | None = None,
    from_version: int = 1,
    api_key: str | None = None,
) -> None:
    with (
        Client(address, token, api_key=api_key) as client,
        client.watch(game_id, from_version, include_state=True) as watch,
    ):
        shown: tuple[str, ...] = ()
        document: dict[str, Any] = {}
        for update in watch:
            if update.state is None:
                continue
            document = state_document(update.state)
            view = (market_line(document), *board_lines(document), round_line(document))
            if view != shown:
                print(render(update.event.version, document), flush=True)
                shown = view
        if result := document.get("result"):
            worths = ", ".join(
                f"seat {int(e['seat'])}: {int(e['net_worth'])}" for e in result["net_worths"]
            )
            print(f"game over ({result['reason']}): {worths}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("address", help="the gateway, e.g. 127.0.0.1:50051")
    parser.add_argument("game_id")
    parser.add_argument("--token", help="a seat or host token (for tables closed to spectators)")
    parser.add_argument("--from-version", type=int, default=1)
    parser.add_argument("--api-key", help="the application's API key (default: $SHIKOKU_API_KEY)")
    args = parser.parse_args()
    spectate(args.address, args.game_id, args.token, args.from_version, args.api_key)


if __name__ == "__main__":
    main()
