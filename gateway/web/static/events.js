// The game's events in words, as a log that grows from the event stream. Events a later
// Undone took back are struck through. The log is also the history's timeline: clicking an
// event shows the board after it (history.js).
import { h, yen } from "./html.js";

const SOURCES = {
  SHARE_SOURCE_INITIAL_OFFERING: "the initial offering",
  initial_offering: "the initial offering",
  open_market: "the open market",
};

function routesText(routes) {
  return (routes || [])
    .map((r) => `${r.train}-train ${(r.hexes || []).join("–")} ${yen(r.revenue)}`)
    .join("; ");
}

// One event as a sentence; `who(seat)` names a seat.
export function describe(event, who) {
  const p = event.payload || {};
  switch (event.type) {
    case "GameCreated":
      return `Game of ${p.title} created for ${(p.players || []).map((x) => x.name).join(", ")}${p.beginner_game ? " (beginner game)" : ""}.`;
    case "PlayerOrderDrawn":
      return `Seat order drawn: ${(p.order || []).map(who).join(", ")}.`;
    case "StartingCapitalDealt":
      return `Each player receives ${yen(p.amount)}.`;
    case "PrivateAuctionStarted":
      return `Private auction: ${(p.offer || []).map((o) => `${o.company} ${yen(o.price)}`).join(", ")}.`;
    case "PrivatesDealt":
      return `Privates dealt: ${(p.deal || []).map((d) => `${d.company} to ${who(d.seat)}`).join(", ")}.`;
    case "PrivateBought":
      return `${who(p.seat)} buys ${p.company} for ${yen(p.price)}.`;
    case "BidPlaced":
      return `${who(p.seat)} bids ${yen(p.price)} on ${p.company}.`;
    case "Passed":
      return `${who(p.seat)} passes.`;
    case "PrivateSold":
      return `${p.company} is sold to ${who(p.seat)} for ${yen(p.price)}.`;
    case "ClosedAuctionStarted":
      return `Closed auction of ${p.company} between ${(p.order || []).map(who).join(", ")}.`;
    case "ClosedAuctionBid":
      return `${who(p.seat)} raises to ${yen(p.price)} on ${p.company}.`;
    case "ClosedAuctionPassed":
      return `${who(p.seat)} leaves the auction of ${p.company}.`;
    case "PrivatePriceReduced":
      return `${p.company} is now offered at ${yen(p.price)}.`;
    case "PrivateRevenuePaid":
      return `Privates pay: ${(p.payments || []).map((x) => `${x.company} ${yen(x.amount)} to ${x.corporation || who(x.seat)}`).join(", ")}.`;
    case "StockRoundStarted":
      return `Stock round ${p.number} begins; priority deal: ${who(p.priority)}.`;
    case "CorporationStarted":
      return `${who(p.seat)} starts ${p.corporation} at par ${yen(p.par)}.`;
    case "ShareBought":
      return `${who(p.seat)} buys a ${p.corporation} share from ${SOURCES[p.source] || p.source} for ${yen(p.price)}.`;
    case "SharesSold":
      return `${who(p.seat)} sells ${p.count} ${p.corporation} share${p.count === 1 ? "" : "s"} at ${yen(p.price)}.`;
    case "PresidencyChanged":
      return `${who(p.seat)} becomes president of ${p.corporation}.`;
    case "CorporationFloated":
      return `${p.corporation} floats with ${yen(p.capital)}.`;
    case "TurnEnded":
      return `${who(p.seat)} ends the turn.`;
    case "SoldOutPriceRaised":
      return `${p.corporation} is sold out: its price rises.`;
    case "StockRoundEnded":
      return "The stock round ends.";
    case "OperatingRoundStarted":
      return `Operating round ${p.number} of ${p.of} begins.`;
    case "CorporationOperates":
      return `${p.corporation} operates.`;
    case "HomeTokenPlaced":
      return `${p.corporation} places its home token in ${p.hex}.`;
    case "TileLaid":
      return `${p.corporation} lays tile ${p.tile} in ${p.hex}, rotation ${p.rotation}${p.cost ? ` (terrain ${yen(p.cost)})` : ""}${p.ability ? ` with ${p.ability}` : ""}.`;
    case "TokenPlaced":
      return `${p.corporation} places a token in ${p.hex} for ${yen(p.cost)}.`;
    case "StepSkipped":
      return `${p.corporation} skips the ${p.step} step.`;
    case "TrainsRan":
      return `${p.corporation} runs for ${yen(p.revenue)}: ${routesText(p.routes) || "no routes"}.`;
    case "DividendsPaid":
      return `${p.corporation} pays ${yen(p.per_share)} a share (${yen(p.revenue)}).`;
    case "EarningsWithheld":
      return `${p.corporation} withholds ${yen(p.amount)}.`;
    case "TrainBought":
      return `${p.corporation} buys a ${p.train}-train from ${p.source} for ${yen(p.price)}${p.exchanged ? `, giving back a ${p.exchanged}` : ""}.`;
    case "PhaseChanged":
      return `Phase ${p.phase} begins.`;
    case "TrainsRusted":
      return `Every ${p.train}-train rusts.`;
    case "PrivatesClosed":
      return `Privates close: ${(p.companies || []).join(", ")}.`;
    case "TrainsOverLimit":
      return `Over the train limit: ${(p.corporations || []).join(", ")}.`;
    case "TrainDiscarded":
      return `${p.corporation} discards a ${p.train}-train.`;
    case "PrivateSoldToCorporation":
      return `${who(p.seat)} sells ${p.company} to ${p.corporation} for ${yen(p.price)}.`;
    case "AbilityOffered":
      return `${who(p.seat)} may use ${p.company}'s ability.`;
    case "PrivateExchanged":
      return `${who(p.seat)} exchanges ${p.company} for a ${p.corporation} share.`;
    case "AbilityDeclined":
      return `${who(p.seat)} declines ${p.company}'s ability.`;
    case "OperatingTurnEnded":
      return `${p.corporation} ends its turn.`;
    case "OperatingRoundEnded":
      return `Operating round ${p.number} ends.`;
    case "BankBroken":
      return "The bank breaks.";
    case "PlayerBankrupt":
      return `${who(p.seat)} goes bankrupt.`;
    case "Undone":
      return `${who(p.seat)} takes back events ${p.first}–${p.last}.`;
    case "GameEnded":
      return `The game ends (${p.reason}): ${(p.net_worths || []).map((n) => `${who(n.seat)} ${yen(n.net_worth)}`).join(", ")}.`;
    default:
      return event.type;
  }
}

export class EventLog {
  constructor(list) {
    this.list = list;
    this.items = new Map(); // version -> <li>
  }

  clear() {
    this.list.replaceChildren();
    this.items.clear();
  }

  add(event, who) {
    const version = Number(event.version);
    const item = h(
      "li",
      { dataset: { version, type: event.type }, title: "Show the board after this event" },
      h("span", { class: "version" }, version),
      " ",
      describe(event, who),
    );
    this.items.set(version, item);
    if (event.type === "Undone") {
      const { first, last } = event.payload || {};
      for (let v = Number(first); v <= Number(last); v += 1) this.items.get(v)?.classList.add("undone");
    }
    const atEnd = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 40;
    this.list.append(item);
    if (atEnd) this.list.scrollTop = this.list.scrollHeight;
  }
}
