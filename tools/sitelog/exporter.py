"""Our event log back to the 18xx.games export format, so that games played here open with
the site's tools (and re-import into ours: `tests/sitelog/test_round_trip.py`).

Every command stored with the events it caused becomes one site action; what followed by
itself (a private sold to its only bidder, a player with nothing to do passing) is left to the
site's engine, as in its own logs. The site names shares, trains and tiles by copy (`KO_3`,
`2-1`, `8-0`): `_Copies` hands out those names as the game goes.

A table's chat can go with the game (`Said`): each message becomes one of the site's `message`
actions, placed after the last action the game had when it was said, and the actions are
numbered again so that the site's ids stay consecutive.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.rules import board
from services.rules.domain import commands as cmd
from services.rules.domain import events as ev
from services.rules.domain import on_the_board
from services.rules.domain.decide import legal_actions
from services.rules.domain.evolve import evolve
from services.rules.domain.legal import BuyTrainOption
from services.rules.domain.route_pricing import can_run_routes, corporation_graph
from services.rules.domain.state import GameState, OperatingRound, PrivateAuction, Step
from services.rules.domain.turn_steps import turn_steps
from services.rules.domain.undo import Logged, effective
from services.rules.domain.view import state_document
from tools.sitelog.certificates import INITIAL_OFFERING, Certificates
from tools.sitelog.deviations import deviations_used
from tools.sitelog.export_format import copy_name, tile_copies
from tools.sitelog.site_graph import SiteGraph
from tools.sitelog.site_steps import private_step_waits, track_step_waits_for_pass

Action = dict[str, Any]
END_REASONS = {"bankrupt": "bankrupt", "bank": "bank", "ended": "manually_ended"}


@dataclass(frozen=True, slots=True)
class Batch:
    """A command and the events it caused, as stored. `version`: the game's event count after
    them (the stored number of their last event); None counts it from the batches before, as
    in a log where nothing was undone."""

    command: cmd.Command
    events: tuple[ev.Event, ...]
    version: int | None = None


@dataclass(frozen=True, slots=True)
class Said:
    """A chat message of the game's table that goes with its export: said by the player in
    `seat`, at `posted_at_ms`, when the game had `game_version` events."""

    seat: int
    text: str
    posted_at_ms: int
    game_version: int


@dataclass
class _Copies:
    """Site names for shares, trains and tiles, following them through the game."""

    certificates: Certificates = field(default_factory=Certificates)
    depot_bought: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    trains: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # owner ->
    #: Per tile, the copies in the supply in the site's order: the unused copies, then those
    #: an upgrade took back off the map (8.3), in the order they came back.
    tile_supply: dict[str, list[str]] = field(default_factory=dict)
    tile_on_hex: dict[str, str] = field(default_factory=dict)

    def train_id(self, owner: str, name: str) -> str:
        return next(t for t in self.trains[owner] if t.rsplit("-", 1)[0] == name)

    def move_train(self, train_id: str, source: str, owner: str) -> None:
        self.trains[source].remove(train_id)
        self.trains[owner].append(train_id)

    def new_train(self, name: str, owner: str) -> str:
        train_id = f"{name}-{self.depot_bought[name]}"
        self.depot_bought[name] += 1
        self.trains[owner].append(train_id)
        return train_id

    def stock_tiles(self, counts: Mapping[str, int], beginner_extra: Mapping[str, int]) -> None:
        kinds = {*counts, *beginner_extra}
        self.tile_supply = {
            tile: tile_copies(tile, counts.get(tile, 0), beginner_extra.get(tile, 0))
            for tile in kinds
        }

    def lay(self, hex_id: str, tile: str) -> str:
        """The copy a lay takes: the first in the supply; the tile it replaces goes back to the
        supply's end (the site's engine names copies the same way)."""
        tile_id = self.tile_supply[tile].pop(0)
        if (replaced := self.tile_on_hex.get(hex_id)) is not None:
            self.tile_supply[copy_name(replaced)].append(replaced)
        self.tile_on_hex[hex_id] = tile_id
        return tile_id

    def observe(self, event: ev.Event) -> None:
        """What happened by itself: rusting, presidencies changing hands."""
        if isinstance(event, ev.PresidencyChanged):
            self.certificates.swap_presidency(event.corporation, event.seat, event.previous)
        if isinstance(event, ev.TrainsRusted):
            for owner, held in self.trains.items():
                self.trains[owner] = [t for t in held if t.rsplit("-", 1)[0] != event.train]


def export(game_id: str, batches: Sequence[Batch], said: Sequence[Said] = ()) -> dict[str, Any]:
    """The game's export; with `said`, its chat among its actions (in the order given)."""
    state = GameState()
    copies = _Copies()
    first_ids: list[int] = []  # per batch: the id its first action has (or would have)
    actions: list[Action] = []
    created: cmd.CreateGame | None = None
    skipped_routes = False
    version = 0
    acted_by: list[tuple[int, int]] = []  # per batch: the game's version after it, actions so far
    site_graph = SiteGraph()
    for batch in batches:
        first_ids.append(len(actions) + 1)
        swaps = [e for e in batch.events if isinstance(e, ev.PresidencyChanged)]
        selling = isinstance(batch.command, cmd.SellShares)
        if isinstance(batch.command, cmd.PayDividends) and skipped_routes:
            skipped_routes = False  # the site withholds by itself after a skipped route step
        elif isinstance(batch.command, cmd.CreateGame):
            created = batch.command
            title = board.load_title(created.title)
            extra = title.beginner_tiles(created.rules_profile) if created.beginner_game else {}
            copies.stock_tiles(title.counts, extra)
        else:
            translated = _actions(batch.command, state, copies, swaps, site_graph)
            skipped_routes = isinstance(batch.command, cmd.RunRoutes) and not translated
            for action in translated:
                actions.append({**action, "id": len(actions) + 1})
        for index, event in enumerate(batch.events):
            if index > 0 and (waited := _pass_the_site_waits_for(state, event)) is not None:
                actions.append({**waited, "id": len(actions) + 1})
            stale_graph_waits = index > 0 and _token_step_the_stale_graph_keeps(
                state, event, site_graph
            )
            if stale_graph_waits or (_ends_turn(state, event) and _site_offers_privates(state)):
                operating = state.round.current  # type: ignore[union-attr]
                actions.append({**_corporation_pass(operating), "id": len(actions) + 1})
            if not (selling and event in swaps):
                copies.observe(event)
            waited_after = _track_step_waits_after(state, event)
            site_graph.observe(event.TYPE, dataclasses.asdict(event))
            state = evolve(state, event)
            if waited_after is not None:
                actions.append({**waited_after, "id": len(actions) + 1})
        version = batch.version if batch.version is not None else version + len(batch.events)
        acted_by.append((version, len(actions)))
    if created is None:
        raise ValueError(f"game {game_id} has no CreateGame command")
    actions, renumbered = _with_messages(actions, [(_place(acted_by, m), m) for m in said])
    return {
        "id": game_id,
        "title": state.title,
        "description": "exported from a Shikoku 1889 server",
        "status": "finished" if state.result else "active",
        "max_players": len(state.players),
        "players": [{"id": p.seat, "name": p.name} for p in state.players],
        "settings": {
            "seed": created.seed,
            "optional_rules": ["beginner_game"] if created.beginner_game else [],
        },
        "actions": actions,
        # Ours, not the site's (its engine reads past them): the profile the game was played
        # under, and the site's departures from the rulebook (docs/rules-notes.md) that it
        # relied on, each with the first action where the site will read the log otherwise.
        "rules_profile": state.rules_profile,
        "rules_deviations": [
            {
                "switch": d.switch,
                # 0: the game's set-up (the deal), before its first action.
                "first_action": renumbered(first_ids[d.first_move]) if d.first_move else 0,
                "moves": d.moves,
            }
            for d in deviations_used(batches)
        ],
        "result": {str(s): n for s, n in state.result.net_worths} if state.result else {},
        "game_end_reason": END_REASONS.get(state.result.reason, "") if state.result else "",
    }


