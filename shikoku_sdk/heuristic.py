"""The heuristic player: plays 1889 as a sensible person would, through the public API.

`decide(document, actions, facts, rng, best_routes)` is a pure function of the state document
(GetState's `state` as plain values), the acting seat's legal actions, the title's data
(`TitleFacts.from_title(client.title())`), a seeded generator and a best-routes function; it
returns one Command. In the auction it buys the topmost private or bids on another, whichever
leaves more of the private's worth to it (face value and a round of revenue, by its taste) over
the price, while it keeps cash to start a corporation; in stock rounds it starts the
corporation it can float (par by its cash), buys to float and to hold the presidency, then
shares of corporations that run trains, and sells only when it must or, at the certificate
limit, to make room to float its own; in operating rounds it lays the tiles that raise its
cities' revenue near its stations, places tokens it can spare the cash for, runs the best
routes, pays out unless the cash is needed for a train, buys trains to keep running and push
the phase, saves for its Diesel from phase 5 on and buys it by exchange when it can, sells its
privates (but the UTF) to its corporations in phases 3-4, lays the MF's port tile only near a
station of its corporation, exchanges the DR for an IR share, and never declares bankruptcy
while anything else is allowed.

    with Client(address) as client:
        table = seat_table(client, 4)
        HeuristicPlayer(table.game_id, table.seats, seed=1).play()
"""

from __future__ import annotations

import random
from collections.abc import Collection
from typing import Any

from shikoku.v1 import game_pb2
from shikoku_sdk.commands import PAYOUT, WITHHOLD, Choices, command_with
from shikoku_sdk.heuristic_facts import TitleFacts, View, number
from shikoku_sdk.random_player import BestRoutes
from shikoku_sdk.seat_player import Move, Reads, SeatPlayer

# Corporations by how good their home is to start (1889 wisdom: Takamatsu and Kouchi first).
START_PREFERENCE = ("KO", "TR", "AR", "IR", "SR", "UR", "KU")
# Privates a player keeps rather than sell to a corporation: the UTF survives phase 5 in a
# player's hands and earns ¥50 a round from then on (rulebook 15).
KEPT_PRIVATES = ("UTF",)
# Rulebook 8.5.3: a D bought giving back a 4, 5 or 6 costs this instead of its list price.
DIESEL = "D"
DIESEL_EXCHANGE_PRICE = 800
EXCHANGEABLE = ("4", "5", "6")
PRIVATE_BUDGET = 0.4  # of a player's cash, at most, spent on privates in the auction
# Taste: the generator nudges close calls (the corporation started, the share bought, the tile
# laid, the budget for privates) so that games of heuristic players differ from seed to seed,
# where 1889's only chance, the seating, would otherwise give one game per player count.
BUDGET_SPREAD = 0.25  # the private budget varies by up to this share either way
START_SPREAD = 2.5  # places in START_PREFERENCE a corporation may move
SHARE_SPREAD = 0.15  # of a share's score
LAY_SPREAD = 6.0  # of a tile lay's score (a city's revenue gain counts double)
# The MF's port tile goes down only this near a station of the corporation operating.
PORT_REACH = 2
WORTH_SPREAD = 0.2  # of a private's worth, for the auction
Scored = tuple[float, int]


def _kind(action: game_pb2.LegalAction) -> str:
    return action.WhichOneof("action") or ""


def _of(actions: list[game_pb2.LegalAction], kind: str) -> list[game_pb2.LegalAction]:
    return [a for a in actions if _kind(a) == kind]


def _pass(actions: list[game_pb2.LegalAction]) -> game_pb2.LegalAction | None:
    passes = _of(actions, "pass_turn")
    return passes[0] if passes else None


def decide(
    document: dict[str, Any],
    actions: list[game_pb2.LegalAction],
    facts: TitleFacts,
    rng: random.Random,
    best_routes: BestRoutes,
) -> game_pb2.Command:
    """The command the heuristic player sends for the seat of `actions` (all of one seat)."""
    if not actions:
        raise ValueError("no legal action to choose from")
    view = View(document, actions[0].seat, facts)
    kind = view.round().get("type")
    if kind == "private_auction":
        action, choices = _auction(view, actions, rng)
    elif kind == "stock_round":
        action, choices = _stock(view, actions, rng)
    else:
        action, choices = _operating(view, actions, best_routes, rng)
    return command_with(action, choices)


