"""Our state in the site engine's per-action state format (the `<game>.states.jsonl` files),
and the comparison of the two: the first difference says where a replay went wrong.

`site_state` writes the figures both engines keep (bank, cash, shares, privates, prices,
trains, tokens, initial offering, floating, open market, round and phase) as the site does;
`differences` compares exactly those, so `shikoku import --states` and the tests read the
same mapping.
"""

from __future__ import annotations

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


def site_state(game: SiteGame, action_id: int, ours: dict[str, Any]) -> dict[str, Any]:
    """Our state document `ours`, after the site action `action_id`, in the site's format."""
    site_id = {seat: p.id for seat, p in enumerate(game.players, start=1)}
    round_ = ours.get("round") or {}
    return {
        "id": action_id,
        "round": ROUND_NAMES.get(str(round_.get("type", "")), ""),
        "phase": ours["phase"],
        "bank": _whole(ours["bank"]),
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
    }


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
