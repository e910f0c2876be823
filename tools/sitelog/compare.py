"""Our state in the site engine's per-action state format (the `<game>.states.jsonl` files),
and the comparison of the two: the first difference says where a replay went wrong.

`site_state` writes every field of the site's format (shared/fixtures/18xx.games/1889/
README.md: round, turn, round number, phase, bank, player order, whose turn is next, each
player's cash, shares and privates, each corporation's cash, price, trains, tokens, initial
offering, floating and privates, the open market, finished) as the site does; `differences`
compares the figures both engines keep, so `shikoku import --states` and the tests read the
same mapping. `StateLog` follows a replay from its start, for the one figure our state does
not hold: the site's `turn` (the set of rounds) during an operating round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tools.sitelog.export_format import SiteGame

ROUND_NAMES = {
    "private_auction": "Auction Round",
    "stock_round": "Stock Round",
    "operating_round": "Operating Round",
}


def _whole(value: Any) -> Any:
    """A number as the site writes it: 420, not 420.0 (our document may come through
    protobuf's Struct, whose numbers are all doubles)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def site_state(
    game: SiteGame,
    action_id: int,
    ours: dict[str, Any],
    acting: Sequence[int] = (),
    turn: int = 1,
) -> dict[str, Any]:
    """Our state document `ours`, after the site action `action_id`, in the site's format;
    `acting` are our acting seats, `turn` the set of rounds under way (the site's turn: the
    number of the last stock round, 1 before it)."""
    site_id = {seat: p.id for seat, p in enumerate(game.players, start=1)}
    round_ = ours.get("round") or {}
    kind = str(round_.get("type", ""))
    return {
        "id": action_id,
        "round": ROUND_NAMES.get(kind, ""),
        "turn": int(round_["number"]) if kind == "stock_round" else turn,
        "round_num": int(round_["number"]) if kind == "operating_round" else 1,
        "phase": ours["phase"],
        "bank": _whole(ours["bank"]),
        "player_order": [site_id[seat] for seat in _from_priority(ours)],
        "players": {
            site_id[int(p["seat"])]: {
                "cash": _whole(p["cash"]),
                "shares": {c: _whole(10 * n) for c, n in p["shares"].items()},
                "companies": list(p["privates"]),
            }
            for p in ours["players"]
        },
        "corps": {
            c["id"]: {
                "cash": _whole(c["cash"]),
                "price": _whole(c["share_price"]),
                "trains": list(c["trains"]),
                "tokens": _whole(c["tokens_placed"]),
                "ipo": _whole(10 * c["initial_offering"]),
                "floated": c["floated"],
                "companies": list(c["privates"]),
            }
            for c in ours["corporations"]
        },
        "pool": {
            c["id"]: _whole(10 * c["open_market"]) for c in ours["corporations"] if c["open_market"]
        },
        "finished": ours.get("result") is not None,
        "next": _next(ours, acting, site_id),
    }


def _from_priority(ours: dict[str, Any]) -> list[int]:
    """The seats in table order from the priority deal's holder on, as the site's player
    order is."""
    seats = [int(p["seat"]) for p in ours["players"]]
    priority = int(ours.get("priority_deal") or seats[0])
    start = seats.index(priority) if priority in seats else 0
    return seats[start:] + seats[:start]


#: The privates as the site's engine names them (lib/engine/game/g_1889/entities.rb), where
#: its state names the company acting (our title keeps the rulebook's names).
SITE_PRIVATE_NAMES = {
    "TR": "Takamatsu E-Railroad",
    "MF": "Mitsubishi Ferry",
    "ER": "Ehime Railway",
    "SMR": "Sumitomo Mines Railway",
    "DR": "Dougo Railway",
    "SIR": "South Iyo Railway",
    "UTF": "Uno-Takamatsu Ferry",
}


def _next(ours: dict[str, Any], acting: Sequence[int], site_id: dict[int, str]) -> str | None:
    """Who acts next as the site names it: in an operating round the private whose ability
    is pending (the ER's seller's lay), else the first corporation (in the title's order)
    that must discard trains, else the operating corporation; a player by id otherwise; None
    when nobody may act."""
    round_ = ours.get("round") or {}
    if round_.get("type") == "operating_round":
        ability = round_.get("ability") or {}
        if ability:
            company = str(ability["company"])
            return SITE_PRIVATE_NAMES.get(company, company)
        discarding = set(round_.get("discarding") or ())
        crowded = [str(c["id"]) for c in ours["corporations"] if c["id"] in discarding]
        return crowded[0] if crowded else round_.get("operating") or None
    return site_id[int(acting[0])] if acting else None


class StateLog:
    """Our states in the site's format, one per state of a replay taken in order from its
    start: it keeps the site's turn through the operating rounds."""

    def __init__(self, game: SiteGame) -> None:
        self.game = game
        self.turn = 1
        self.next: str | None = None
        #: The operating round last seen: its number, and how many corporations had operated.
        self.operating: tuple[int, int] | None = None

    def state(self, action_id: int, ours: dict[str, Any], acting: Sequence[int]) -> dict[str, Any]:
        round_ = ours.get("round") or {}
        if round_.get("type") == "stock_round":
            self.turn = int(round_["number"])
        operating = None
        if round_.get("type") == "operating_round":
            operating = (int(round_["number"]), len(round_.get("operated") or ()))
        if operating and operating[0] == 1 and self.operating and self.operating > operating:
            self.turn += 1  # a new set, after a stock round that every player passed at once
        self.operating = operating
        line = site_state(self.game, action_id, ours, acting, self.turn)
        if line["finished"] and line["next"] is None:
            line["next"] = self.next  # the site's game stops with its entity to act as it was
        self.next = line["next"]
        return line


COMPARED_PLAYER = ("cash", "shares", "companies")
# Lists the engines keep in different orders (ours by kind, the site's as acquired).
UNORDERED = ("trains", "companies")


def _comparable(key: str, value: Any) -> Any:
    return sorted(value) if key in UNORDERED else value


COMPARED_CORPORATION = ("cash", "price", "trains", "ipo", "floated", "companies", "tokens")


def differences(game: SiteGame, site: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """What differs in the figures both engines keep. Empty when they agree. The bank is not
    compared once it is broken (the site lets it go negative)."""
    mine = site_state(game, int(site.get("id", 0)), ours)
    found: list[str] = []

    def check(what: str, theirs: Any, own: Any) -> None:
        if theirs != own:
            found.append(f"{what}: site {theirs!r}, ours {own!r}")

    if not (ours.get("bank_broken") or site.get("bank", 0) < 0):
        check("bank", site["bank"], mine["bank"])
    for player_id, theirs in site["players"].items():
        for key in COMPARED_PLAYER:
            check(
                f"player {player_id} {key}",
                _comparable(key, theirs[key]),
                _comparable(key, mine["players"][player_id][key]),
            )
    names = {"ipo": "initial offering", "companies": "privates"}
    for corporation_id, theirs in site["corps"].items():
        for key in COMPARED_CORPORATION:
            check(
                f"{corporation_id} {names.get(key, key)}",
                _comparable(key, theirs[key]),
                _comparable(key, mine["corps"][corporation_id][key]),
            )
        check(
            f"{corporation_id} open market",
            site["pool"].get(corporation_id, 0),
            mine["pool"].get(corporation_id, 0),
        )
    return found
