"""Placing station tokens (rulebook 7.4 and 8.4).

`check_token` is the one place that decides whether a token placement is legal;
`each_legal_token` offers it every city on the map and yields those it accepts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from services.rules.board.connectivity import reach_of
from services.rules.board.context import Actor
from services.rules.board.errors import Rejection
from services.rules.board.position import CityRef, Position
from services.rules.board.title import CorporationCharter, StopKind
from services.rules.board.track import network_of


@dataclass(frozen=True, slots=True, order=True)
class TokenOption:
    hex: str
    city: int
    cost: int
    #: The corporation's home token (placed when it first operates, 7.4).
    home: bool


def check_token(
    position: Position, actor: Actor, hex_: str, city: int = 0
) -> TokenOption | Rejection:
    title = position.title
    details = {"hex": hex_, "city": str(city), "corporation": str(actor.corporation)}
    corporation = title.corporations.get(actor.corporation or "")
    if corporation is None:
        return Rejection(
            "UNKNOWN_CORPORATION", f"there is no corporation {actor.corporation}", details
        )
    if hex_ not in title.hexes:
        return Rejection("HEX_NOT_ON_MAP", f"{hex_} is not on the map", details)
    tile, _ = position.content(hex_)
    if not 0 <= city < len(tile.stops) or tile.stops[city].kind is not StopKind.CITY:
        return Rejection("NO_SUCH_CITY", f"{hex_} has no city {city}", details)
    placed = position.token_cities(corporation.id)
    home = (hex_, city) == (corporation.home, corporation.home_city)
    if not placed and not home:
        return Rejection(
            "HOME_TOKEN_FIRST",
            f"{hex_}: {corporation.id} places its home token on {corporation.home} first"
            f" (rulebook 7.4)",
            details,
        )
    cost = _next_cost(corporation, placed)
    if cost is None:
        return Rejection(
            "TOKEN_LIMIT",
            f"{hex_}: {corporation.id} has no station token left"
            f" ({len(corporation.token_costs)} on its charter)",
            details,
        )
    if any(placed_hex == hex_ for placed_hex, _ in placed):
        return Rejection(
            "TOKEN_ALREADY_IN_HEX",
            f"{hex_}: {corporation.id} already has a station token on this hex (rulebook 8.4)",
            details,
        )
    spots = position.spots((hex_, city))
    open_spots = spots.count(None)
    if not open_spots:
        return Rejection(
            "CITY_FULL", f"{hex_}: every station spot of the city is taken (8.4)", details
        )
    waiting = [
        other.id
        for other in title.corporations.values()
        if other.id != corporation.id
        and (other.home, other.home_city) == (hex_, city)
        and other.id not in spots
    ]
    if open_spots <= len(waiting):
        return Rejection(
            "SPOT_RESERVED",
            f"{hex_}: the open spot is reserved for the home token of {', '.join(waiting)}"
            f" (rulebook 8.4)",
            details,
        )
    if not home and not reach_of(position, corporation.id).reaches((hex_, city)):
        return Rejection(
            "NOT_CONNECTED",
            f"{hex_}: {corporation.id}'s track does not reach this city (rulebook 8.4, 4.2)",
            details,
        )
    if cost > actor.cash:
        return Rejection(
            "TOKEN_COST_UNAFFORDABLE",
            f"{hex_}: the station token costs ¥{cost}, more than the ¥{actor.cash} at hand",
            details,
        )
    return TokenOption(hex_, city, cost, home)


def legal_tokens(position: Position, actor: Actor) -> tuple[TokenOption, ...]:
    return tuple(each_legal_token(position, actor))


def each_legal_token(position: Position, actor: Actor) -> Iterator[TokenOption]:
    """The legal placements in hex order, found one at a time (`check_token` decides each)."""
    corporation = position.title.corporations.get(actor.corporation or "")
    if corporation is None:
        return
    # No token left, or none affordable: `check_token` would refuse every city.
    cost = _next_cost(corporation, position.token_cities(corporation.id))
    if cost is None or cost > actor.cash:
        return
    # What `check_token` refuses whatever else holds is passed over without asking it: a hex
    # with one of the corporation's tokens, a city without an open spot, a city its track
    # does not reach (but its home).
    placed = {hex_ for hex_, _ in position.token_cities(corporation.id)}
    home = (corporation.home, corporation.home_city)
    for city in position.track_derived(_cities):
        if city[0] in placed or None not in position.spots(city):
            continue
        if city != home and not reach_of(position, corporation.id).reaches(city):
            continue
        result = check_token(position, actor, city[0], city[1])
        if isinstance(result, TokenOption):
            yield result


def _cities(position: Position) -> tuple[CityRef, ...]:
    """The cities on the map, by hex (sorted) and index: the network's stops are in that
    order."""
    net = network_of(position)
    return tuple(
        ref
        for ref, stop in zip(net.stop_refs, net.stops, strict=True)
        if stop.kind is StopKind.CITY
    )


def _next_cost(corporation: CorporationCharter, placed: tuple[CityRef, ...]) -> int | None:
    """What the corporation's next station token costs; None when it has none left."""
    if len(placed) >= len(corporation.token_costs):
        return None
    return corporation.token_costs[len(placed)]
