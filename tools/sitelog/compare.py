"""Comparing our state with the site engine's recorded state after an action (the
`<game>.states.jsonl` files): the first difference says where a replay went wrong."""

from __future__ import annotations

from typing import Any

from tools.sitelog.export_format import SiteGame


def differences(game: SiteGame, site: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """What differs in the figures both engines keep: bank, cash, shares, privates, prices,
    trains, initial offering, floating, open market. Empty when they agree."""
    found: list[str] = []

    def check(what: str, theirs: Any, mine: Any) -> None:
        if theirs != mine:
            found.append(f"{what}: site {theirs!r}, ours {mine!r}")

    if not (ours.get("bank_broken") or site.get("bank", 0) < 0):
        check("bank", site["bank"], ours["bank"])
    seat_of = {p.id: seat for seat, p in enumerate(game.players, start=1)}
    players = {int(p["seat"]): p for p in ours["players"]}
    for site_id, theirs in site["players"].items():
        mine = players[seat_of[site_id]]
        check(f"player {site_id} cash", theirs["cash"], mine["cash"])
        shares = {c: 10 * n for c, n in mine["shares"].items()}
        check(f"player {site_id} shares", theirs["shares"], shares)
        check(f"player {site_id} privates", sorted(theirs["companies"]), sorted(mine["privates"]))
    corporations = {c["id"]: c for c in ours["corporations"]}
    for corporation_id, theirs in site["corps"].items():
        mine = corporations[corporation_id]
        check(f"{corporation_id} cash", theirs["cash"], mine["cash"])
        check(f"{corporation_id} price", theirs["price"], mine["share_price"])
        check(f"{corporation_id} trains", sorted(theirs["trains"]), sorted(mine["trains"]))
        check(f"{corporation_id} initial offering", theirs["ipo"], 10 * mine["initial_offering"])
        check(f"{corporation_id} floated", theirs["floated"], mine["floated"])
        check(f"{corporation_id} privates", sorted(theirs["companies"]), sorted(mine["privates"]))
        check(f"{corporation_id} tokens", theirs["tokens"], mine["tokens_placed"])
        check(
            f"{corporation_id} open market",
            site["pool"].get(corporation_id, 0),
            10 * mine["open_market"],
        )
    return found
