"""Which areas of the rules a game exercised, for the cross-check's coverage table: a rule
only checked against the site where some game reached it (docs/crosscheck.md, "Coverage").

`exercised` reads one game (its commands with their events, as the exporter's batches are);
`table` counts, over many games, how many exercised each row of `ROWS`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from services.rules.board.title import SWITCHES, StopKind, Title
from services.rules.domain import commands as cmd
from services.rules.domain import events as ev
from services.rules.domain.evolve import evolve
from services.rules.domain.state import GameState, OperatingRound
from tools.sitelog.deviations import Move, switches_exercised

DIESEL = "D"
#: The privates' abilities (rulebook 15): a tile they lay, an exchange, a hex they keep
#: untiled until a corporation owns them or they close, terrain a corporation owning them lays
#: on for free. The Pilgrimage Railway (SIR) has none; the UTF's is its own row.
LAYS = ("MF", "ER")
EXCHANGES = ("DR",)
BLOCKERS = ("TR",)
FREE_TERRAIN = ("SMR",)
#: The private whose revenue grows in phase 5 while a player keeps it (rulebook 15).
FERRY, FERRY_PHASE = "UTF", "5"
PLAYER_COUNTS = range(2, 7)

#: (key, what the row counts), in the order the table prints them.
ROWS: tuple[tuple[str, str], ...] = (
    ("d_trains", "D trains running"),
    ("grey_offboards", "grey off-board values (a D train through an off-board)"),
    ("utf_phase_5", "the UTF kept into phase 5"),
    *((f"ability_{c}", f"{c}'s ability: its tile laid") for c in LAYS),
    *((f"ability_{c}", f"{c}'s ability: exchanged for a share") for c in EXCHANGES),
    *((f"ability_{c}", f"{c}'s ability: its hex tiled once open") for c in BLOCKERS),
    *((f"ability_{c}", f"{c}'s ability: terrain laid on without its cost") for c in FREE_TERRAIN),
    *((f"switch_{s}", f"profile switch {s}") for s in SWITCHES),
    ("emergency_sale", "an emergency train buy with share sales"),
    *((f"bankrupt_{n}p", f"a bankruptcy with {n} players") for n in PLAYER_COUNTS),
    ("bank_break", "the bank broken, the round set finished"),
    ("beginner", "the beginner game"),
)


def exercised(moves: Sequence[Move], switches: bool = True) -> set[str]:
    """The keys of ROWS that the game exercised; `switches` False leaves out the profile
    switches, whose check replays every move once per switch."""
    found: set[str] = set()
    state = GameState()
    for move in moves:
        before = state
        if isinstance(move.command, cmd.SellShares) and isinstance(before.round, OperatingRound):
            found.add("emergency_sale")  # shares are sold in an operating round only to buy
        if isinstance(move.command, cmd.ExchangePrivate):
            found.add(f"ability_{move.command.company}")
        if isinstance(move.command, cmd.LayPrivateTile):
            found.add(f"ability_{move.command.company}")
        for event in move.events:
            found |= _event_areas(state, event)
            state = evolve(state, event)
    if state.beginner_game:
        found.add("beginner")
    if state.result is not None:
        if state.result.reason == "bank":
            found.add("bank_break")
        if state.result.reason == "bankrupt":
            found.add(f"bankrupt_{len(state.players)}p")
    if switches:
        found |= {f"switch_{s}" for s in switches_exercised(moves)}
    return found


def _event_areas(state: GameState, event: ev.Event) -> set[str]:
    """The areas an event shows, read against the state before it."""
    if isinstance(event, ev.TrainsRan):
        title = state.title_model
        diesels = [run for run in event.routes if run.train == DIESEL]
        areas = {"d_trains"} if diesels else set()
        if any(_offboard(title, hex_id) for run in diesels for hex_id in run.hexes):
            areas.add("grey_offboards")
        return areas
    if isinstance(event, ev.PhaseChanged) and event.phase == FERRY_PHASE:
        kept = any(FERRY in player.privates for player in state.players)
        return {"utf_phase_5"} if kept else set()
    if isinstance(event, ev.TileLaid):
        blocker = state.title_model.hexes[event.hex].private
        areas = {f"ability_{blocker}"} if blocker in BLOCKERS else set()
        return areas | _free_terrain(state, event)
    return set()


def _free_terrain(state: GameState, event: ev.TileLaid) -> set[str]:
    """A corporation's lay on terrain that its private lets it lay on for nothing."""
    if not event.corporation or event.cost or event.ability:
        return set()
    assert state.board is not None
    underneath = state.board.content(event.hex)[0]  # what the lay covers, with its terrain
    owned = state.corporation(event.corporation).privates
    return {f"ability_{c}" for c in FREE_TERRAIN if c in owned and underneath.cost}


def _offboard(title: Title, hex_id: str) -> bool:
    return any(stop.kind is StopKind.OFFBOARD for stop in title.hexes[hex_id].printed.stops)


def table(games: Iterable[set[str]]) -> list[tuple[str, str, int]]:
    """(key, row, how many of `games` exercised it) for every row, in ROWS' order."""
    counted = list(games)
    return [(key, row, sum(key in game for game in counted)) for key, row in ROWS]


def as_text(rows: Sequence[tuple[str, str, int]], games: int) -> str:
    """The coverage table as the cross-check prints it."""
    width = max(len(row) for _, row, _ in rows)
    lines = [f"coverage over {games} games", f"{'rule area':<{width}}  games"]
    lines += [f"{row:<{width}}  {count:>5}" for _, row, count in rows]
    return "\n".join(lines)
