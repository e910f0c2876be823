"""Rulebook 2 (set-up) and 14.1 (the beginner game's deal; under the `beginner_deal_as_site`
switch, the 18xx.games site's deal from the same seed)."""

from __future__ import annotations

import random

from kernel.rejection import Kind, Rejected, quoted
from services.rules import board
from services.rules.domain import events as ev
from services.rules.domain.commands import CreateGame
from services.rules.domain.site_deal import site_beginner_deal
from services.rules.domain.state import GameState


def create_game(state: GameState, command: CreateGame) -> list[ev.Event]:
    if state.players:
        raise Rejected("GAME_EXISTS", "the game has already been created", Kind.ALREADY_EXISTS)
    try:
        title = board.load_title(command.title)
    except board.UnknownTitle:
        raise Rejected(
            "UNKNOWN_TITLE",
            f"no such title {quoted(command.title)!r}",
            Kind.INVALID_ARGUMENT,
            {"field": "title"},
        ) from None
    try:
        # A table names one of the title's profiles; `base+switch` is how the export asks
        # what one switch would have changed (tools/sitelog/deviations.py).
        title.profile(command.rules_profile)
    except KeyError:
        raise Rejected(
            "UNKNOWN_RULES_PROFILE",
            f"{title.name} has no rules profile {quoted(command.rules_profile)!r}"
            f" (it has {', '.join(sorted(title.profiles))})",
            Kind.INVALID_ARGUMENT,
            {"field": "rules_profile"},
        ) from None
    count = len(command.players)
    if not title.min_players <= count <= title.max_players:
        raise Rejected(
            "PLAYER_COUNT",
            f"{title.name} is for {title.min_players} to {title.max_players} players, not {count}",
            Kind.INVALID_ARGUMENT,
            {"field": "players", "players": count},
        )
    seats = [player.seat for player in command.players]
    if len(set(seats)) != count:
        raise Rejected(
            "DUPLICATE_SEAT",
            "two players share a seat",
            Kind.INVALID_ARGUMENT,
            {"field": "players"},
        )

    rng = random.Random(command.seed)
    order = sorted(seats)
    if not command.fixed_seat_order:
        rng.shuffle(order)
    rules = title.by_player_count[count]
    events: list[ev.Event] = [
        ev.GameCreated(
            title=title.name,
            players=command.players,
            beginner_game=command.beginner_game,
            bank=title.bank,
            trust_submitted_revenue=command.trust_submitted_revenue,
            undo_allowed=command.undo_allowed,
            rules_profile=command.rules_profile,
        ),
        ev.PlayerOrderDrawn(order=tuple(order)),
        ev.StartingCapitalDealt(amount=rules.starting_capital),
    ]
    privates = title.privates_in_game(count, command.beginner_game)
    if command.beginner_game and title.profile(command.rules_profile).beginner_deal_as_site:
        site = site_beginner_deal(command.seed, order)
        events += [
            ev.PrivatesDealt(
                deal=tuple(ev.Deal(seat=d.seat, company=d.company, price=d.price) for d in site)
            ),
            ev.StockRoundStarted(number=1, priority=order[0]),
        ]
    elif command.beginner_game:
        dealt = list(privates)
        rng.shuffle(dealt)
        events += [
            ev.PrivatesDealt(
                deal=tuple(
                    ev.Deal(seat=seat, company=c.id, price=c.face_value)
                    for seat, c in zip(order, dealt, strict=True)
                )
            ),
            ev.StockRoundStarted(number=1, priority=order[rng.randrange(count)]),
        ]
    else:
        events.append(
            ev.PrivateAuctionStarted(
                offer=tuple(ev.PrivateOnOffer(company=c.id, price=c.face_value) for c in privates)
            )
        )
    return events
