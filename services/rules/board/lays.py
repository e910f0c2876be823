"""Laying and upgrading track (rulebook 8.3, 8.3.1, 8.3.2, and 15 for the private companies).

`check_lay` is the one place that decides whether a lay is legal. `each_legal_lay` offers it
every (hex, tile, rotation) that keeps what is on the hex (`upgrades.fits`) and yields those it
accepts; a lay that keeps nothing is refused by `check_lay` anyway, so the list and the check
always agree. It passes over a hex where the check's own tests of the hex alone (a private's
icon, the terrain cost, the corporation's trails) refuse every lay. `legal_lays` lists them
all; `has_legal_lay` stops at the first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kernel.reasons import ReasonCode
from services.rules.board.connectivity import reach_of
from services.rules.board.context import Actor, Situation
from services.rules.board.errors import Rejection
from services.rules.board.layout import layout_of
from services.rules.board.new_track import uses_new_track_or_changes_a_city
from services.rules.board.position import Position, apply_lay, reject
from services.rules.board.title import (
    CorporationCharter,
    LayAbility,
    Owner,
    Phase,
    StopKind,
    Tile,
)
from services.rules.board.upgrades import Fit, find_fit, fits


@dataclass(frozen=True, slots=True, order=True)
class Lay:
    hex: str
    tile: str
    rotation: int


@dataclass(frozen=True, slots=True, order=True)
class LayOption:
    hex: str
    tile: str
    rotation: int
    #: Terrain cost to pay (8.3.2).
    cost: int
    #: Replaces track (a tile, or track printed on the map) rather than laying on a bare hex.
    upgrade: bool


def check_lay(
    position: Position, situation: Situation, actor: Actor, lay: Lay
) -> LayOption | Rejection:
    builder = _Builder.of(position, situation, actor)
    if isinstance(builder, Rejection):
        return _refuse(builder.reason, lay, f"{lay.hex}: {builder.message}")
    return builder.check(lay)


def legal_lays(position: Position, situation: Situation, actor: Actor) -> tuple[LayOption, ...]:
    """Every legal lay and upgrade for the actor, sorted by hex, tile and rotation."""
    return tuple(each_legal_lay(position, situation, actor))


def has_legal_lay(position: Position, situation: Situation, actor: Actor) -> bool:
    """Whether the actor has any legal lay: stops at the first one found."""
    return next(each_legal_lay(position, situation, actor), None) is not None


def each_legal_lay(position: Position, situation: Situation, actor: Actor) -> Iterator[LayOption]:
    """The legal lays and upgrades for the actor, found one at a time, by hex, tile
    (`upgrades.tile_order`) and rotation: each (hex, tile, rotation) that keeps what is on the
    hex (`upgrades.fits`) and that `check_lay`'s own check accepts."""
    builder = _Builder.of(position, situation, actor)
    if isinstance(builder, Rejection):
        return
    hexes = builder.ability.hexes if builder.ability else position.title.hexes
    for hex_ in sorted(hexes):
        old, rotation = position.content(hex_)
        if not builder.may_build_on(hex_, old):
            continue
        for how in fits(position.title, old, rotation):
            result = builder.check(Lay(hex_, how.tile.name, how.rotation))
            if isinstance(result, LayOption):
                yield result


