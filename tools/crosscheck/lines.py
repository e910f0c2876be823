"""Our state and the site's as two lines of the site's per-action format, and every field in
which they differ.

Our line is `tools.sitelog.compare`'s (`StateLog`: the one `shikoku import --states` writes)
plus the priority deal's holder, which the site's state (`site_states.rb`) also carries. The
comparison covers the whole game's position (round, turn, round number, phase, finished, the
bank even once it is broken, whose turn it is, the priority deal, the player order) as well as
each player's and each corporation's figures and the open market."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tools.sitelog.compare import StateLog
from tools.sitelog.export_format import Action, SiteGame

#: The game's own fields, by their name in the line and in a difference.
GAME_FIELDS = {
    "round": "round",
    "turn": "turn",
    "round_num": "round number",
    "phase": "phase",
    "finished": "finished",
    "bank": "bank",
    "next": "next to act",
    "priority": "priority deal",
    "player_order": "player order",
}
PLAYER_FIELDS = {"cash": "cash", "shares": "shares", "companies": "privates"}
CORPORATION_FIELDS = {
    "cash": "cash",
    "price": "price",
    "trains": "trains",
    "tokens": "tokens",
    "ipo": "initial offering",
    "floated": "floated",
    "companies": "privates",
}
# Lists the engines keep in different orders (ours by kind, the site's as acquired).
UNORDERED = frozenset({"trains", "companies"})


class OurLines:
    """Our states of one replay, taken in order from its start, as lines of the site's
    format. Following the replay, it also keeps what the priority deal's forecast needs in
    the private auction: who last bought a private outright."""

    def __init__(self, game: SiteGame) -> None:
        self._log = StateLog(game)
        self._site_id = {seat: str(p.id) for seat, p in enumerate(game.players, start=1)}
        self._privates: dict[str, list[str]] = {}
        self._last_buyer: str | None = None
        self._auctioning = False  # a private auctioned among its bidders, before the action
        self._presidents: dict[str, str] = {}  # corporation -> its president, before an action
        self._bankrupt: set[str] = set()

    def line(
        self,
        action_id: int,
        ours: dict[str, Any],
        acting: Sequence[int],
        action: Action | None = None,
    ) -> dict[str, Any]:
        line = self._log.state(action_id, ours, acting)
        self._follow_auction(ours, line, action)
        if action is not None and action.get("type") == "bankrupt":
            president = self._presidents.get(str(action.get("entity")))
            self._bankrupt |= {president} if president else set()
        self._presidents = {
            str(c["id"]): self._site_id[int(c["president"])]
            for c in ours["corporations"]
            if c.get("president")
        }
        # The site's priority deal passes over bankrupt players (Game::Base#priority_deal_player).
        order = [player for player in line["player_order"] if player not in self._bankrupt]
        line["priority"] = self._priority(ours, line["next"], order)
        return line

    def _follow_auction(
        self, ours: dict[str, Any], line: dict[str, Any], action: Action | None
    ) -> None:
        """The site counts as the last to act in its auction only a player whose bid bought
        the topmost private at once (`WaterfallAuction#placement_bid`), not an auction's
        winner nor a private taken for nothing."""
        privates = {player: list(p["companies"]) for player, p in line["players"].items()}
        round_ = ours.get("round") or {}
        auctioning, self._auctioning = self._auctioning, bool(round_.get("closed_auction"))
        if round_.get("type") != "private_auction":
            self._last_buyer = None
        elif action is not None and action.get("type") == "bid" and not auctioning:
            bidder = str(action.get("entity"))
            company = action.get("company")
            if (
                bidder
                and company in privates.get(bidder, [])
                and company not in self._privates.get(bidder, [])
            ):
                self._last_buyer = bidder
        self._privates = privates

    def _priority(self, ours: dict[str, Any], next_: str | None, order: list[str]) -> str | None:
        """The priority deal as the site's engine gives it (`Game::Base#priority_deal_player`):
        in a round of players, the player who would act first if everyone passed from now on
        (the one after the last to act), else its holder, first in the player order."""
        if not order:
            return None
        kind = (ours.get("round") or {}).get("type")
        if kind == "private_auction":
            last = self._last_buyer
            return order[(order.index(last) + 1) % len(order)] if last in order else order[0]
        if kind != "stock_round" or next_ not in order:
            return order[0]
        turn = order.index(next_)
        round_ = ours["round"]
        if round_.get("turn_actions"):
            return order[(turn + 1) % len(order)]  # the one to act has acted in this turn
        return order[(turn - int(round_.get("passes_in_a_row") or 0)) % len(order)]


def _comparable(key: str, value: Any) -> Any:
    return sorted(value) if key in UNORDERED and value is not None else value


def line_differences(site: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """Each field in which our line differs from the site's, as "<what>: site X, ours Y";
    empty when they agree. A field missing on one side differs (None)."""
    found: list[str] = []

    def check(what: str, key: str, theirs: Any, own: Any) -> None:
        theirs, own = _comparable(key, theirs), _comparable(key, own)
        if theirs != own:
            found.append(f"{what}: site {theirs!r}, ours {own!r}")

    for key, what in GAME_FIELDS.items():
        check(what, key, site.get(key), ours.get(key))
    for kind, fields, where in (
        ("players", PLAYER_FIELDS, "player {} "),
        ("corps", CORPORATION_FIELDS, "{} "),
    ):
        theirs_all, own_all = site.get(kind) or {}, ours.get(kind) or {}
        for name in sorted(theirs_all.keys() | own_all.keys()):
            theirs, own = theirs_all.get(name) or {}, own_all.get(name) or {}
            for key, what in fields.items():
                check(where.format(name) + what, key, theirs.get(key), own.get(key))
    site_pool, our_pool = site.get("pool") or {}, ours.get("pool") or {}
    for corporation in sorted(site_pool.keys() | our_pool.keys()):
        check(
            f"{corporation} open market",
            "pool",
            site_pool.get(corporation, 0),
            our_pool.get(corporation, 0),
        )
    return found