def _place(acted_by: Sequence[tuple[int, int]], message: Said) -> int:
    """How many of the game's actions come before `message`: those it had at its version."""
    before = 0
    for version, acted in acted_by:
        if version > message.game_version:
            break
        before = acted
    return before


def _with_messages(
    actions: list[Action], placed: Sequence[tuple[int, Said]]
) -> tuple[list[Action], Callable[[int], int]]:
    """The actions with the messages after the actions that come before each, all numbered
    again from 1; and what an action's old id (or the id the next would have had) becomes."""
    merged: list[Action] = []
    waiting = sorted(placed, key=lambda pair: pair[0])  # stable: in the order said
    for index, action in enumerate([*actions, None]):
        while waiting and waiting[0][0] <= index:
            merged.append(_message(waiting.pop(0)[1]))
        if action is not None:
            merged.append(action)
    numbered = [{**action, "id": number} for number, action in enumerate(merged, start=1)]
    counts = [before for before, _message in placed]
    return numbered, lambda old: old + sum(1 for before in counts if before < old)


def _message(said: Said) -> Action:
    return {
        "type": "message",
        "entity": said.seat,
        "entity_type": "player",
        "id": 0,  # numbered with the rest
        "created_at": said.posted_at_ms // 1000,
        "message": said.text,
    }