Decision = tuple[game_pb2.LegalAction, Choices]


def _fallback(actions: list[game_pb2.LegalAction]) -> Decision:
    """A pass if allowed, else anything but bankruptcy."""
    passed = _pass(actions)
    if passed is not None:
        return passed, Choices()
    others = [a for a in actions if _kind(a) != "declare_bankruptcy"]
    return (others or actions)[0], _minimal(others[0] if others else actions[0])


def _minimal(action: game_pb2.LegalAction) -> Choices:
    if _kind(action) == "sell_shares":
        return Choices(count=action.sell_shares.max_count)
    return Choices()


# ---- the private auction ---------------------------------------------------------------------


def _private_worth(view: View, company: str) -> int:
    """What a private is worth to a player: its face value and a round of its revenue."""
    return view.facts.private_values.get(company, 0) + view.facts.private_revenues.get(company, 0)


def _auction(view: View, actions: list[game_pb2.LegalAction], rng: random.Random) -> Decision:
    """Buys the topmost private, or bids on the one below it that leaves the most of its worth
    (by the player's taste) over the lowest bid, whichever leaves more; within the budget."""
    spent = sum(view.facts.private_values.get(p, 0) for p in view.player().get("privates", []))
    share = PRIVATE_BUDGET * (1 + rng.uniform(-BUDGET_SPREAD, BUDGET_SPREAD))
    budget = int((view.cash + spent) * share) - spent

    def margin(company: str, price: int) -> float:
        worth = _private_worth(view, company) * (1 + rng.uniform(-WORTH_SPREAD, WORTH_SPREAD))
        return worth - price if price <= budget else -1.0

    choices: list[tuple[float, int, Decision]] = []
    for action in _of(actions, "buy_private"):
        bought = action.buy_private
        choices.append((margin(bought.company, bought.price), 1, (action, Choices())))
    for action in _of(actions, "place_bid"):
        bid = action.place_bid
        decision = (action, Choices(price=bid.min_price))
        choices.append((margin(bid.company, bid.min_price), 0, decision))
    best = max(choices, key=lambda c: (c[0], c[1]), default=None)
    if best is not None and best[0] >= 0:
        return best[2]
    return _fallback(actions)


# ---- stock rounds ----------------------------------------------------------------------------


def _stock(view: View, actions: list[game_pb2.LegalAction], rng: random.Random) -> Decision:
    for action in _of(actions, "exchange_private"):
        ir = view.corporation("IR")
        if ir.get("floated") or view.facts.phase_index(view.phase) >= 2:
            return action, Choices()
    if _pass(actions) is None and _of(actions, "sell_shares") and not _buys(actions):
        return _least_harmful_sale(view, actions)
    mine = view.mine()
    buys = _of(actions, "buy_share")
    # Float what we started, and hold what we preside.
    for corporation in mine:
        held = view.shares(corporation["id"])
        if not corporation.get("floated") or (held < 6 and _presidency_at_risk(view, corporation)):
            for action in buys:
                if action.buy_share.corporation == corporation["id"]:
                    return action, Choices()
    room = _room_to_float(view, actions, buys)
    if room is not None:
        return room
    starts = _of(actions, "start_corporation")
    running = [c for c in mine if c.get("floated")]
    if starts and len(mine) == len(running) and len(mine) < 3:
        decision = _start(view, starts, rng)
        if decision is not None:
            return decision
    best = _best_share(view, buys, rng)
    if best is not None:
        return best, Choices()
    return _fallback(actions)


def _room_to_float(
    view: View, actions: list[game_pb2.LegalAction], buys: list[game_pb2.LegalAction]
) -> Decision | None:
    """At the certificate limit with a corporation of ours started but not floated, sells a
    share of someone else's corporation so that the next buy floats ours: a late float's fresh
    treasury buys the train that moves the game on when every running corporation is full."""
    offered = {a.buy_share.corporation for a in buys}
    for corporation in view.mine():
        if corporation.get("floated") or corporation["id"] in offered:
            continue
        price = number(corporation.get("share_price")) or number(corporation.get("par"))
        if view.shares(corporation["id"]) >= 6 or price > view.cash:
            continue
        sales = [
            a
            for a in _of(actions, "sell_shares")
            if view.president(a.sell_shares.corporation) != view.seat
        ]
        if sales:
            sale = max(sales, key=lambda a: a.sell_shares.price)
            return sale, Choices(count=1)
    return None


