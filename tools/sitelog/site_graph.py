"""Where the site's cached track graph goes stale, for our exports and imports to follow it.

An 18xx.games engine defect (revision 111f7f698005): `Game::Base#place_home_token` puts a
corporation's home token down without clearing the engine's track graph, which is cleared only
when a tile is laid or a token placed in a corporation's turn (`clear_graph_for_entity`). A
corporation whose graph the site worked out in its last turn, with no lay or token since, still
walks through a city that a home token has filled since (a city full of another's tokens blocks
a route, rulebook 4.2), so at its next token step the site may find a city with room beyond it
(`Step::Token#can_place_token?`) and wait for a pass where ours, finding none, went on.

`SiteGraph` follows a game's events (by kind and fields, as the importer reads them) and says
where that happens: the exporter writes the pass the site waits for there, and the importer
expects it. Our rules do not change: no token can be placed there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from services.rules import board
from services.rules.board.position import CityRef, PlacedTile, Position
from services.rules.board.title import Title

#: A home token the site's held graph does not show: its city, and whose it is.
Unseen = tuple[CityRef, str]


@dataclass
class SiteGraph:
    #: The corporations whose graph the site holds, each with the home tokens placed since.
    held: dict[str, set[Unseen]] = field(default_factory=dict)
    operating: str = ""

    def observe(self, kind: str, fields: Mapping[str, Any]) -> None:
        """One event, by its type name and fields. The operating corporation's steps ask for
        its graph all through its turn: the site holds it from the turn's start, and again
        right after each clear."""
        if kind in ("TileLaid", "TokenPlaced"):
            self.held = {self.operating: set()} if self.operating else {}
        elif kind == "HomeTokenPlaced":
            city = (str(fields["hex"]), int(fields.get("city") or 0))
            for unseen in self.held.values():
                unseen.add((city, str(fields["corporation"])))
        elif kind == "CorporationOperates":
            self.operating = str(fields["corporation"])
            self.held.setdefault(self.operating, set())
        elif kind in ("OperatingTurnEnded", "OperatingRoundEnded"):
            self.operating = ""

    def token_step_waits(
        self, title: Title, view: Callable[[], Mapping[str, Any]], corporation: str
    ) -> bool:
        """Whether the site's token step, from the graph it holds, finds a city where the
        corporation could place a token; `view` gives the state document (GetState's), read
        only where the site's graph misses a home token."""
        unseen = self.held.get(corporation)
        if not unseen:
            return False
        document = view()
        shown = board_of(title, document, unseen)
        cash = next(int(c["cash"]) for c in document["corporations"] if c["id"] == corporation)
        filled = {city for city, _ in unseen}
        actor = board.Actor(corporation=corporation, cash=cash)
        return any(
            (option.hex, option.city) not in filled
            for option in board.each_legal_token(shown, actor)
        )


def can_place_token(title: Title, view: Mapping[str, Any], corporation: str) -> bool:
    """Whether the corporation may place a token on the board of `view` (its cash as there)."""
    cash = next(int(c["cash"]) for c in view["corporations"] if c["id"] == corporation)
    actor = board.Actor(corporation=corporation, cash=cash)
    return next(iter(board.each_legal_token(board_of(title, view), actor)), None) is not None


def board_of(title: Title, view: Mapping[str, Any], unseen: set[Unseen] | None = None) -> Position:
    """The board of `view` (the state document), without the home tokens `unseen`."""
    unseen = unseen or set()
    placed = view["board"]
    tiles = {t["hex"]: PlacedTile(str(t["tile"]), int(t["rotation"])) for t in placed["tiles"]}
    tokens: dict[CityRef, tuple[str | None, ...]] = {}
    for entry in placed["tokens"]:
        city = (str(entry["hex"]), int(entry["city"]))
        hidden = {owner for where, owner in unseen if where == city}
        spots = tuple(s if s and s not in hidden else None for s in entry["spots"])
        if any(spots):
            tokens[city] = spots
    return Position(title=title, tiles=tiles, tokens=tokens, supply={})