def batches_from(stored: Iterable[tuple[dict[str, Any] | None, ev.Event]]) -> list[Batch]:
    """Stored (cause, event) pairs, in order, grouped by the command that caused them, each
    with the game's version after it; what was undone is left out."""
    log = [Logged(number, event, cause) for number, (cause, event) in enumerate(stored, start=1)]
    batches: list[Batch] = []
    for logged in effective(log):
        cause, event = logged.cause, logged.event
        if cause is not None:
            batches.append(Batch(cmd.command_from_plain(cause), (event,), logged.version))
        elif batches:
            last = batches[-1]
            batches[-1] = Batch(last.command, (*last.events, event), logged.version)
    return batches


def _entity(state: GameState, seat: int) -> dict[str, Any]:
    """Who acts in the site's terms: the ability's company, the operating corporation, or the
    player."""
    round_ = state.round
    if isinstance(round_, OperatingRound):
        if round_.ability is not None:
            return {"entity": round_.ability[0], "entity_type": "company"}
        if round_.discarding:
            return {"entity": round_.discarding[0], "entity_type": "corporation"}
        if round_.current:
            return {"entity": round_.current, "entity_type": "corporation"}
    return {"entity": seat, "entity_type": "player"}


def _actions(
    command: cmd.Command,
    state: GameState,
    copies: _Copies,
    swaps: Sequence[ev.PresidencyChanged],
    site_graph: SiteGraph,
) -> list[Action]:
    match command:
        case cmd.EndGame():
            return [{"type": "end_game", "entity": state.players[0].seat, "entity_type": "player"}]
        case cmd.BuyPrivate(seat=seat, company=company):
            assert isinstance(state.round, PrivateAuction)
            price = state.round.prices[company]
            return [{"type": "bid", **_entity(state, seat), "company": company, "price": price}]
        case cmd.PlaceBid(seat=seat, company=company, price=price):
            return [{"type": "bid", **_entity(state, seat), "company": company, "price": price}]
        case cmd.Pass(seat=seat):
            without_tokens = _token_step_without_tokens(state) and not _stale_graph_keeps(
                state, site_graph
            )
            if without_tokens or _train_step_without_trains(state):
                return []  # the site skips a step where nothing can be placed or bought
            return [{"type": "pass", **_entity(state, seat)}]
        case cmd.StartCorporation(seat=seat, corporation=corporation, par=par):
            row, column = state.title_model.market.par_positions()[par]
            copies.certificates.start(seat, corporation)
            return [
                {
                    "type": "par",
                    **_entity(state, seat),
                    "corporation": corporation,
                    "share_price": f"{par},{row},{column}",
                }
            ]
        case cmd.BuyShare(seat=seat, corporation=corporation, source=source):
            share = copies.certificates.buy(seat, corporation, source)
            return [
                {"type": "buy_shares", **_entity(state, seat), "shares": [share], "percent": 10}
            ]
        case cmd.SellShares(seat=seat, corporation=corporation, count=count):
            new = next((e.seat for e in swaps if e.corporation == corporation), None)
            bundle = copies.certificates.bundle(seat, corporation, count)
            shares = copies.certificates.sell(seat, corporation, bundle, count, new)
            action = {"type": "sell_shares", "shares": shares, "percent": 10 * count}
            return [{**action, "entity": seat, "entity_type": "player"}]
        case cmd.LayTile(seat=seat, hex=hex_id, tile=tile, rotation=rotation):
            tile_id = copies.lay(hex_id, tile)
            return [
                {
                    "type": "lay_tile",
                    **_entity(state, seat),
                    "hex": hex_id,
                    "tile": tile_id,
                    "rotation": rotation,
                }
            ]
        case cmd.LayPrivateTile(company=company, hex=hex_id, tile=tile, rotation=rotation):
            tile_id = copies.lay(hex_id, tile)
            return [
                {
                    "type": "lay_tile",
                    "entity": company,
                    "entity_type": "company",
                    "hex": hex_id,
                    "tile": tile_id,
                    "rotation": rotation,
                }
            ]
        case cmd.ExchangePrivate(seat=seat, company=company):
            target = state.title_model.private(company).exchange_for
            share = copies.certificates.buy(seat, target, INITIAL_OFFERING)
            return [
                {
                    "type": "buy_shares",
                    "entity": company,
                    "entity_type": "company",
                    "shares": [share],
                    "percent": 10,
                }
            ]
        case cmd.PlaceToken(seat=seat, hex=hex_id, city=city):
            tile_id = copies.tile_on_hex.get(hex_id, f"{hex_id}-0")
            return [{"type": "place_token", **_entity(state, seat), "city": f"{tile_id}-{city}"}]
        case cmd.RunRoutes(seat=seat, priced=priced):
            assert priced is not None and isinstance(state.round, OperatingRound)
            if not priced and not can_run_routes(state, state.round.current):
                return []  # the site skips the route and dividend steps by itself there
            return [
                {
                    "type": "run_routes",
                    **_entity(state, seat),
                    "routes": _routes(state, state.round.current, priced, copies),
                }
            ]
        case cmd.PayDividends(seat=seat, payout=payout):
            kind = "payout" if payout else "withhold"
            return [{"type": "dividend", **_entity(state, seat), "kind": kind}]
        case cmd.BuyTrain(seat=seat, train=train, source=source, price=price, exchange=old):
            return [_buy_train(state, seat, train, source, price, old, copies)]
        case cmd.DiscardTrain(seat=seat, corporation=corporation, train=train):
            train_id = copies.train_id(corporation, train)
            copies.move_train(train_id, corporation, "open_market")
            return [{"type": "discard_train", **_entity(state, seat), "train": train_id}]
        case cmd.BuyPrivateForCorporation(seat=seat, company=company, price=price):
            action = {"type": "buy_company", "company": company, "price": price}
            return [{**action, **_entity(state, seat)}]
        case cmd.DeclareBankruptcy(seat=seat):
            return [{"type": "bankrupt", **_entity(state, seat)}]
    raise TypeError(command)