def _buys(actions: list[game_pb2.LegalAction]) -> bool:
    return any(_kind(a) in ("buy_share", "start_corporation") for a in actions)


def _presidency_at_risk(view: View, corporation: dict[str, Any]) -> bool:
    held = view.shares(corporation["id"])
    others = [
        view.shares(corporation["id"], number(p["seat"]))
        for p in view.document["players"]
        if number(p["seat"]) != view.seat
    ]
    return max(others, default=0) >= held - 1


def _start(view: View, starts: list[game_pb2.LegalAction], rng: random.Random) -> Decision | None:
    order = {c: i + rng.uniform(0, START_SPREAD) for i, c in enumerate(START_PREFERENCE)}
    starts = sorted(starts, key=lambda a: order.get(a.start_corporation.corporation, 99))
    for action in starts:
        pars = sorted(action.start_corporation.par_prices, reverse=True)
        # Enough to buy the five shares that float it, at the highest par that allows it.
        for par in pars:
            if 5 * par <= view.cash:
                return action, Choices(par=par)
    return None


def _best_share(
    view: View, buys: list[game_pb2.LegalAction], rng: random.Random
) -> game_pb2.LegalAction | None:
    scored: list[tuple[float, int, game_pb2.LegalAction]] = []
    for index, action in enumerate(buys):
        option = action.buy_share
        corporation = view.corporation(option.corporation)
        if not corporation.get("floated") or not corporation.get("trains"):
            continue
        if option.price > view.cash:
            continue
        held = view.shares(option.corporation)
        president = number(corporation.get("president"))
        if president != view.seat and held + 1 >= view.shares(option.corporation, president):
            continue  # would take over a corporation someone else runs
        price = number(corporation.get("share_price")) or option.price
        par = number(corporation.get("par")) or price
        trains = [str(t) for t in corporation.get("trains", [])]
        if all(view.rusting_soon(t) for t in trains) and view.facts.phase_index(view.phase) >= 2:
            continue
        score = price / max(par, 1) + 0.2 * len(trains) + (0.3 if president == view.seat else 0)
        score *= 1 + rng.uniform(0, SHARE_SPREAD)
        scored.append((score, -index, action))
    if not scored:
        return None
    return max(scored, key=lambda s: (s[0], s[1]))[2]


def _least_harmful_sale(view: View, actions: list[game_pb2.LegalAction]) -> Decision:
    sales = _of(actions, "sell_shares")
    own = {c["id"] for c in view.mine()}
    sale = min(sales, key=lambda a: (a.sell_shares.corporation in own, a.sell_shares.price))
    return sale, Choices(count=1)


# ---- operating rounds ------------------------------------------------------------------------


def _operating(
    view: View, actions: list[game_pb2.LegalAction], best_routes: BestRoutes, rng: random.Random
) -> Decision:
    round_ = view.round()
    operating = str(round_.get("operating") or "")
    for action in actions:
        match _kind(action):
            case "run_routes":
                routes = best_routes(action.run_routes.corporation)
                return action, Choices(routes=routes)
            case "pay_dividends":
                return action, Choices(kind=_dividend(view, action.pay_dividends))
            case "discard_train":
                discards = _of(actions, "discard_train")
                cheapest = min(
                    discards, key=lambda a: view.facts.train(a.discard_train.train).price
                )
                return cheapest, Choices()
    sale = _private_sale(view, actions, operating)
    if sale is not None:
        return sale
    if (
        _of(actions, "buy_train")
        or _of(actions, "declare_bankruptcy")
        or (_of(actions, "sell_shares"))
    ):
        return _trains(view, actions, operating)
    lays = _of(actions, "lay_tile")
    if lays:
        lay = _best_lay(view, lays, operating, rng)
        if lay is not None:
            return lay, Choices()
    tokens = _of(actions, "place_token")
    if tokens and operating:
        corporation = view.corporation(operating)
        spare = number(corporation.get("cash")) - _train_reserve(view, corporation)
        affordable = [t for t in tokens if t.place_token.cost <= max(spare, 0)]
        if affordable:
            return max(affordable, key=lambda t: _hex_revenue(view, t.place_token.hex)), Choices()
    for action in _of(actions, "exchange_private"):
        if view.facts.phase_index(view.phase) >= 2:
            return action, Choices()
    return _fallback(actions)