class _Builder:
    """One actor's view of one position: what every check of a lay shares."""

    def __init__(
        self,
        position: Position,
        situation: Situation,
        actor: Actor,
        phase: Phase,
        corporation: CorporationCharter | None,
        ability: LayAbility | None,
    ) -> None:
        self.position = position
        self.situation = situation
        self.actor = actor
        self.phase = phase
        self.corporation = corporation
        self.ability = ability
        self.title = position.title
        self.open_edges = layout_of(position.title).open_edges
        self._meeting: dict[str, tuple[int, frozenset[int]]] = {}

    @classmethod
    def of(cls, position: Position, situation: Situation, actor: Actor) -> _Builder | Rejection:
        title = position.title
        if not title.has_phase(situation.phase):
            raise ValueError(f"{title.name} has no phase {situation.phase!r}")
        corporation = None
        if actor.corporation is not None:
            corporation = title.corporations.get(actor.corporation)
            if corporation is None:
                return reject(
                    "UNKNOWN_CORPORATION",
                    f"there is no corporation {actor.corporation}",
                    corporation=actor.corporation,
                )
        ability = None
        if actor.ability is not None:
            ability = title.lay_abilities.get(actor.ability)
            if ability is None or not _holds(situation, actor, ability):
                return reject(
                    "ABILITY_NOT_AVAILABLE",
                    f"the {actor.ability} ability to lay a tile is not available (rulebook 15)",
                    ability=actor.ability,
                )
        elif corporation is None:
            return reject(
                "UNKNOWN_CORPORATION",
                "only a corporation lays track, unless a private company's ability is used",
            )
        return cls(position, situation, actor, title.phase(situation.phase), corporation, ability)

    def check(self, lay: Lay) -> LayOption | Rejection:
        title, position = self.title, self.position
        map_hex = title.hexes.get(lay.hex)
        if map_hex is None:
            return _refuse("HEX_NOT_ON_MAP", lay, f"{lay.hex} is not on the map")
        tile = title.tiles.get(lay.tile)
        if tile is None:
            return _refuse("UNKNOWN_TILE", lay, f"{lay.hex}: there is no tile {lay.tile}")
        if lay.rotation not in range(6):
            return _refuse("BAD_ROTATION", lay, f"{lay.hex}: rotation {lay.rotation} is not 0 to 5")
        if self.ability is not None and (
            lay.hex not in self.ability.hexes
            or (self.ability.tiles is not None and lay.tile not in self.ability.tiles)
        ):
            return _refuse(
                "ABILITY_NOT_AVAILABLE",
                lay,
                f"the {self.ability.private} ability cannot lay tile {lay.tile} on {lay.hex}"
                f" (rulebook 15)",
            )
        if tile.ability_only and self.ability is None:
            return _refuse(
                "TILE_NEEDS_ABILITY",
                lay,
                f"{lay.hex}: tile {lay.tile} is laid only through a private company's ability"
                f" (rulebook 15)",
            )
        if map_hex.private is not None and self._restricted(map_hex.private):
            return _refuse(
                "HEX_BLOCKED_BY_PRIVATE",
                lay,
                f"{lay.hex} may not be built on while {map_hex.private} is held by a player"
                f" (rulebook 8.3.1)",
            )
        if tile.colour not in self.phase.tiles:
            return _refuse(
                "COLOUR_NOT_AVAILABLE",
                lay,
                f"{lay.hex}: {tile.colour} tiles are not available in phase {self.phase.name}"
                f" (rulebook 9)",
            )
        if position.supply.get(lay.tile, 0) < 1:
            return _refuse(
                "TILE_NOT_IN_SUPPLY",
                lay,
                f"{lay.hex}: no tile {lay.tile} is left in the supply (rulebook 8.3.1)",
            )
        old, old_rotation = position.content(lay.hex)
        how = find_fit(title, old, old_rotation, tile, lay.rotation)
        if not isinstance(how, Fit):
            return _refuse(how, lay, _unfit_message(how, lay, old, tile))
        if self._crowds_a_city(lay.hex, old, how):
            return _refuse(
                "TOKENS_NOT_PRESERVED",
                lay,
                f"{lay.hex}: tile {lay.tile} has room for fewer station tokens than the city"
                f" holds (rulebook 8.3, preservation)",
            )
        if tile.exits_at(lay.rotation) & ~self.open_edges[lay.hex]:
            return _refuse(
                "TRACK_OFF_MAP",
                lay,
                f"{lay.hex}: tile {lay.tile} would run track off the map or into a gray or red"
                f" hex side without track (rulebook 8.3.1)",
            )
        if not self._connected(lay.hex, how):
            return _refuse(
                "NOT_CONNECTED",
                lay,
                f"{lay.hex}: not the home hex, and the lay adds no track connected to a station"
                f" token and raises no connected city (rulebook 8.3)",
            )
        if not self._walks_new_track(lay):
            return _refuse(
                "NO_NEW_TRACK_WALKED",
                lay,
                f"{lay.hex}: as 18xx.games plays it, an upgrade must use new track or change a"
                f" city's value that its walk of the corporation's track reaches (rules profile"
                f" 18xx.games; rulebook 8.3 asks only that new track be connected)",
            )
        cost = self._cost(old)
        if cost > self.actor.cash:
            return _refuse(
                "TERRAIN_COST_UNAFFORDABLE",
                lay,
                f"{lay.hex}: the terrain cost ¥{cost} is more than the ¥{self.actor.cash} at hand"
                f" (rulebook 8.3.2)",
            )
        upgrade = old.colour != title.upgrade_order[0]
        return LayOption(lay.hex, lay.tile, lay.rotation, cost, upgrade)

    def _walks_new_track(self, lay: Lay) -> bool:
        """The site's test of an upgrade, under its switch: for a corporation's own lay."""
        if (
            not self.situation.upgrade_must_use_new_track_or_change_city
            or self.ability is not None
            or self.corporation is None
        ):
            return True
        after = apply_lay(self.position, lay.hex, lay.tile, lay.rotation)
        return uses_new_track_or_changes_a_city(self.position, after, lay.hex, self.corporation.id)

    def _restricted(self, private: str) -> bool:
        if self.situation.beginner and not self.title.beginner_icons_restrict:
            return False
        return private in self.situation.privates_with_players

    def _crowds_a_city(self, hex_: str, old: Tile, how: Fit) -> bool:
        for index, stop in enumerate(old.stops):
            if stop.kind is StopKind.CITY and (hex_, index) in self.position.tokens:
                held = self.position.spots((hex_, index))
                tokens = sum(corporation is not None for corporation in held)
                if tokens > how.tile.stops[how.stop_map[index]].spots:
                    return True
        return False

    def may_build_on(self, hex_: str, old: Tile) -> bool:
        """False when `check` refuses every lay on the hex for what the hex alone decides: the
        icon of a private company held by a player, a terrain cost above the cash at hand, or
        no trail of the corporation meeting the hex."""
        private = self.title.hexes[hex_].private
        if private is not None and self._restricted(private):
            return False
        return self._cost(old) <= self.actor.cash and self._may_connect(hex_)

    def _connected(self, hex_: str, how: Fit) -> bool:
        if not self._needs_connection(hex_):
            return True
        if self.corporation is None:
            return False
        corporation = self.corporation.id
        entries, stops = self._trails_meeting(hex_, corporation)
        if how.new_track_edges & entries:
            return True
        if any(
            index in stops and self._passable_after(hex_, index, how, corporation)
            for index in how.new_track_stops
        ):
            return True
        return any(index in stops for index in how.richer_cities)

    def _may_connect(self, hex_: str) -> bool:
        """Whether `_connected` can hold for some lay on the hex: a trail must meet it."""
        if not self._needs_connection(hex_):
            return True
        if self.corporation is None:
            return False
        entries, stops = self._trails_meeting(hex_, self.corporation.id)
        return bool(entries or stops)

    def _needs_connection(self, hex_: str) -> bool:
        if self.ability is not None and not self.ability.needs_connection:
            return False
        return self.corporation is None or hex_ != self.corporation.home

    def _trails_meeting(self, hex_: str, corporation: str) -> tuple[int, frozenset[int]]:
        """Where trails of the corporation meet the hex: the edges where one arrives (a bit
        mask), and the stops (by index on the tile there now) one reaches."""
        found = self._meeting.get(hex_)
        if found is None:
            reach = reach_of(self.position, corporation)
            stops = self.position.content(hex_)[0].stops
            found = (
                sum(1 << edge for edge in range(6) if reach.enters(hex_, edge)),
                frozenset(i for i in range(len(stops)) if reach.reaches((hex_, i))),
            )
            self._meeting[hex_] = found
        return found

    def _passable_after(self, hex_: str, index: int, how: Fit, corporation: str) -> bool:
        """Whether a trail may go on through this stop of the hex once the new tile is down:
        a town, or a city with the corporation's token or an open spot."""
        stop = how.tile.stops[how.stop_map[index]]
        if stop.kind is not StopKind.CITY:
            return stop.kind is StopKind.TOWN
        held = [c for c in self.position.spots((hex_, index)) if c is not None]
        return corporation in held or len(held) < stop.spots

    def _cost(self, old: Tile) -> int:
        if not old.cost:
            return 0
        for ability in self.title.terrain_abilities.values():
            if (
                ability.owner is Owner.CORPORATION
                and self.corporation is not None
                and self.situation.privates_with_corporations.get(ability.private)
                == self.corporation.id
                and old.terrain
                and old.terrain <= ability.terrain
            ):
                return 0
        return old.cost