def _token_step_without_tokens(state: GameState) -> bool:
    if not _corporation_acts(state, Step.TOKEN):
        return False
    corporation = state.corporation(state.round.current)  # type: ignore[union-attr]
    return next(iter(on_the_board.tokens(state, corporation)), None) is None


def _token_step_the_stale_graph_keeps(
    state: GameState, event: ev.Event, site_graph: SiteGraph
) -> bool:
    """Our token step ended by itself (no token can be placed) where the site's stale graph
    finds a city for one, so its step waits for a pass (tools/sitelog/site_graph.py)."""
    skipped = isinstance(event, ev.StepSkipped) and event.step == Step.TOKEN
    return (
        skipped and _corporation_acts(state, Step.TOKEN) and _stale_graph_keeps(state, site_graph)
    )


def _stale_graph_keeps(state: GameState, site_graph: SiteGraph) -> bool:
    operating = state.round.current  # type: ignore[union-attr]
    return site_graph.token_step_waits(state.title_model, lambda: state_document(state), operating)


def _corporation_acts(state: GameState, step: Step) -> bool:
    """Whether the operating corporation itself acts at `step` (no private's ability and no
    discard waits first)."""
    round_ = state.round
    return (
        isinstance(round_, OperatingRound)
        and round_.step == step
        and round_.ability is None
        and not round_.discarding
    )


def _train_step_without_trains(state: GameState) -> bool:
    """The site's train step asks only a corporation that can buy a train; ours also stops
    where a private could be bought (8.2, 8.8)."""
    if not _corporation_acts(state, Step.TRAINS):
        return False
    return not any(isinstance(option, BuyTrainOption) for option in legal_actions(state))