def _train_reserve(view: View, corporation: dict[str, Any]) -> int:
    """Yen the corporation should keep for the train it will need."""
    trains = [str(t) for t in corporation.get("trains", [])]
    wanted = not trains or all(view.rusting_soon(t) for t in trains)
    upcoming = view.next_train()
    return upcoming.price if wanted and upcoming is not None else 0


def _dividend(view: View, option: game_pb2.PayDividendsOption) -> game_pb2.DividendKind.ValueType:
    corporation = view.corporation(option.corporation)
    cash = number(corporation.get("cash"))
    reserve = _train_reserve(view, corporation)
    trains = corporation.get("trains", [])
    if len(trains) < min(2, view.train_limit()):
        upcoming = view.next_train()
        reserve = max(reserve, upcoming.price if upcoming else 0)
    if cash < reserve <= cash + option.revenue or (reserve > cash and not trains):
        return WITHHOLD
    diesel = _diesel_price(view, [str(t) for t in trains])
    # In phase 5 only the last stretch: the Diesel waits for the 6, which may be long coming.
    stretch = 4 if view.facts.phase_index(view.phase) > view.facts.phase_index("5") else 2
    if diesel and cash < diesel <= cash + stretch * option.revenue:
        return WITHHOLD  # saving for the Diesel, by exchange when it holds a 4, 5 or 6
    upcoming = view.next_train()
    late = view.facts.phase_index(view.phase) >= view.facts.phase_index("4")
    room = len(trains) < view.train_limit()
    if (
        late
        and upcoming is not None
        and upcoming.price > cash
        and room
        and (
            upcoming.price <= cash + 3 * option.revenue
            or any(view.rusting_soon(str(t)) for t in trains)
        )
    ):
        return WITHHOLD  # saving for the train that pushes the game on (6, then D)
    return PAYOUT


def _diesel_price(view: View, trains: list[str]) -> int:
    """What the corporation would pay for its Diesel, from phase 5 on while it has none: the
    exchange price when it holds a train to give back, else the list price; 0 otherwise."""
    if DIESEL in trains or view.facts.phase_index(view.phase) < view.facts.phase_index("5"):
        return 0
    if any(t in EXCHANGEABLE for t in trains):
        return DIESEL_EXCHANGE_PRICE
    return view.facts.train(DIESEL).price if len(trains) < view.train_limit() else 0


def _trains(view: View, actions: list[game_pb2.LegalAction], operating: str) -> Decision:
    corporation = view.corporation(operating) if operating else {}
    trains = [str(t) for t in corporation.get("trains", [])]
    offers = _of(actions, "buy_train")
    forced = _pass(actions) is None
    own = {c["id"] for c in view.mine()}
    public = [o for o in offers if o.buy_train.source in ("depot", "open_market")]
    if forced:
        # Cheapest first; a train from another corporation of ours costs our cash nothing.
        from_ours = [o for o in offers if o.buy_train.source in own]
        if from_ours and not public:
            pick = min(from_ours, key=lambda o: view.facts.train(o.buy_train.train).price)
            return pick, Choices(price=pick.buy_train.max_price)
        if offers:
            pick = min(
                offers, key=lambda o: (o.buy_train.president_contribution, o.buy_train.min_price)
            )
            return pick, Choices(price=pick.buy_train.min_price)
        sales = _of(actions, "sell_shares")
        if sales:
            return _least_harmful_sale(view, actions)
        return _fallback(actions)
    cash = number(corporation.get("cash"))
    usable = [t for t in trains if not view.rusting_soon(t)]
    exchanges = [
        o
        for o in public
        if o.buy_train.exchange and DIESEL not in trains and o.buy_train.min_price <= cash
    ]
    if exchanges:
        # Give back the smallest train: a 4 rusts at the Diesel anyway.
        pick = min(exchanges, key=lambda o: view.facts.train(o.buy_train.exchange).price)
        return pick, Choices(price=pick.buy_train.min_price)
    if public and len(trains) < view.train_limit():
        # The biggest train it can pay for: trains bought move the phase on.
        best = max(public, key=lambda o: (_train_price(view, o), -o.buy_train.min_price))
        affordable = [o for o in public if o.buy_train.min_price <= cash]
        if affordable:
            pick = max(affordable, key=lambda o: _train_price(view, o))
            if best is pick or pick.buy_train.source == "depot" or not usable:
                return pick, Choices(price=pick.buy_train.min_price)
    return _fallback(actions)