def _holds(situation: Situation, actor: Actor, ability: LayAbility) -> bool:
    if ability.owner is Owner.PLAYER:
        return ability.private in situation.privates_with_players
    holder = situation.privates_with_corporations.get(ability.private)
    return holder is not None and actor.corporation in (None, holder)


def _refuse(reason: ReasonCode, lay: Lay, message: str) -> Rejection:
    details = {"hex": lay.hex, "tile": lay.tile, "rotation": str(lay.rotation)}
    return Rejection(reason, message, details)


def _unfit_message(reason: ReasonCode, lay: Lay, old: Tile, new: Tile) -> str:
    what = f"{lay.hex}: tile {lay.tile} (rotation {lay.rotation})"
    if reason == "NOT_UPGRADEABLE":
        return f"{lay.hex}: a {old.colour} hex is never built on (rulebook 8.3)"
    if reason == "NOT_NEXT_COLOUR":
        return f"{what} is {new.colour}; only one colour up from {old.colour} is allowed (8.3)"
    if reason == "LABEL_MISMATCH":
        return f"{what} does not keep the hex letter {old.label or '(none)'} (8.3, preservation)"
    if reason == "CITY_TOWN_MISMATCH":
        return f"{what} does not keep the cities and towns on the hex (8.3, preservation)"
    return f"{what} does not keep the track already on the hex (8.3, preservation)"