def _pass_the_site_waits_for(state: GameState, event: ev.Event) -> Action | None:
    """A pass our engine made by itself (nothing else was possible) where the site still waits
    for one: its track step waits whenever the corporation may lay track, legal tile or not
    (8.3.1), and a closed-auction bidder who cannot raise is still asked (5.2)."""
    if isinstance(event, ev.StepSkipped) and event.step == Step.TRACK:
        return _corporation_pass(event.corporation)
    if isinstance(event, ev.ClosedAuctionPassed) or (
        isinstance(event, ev.Passed) and isinstance(state.round, PrivateAuction)
    ):
        return {"type": "pass", "entity": event.seat, "entity_type": "player"}
    return None


def _corporation_pass(corporation: str) -> Action:
    return {"type": "pass", "entity": corporation, "entity_type": "corporation"}


def _track_step_waits_after(state: GameState, event: ev.Event) -> Action | None:
    """The pass the site's track step still waits for after the corporation's own lay
    (tools/sitelog/site_steps.py)."""
    round_ = state.round
    if not (
        isinstance(event, ev.TileLaid)
        and not event.ability
        and isinstance(round_, OperatingRound)
        and round_.current == event.corporation
    ):
        return None
    president = state.player(state.corporation(event.corporation).president)
    spent = state.used_abilities | state.closed_privates
    stripped = state.privates_without_abilities
    if track_step_waits_for_pass(state.title_model, president.privates, spent, stripped):
        return _corporation_pass(event.corporation)
    return None


def _ends_turn(state: GameState, event: ev.Event) -> bool:
    """Whether `event` ends the operating corporation's turn."""
    operating = isinstance(state.round, OperatingRound) and state.round.current
    return bool(operating) and isinstance(event, ev.OperatingTurnEnded)


def _site_offers_privates(state: GameState) -> bool:
    """Whether the site's private step waits at the end of the operating corporation's turn
    in a game cut as the rulebook cuts it (tools/sitelog/site_steps.py); under the site's cut
    the game's own pass at its private step is exported instead."""
    if turn_steps(state.rules).has(Step.PRIVATES):
        return False
    assert isinstance(state.round, OperatingRound)
    held = [c for c in state.privates_owned if c not in state.closed_privates]
    cash = state.corporation(state.round.current).cash
    return private_step_waits(state.title_model, state.phase, state.beginner_game, cash, held)


def _buy_train(
    state: GameState, seat: int, train: str, source: str, price: int, old: str, copies: _Copies
) -> Action:
    assert isinstance(state.round, OperatingRound)
    buyer = state.round.current
    if source == "depot":
        train_id = copies.new_train(train, buyer)
    else:
        train_id = copies.train_id(source, train)
        copies.move_train(train_id, source, buyer)
    action: Action = {
        "type": "buy_train",
        **_entity(state, seat),
        "train": train_id,
        "price": price,
    }
    if old:
        old_id = copies.train_id(buyer, old)
        rusts = old in state.title_model.train(train).exchange_rusts
        copies.move_train(old_id, buyer, "rusted" if rusts else "open_market")
        action["exchange"] = old_id
    return action


def _routes(
    state: GameState, corporation: str, runs: Sequence[ev.TrainRun], copies: _Copies
) -> list[dict[str, Any]]:
    """Games that trusted stored revenue keep the old form (hexes and revenue); others use the
    newer one (centre-to-centre connections, no revenue)."""
    ids = list(copies.trains[corporation])
    routes = []
    for run in runs:
        train_id = next(t for t in ids if t.rsplit("-", 1)[0] == run.train)
        ids.remove(train_id)
        if state.trust_submitted_revenue:
            routes.append({"train": train_id, "hexes": list(run.hexes), "revenue": run.revenue})
        else:
            centres = _centre_hexes(state, corporation)
            routes.append({"train": train_id, "connections": _connections(run.hexes, centres)})
    return routes


def _centre_hexes(state: GameState, corporation: str) -> set[str]:
    graph = corporation_graph(state, corporation)
    return {node.hex for node in graph.nodes if node.is_centre}


def _connections(hexes: Sequence[str], centres: set[str]) -> list[list[str]]:
    """A path split at the revenue centres it visits: [K4, J5, I4] -> [[K4, J5], [J5, I4]]."""
    pieces: list[list[str]] = []
    piece: list[str] = []
    for hex_id in hexes:
        piece.append(hex_id)
        if hex_id in centres and len(piece) > 1:
            pieces.append(piece)
            piece = [hex_id]
    return pieces