def _train_price(view: View, offer: game_pb2.LegalAction) -> int:
    return view.facts.train(offer.buy_train.train).price


def _private_sale(
    view: View, actions: list[game_pb2.LegalAction], operating: str
) -> Decision | None:
    """Sells our own privates to our corporation at the top price when it can spare the cash."""
    if not operating:
        return None
    corporation = view.corporation(operating)
    cash = number(corporation.get("cash"))
    reserve = _train_reserve(view, corporation)
    for action in _of(actions, "corporation_buy_private"):
        option = action.corporation_buy_private
        if option.owner_seat != view.seat or option.company in KEPT_PRIVATES:
            continue
        price = option.max_price
        if price >= option.min_price and cash - price >= max(reserve, 100):
            return action, Choices(price=price)
    return None


def _hex_revenue(view: View, hex_: str) -> int:
    for tile in view.document.get("board", {}).get("tiles", []):
        if tile["hex"] == hex_:
            return view.facts.tile_revenue.get(str(tile["tile"]), 0)
    return 10 if hex_ in view.facts.centre_hexes else 0


def _distance(a: str, b: str) -> int:
    ac, ar, bc, br = ord(a[0]), int(a[1:]), ord(b[0]), int(b[1:])
    columns = abs(ac - bc)
    return columns + max(0, (abs(ar - br) - columns) // 2)


def _stations(view: View, corporation: str) -> list[str]:
    tokens = view.document.get("board", {}).get("tokens", [])
    return [t["hex"] for t in tokens if corporation in t.get("spots", [])]


def _best_lay(
    view: View, lays: list[game_pb2.LegalAction], operating: str, rng: random.Random
) -> game_pb2.LegalAction | None:
    corporation = view.corporation(operating) if operating else {}
    cash = number(corporation.get("cash"))
    spare = cash - _train_reserve(view, corporation)
    stations = _stations(view, operating) if operating else []
    scored: list[tuple[float, int, game_pb2.LegalAction]] = []
    for index, action in enumerate(lays):
        lay = action.lay_tile
        if lay.company and lay.company != "MF" and view.round().get("ability") is None:
            continue
        if lay.cost > max(spare, 0) or lay.cost > cash // 2:
            continue
        gain = view.facts.tile_revenue.get(lay.tile, 0) - _hex_revenue(view, lay.hex)
        centre = lay.hex in view.facts.centre_hexes
        near = min((_distance(lay.hex, s) for s in stations), default=4)
        if lay.company == "MF" and near > PORT_REACH:
            continue  # the port is kept for a corporation of ours that it will serve
        score = 2.0 * max(gain, 0) + (15 if centre else 0) - 3 * near - lay.cost / 10
        if lay.hex in stations:
            score += 20
        score += rng.uniform(0, LAY_SPREAD)
        scored.append((score, -index, action))
    if not scored:
        return None
    return max(scored, key=lambda s: (s[0], s[1]))[2]


# ---- over the public API -----------------------------------------------------------------------


def heuristic_step(
    listing: game_pb2.ListLegalActionsResponse,
    seats: Collection[int],
    rng: random.Random,
    reads: Reads,
) -> Move | None:
    """The heuristic's step for the first seat `listing` names, if it is one of `seats`
    (None otherwise): `decide` from the state document and the title's data."""
    listed = list(listing.actions)
    if not listed or listed[0].seat not in seats:
        return None
    seat = listed[0].seat
    document = reads.state_document()
    facts = reads.facts(str(document.get("title") or "1889"))
    mine = [a for a in listed if a.seat == seat]
    return seat, decide(document, mine, facts, rng, reads.best_routes)


class HeuristicPlayer(SeatPlayer):
    """Plays the heuristic's moves in one game for the seats it holds (`seats`: seat number ->
    a client acting for it), from `seed` (or a `random.Random` of the caller's); the same
    interface as RandomPlayer."""

    def facts(self, title: str) -> TitleFacts:
        """The title data the bot plays by (TitleService.GetTitle), fetched once."""
        if title not in self.titles:
            self.titles[title] = TitleFacts.from_title(self.reader.title(title))
        return self.titles[title]

    def decide(self, listing: game_pb2.ListLegalActionsResponse, reads: Reads) -> Move | None:
        """The heuristic's move for the seat that must act, if it is ours (`heuristic_step`)."""
        return heuristic_step(listing, self.seats, self.rng, reads)
